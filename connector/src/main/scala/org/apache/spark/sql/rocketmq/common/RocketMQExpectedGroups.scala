/*
 * Copyright the rocketmq-spark authors.
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at
 *
 *     https://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */

package org.apache.spark.sql.rocketmq.common

/**
 * The broker groups a read expects to serve its topics (option `expectedBrokerGroups`). The name
 * server forgets a broker group the moment its last broker is gone, so a group wholly down leaves
 * no trace in a topic's route: only the user can say it should be there. A read whose topic is not
 * served by them waits for them (`retryTimeoutMs`), then fails naming what is missing.
 */
private[rocketmq] sealed trait RocketMQExpectedGroups {
  /**
   * Whether broker groups `served` (those with readable queues of the topic) are all that is
   * expected.
   */
  def satisfiedBy(served: Set[String]): Boolean

  /** What is missing from `served`, for an error. */
  def describeMissing(served: Set[String]): String

  def render: String
}

private[rocketmq] object RocketMQExpectedGroups {

  /** At least `count` broker groups, whichever they are. */
  final case class AtLeast(count: Int) extends RocketMQExpectedGroups {
    override def satisfiedBy(served: Set[String]): Boolean = served.size >= count
    override def describeMissing(served: Set[String]): String =
      s"${count - served.size} more broker group(s), $count in all,"
    override def render: String = count.toString
  }

  /** These broker groups, by name (others may serve the topic too). */
  final case class Named(groups: Seq[String]) extends RocketMQExpectedGroups {
    override def satisfiedBy(served: Set[String]): Boolean = groups.forall(served.contains)
    override def describeMissing(served: Set[String]): String =
      groups.filterNot(served.contains).map(g => s"'$g'").mkString("broker group(s) ", ", ", "")
    override def render: String = groups.mkString(",")
  }
}
