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

import java.util.regex.Pattern

import org.apache.rocketmq.common.MixAll
import org.apache.rocketmq.common.topic.TopicValidator

/** What a read subscribes to: topics by name (option `topic`), or by pattern (`topicPattern`). */
private[rocketmq] sealed trait RocketMQTopicSelection {

  /** Whether `topic` (as the user names it: without a namespace) is read. */
  def admits(topic: String): Boolean

  /** For logs and errors. */
  def describe: String
}

private[rocketmq] object RocketMQTopicSelection {

  final case class Named(topics: Seq[String]) extends RocketMQTopicSelection {
    override def admits(topic: String): Boolean = topics.contains(topic)
    override def describe: String = topics.mkString(",")
  }

  /** Topics whose whole name matches `pattern`; RocketMQ's own topics never do. */
  final case class Matching(pattern: Pattern) extends RocketMQTopicSelection {
    override def admits(topic: String): Boolean =
      !internal(topic) && pattern.matcher(topic).matches()
    override def describe: String = s"topics matching /${pattern.pattern}/"
  }

  /**
   * RocketMQ's system topics (transactions, schedules, traces, `TBW102`...), and the retry and
   * dead-letter topics of consumer groups: topics a broker keeps for itself or for one group.
   */
  def internal(topic: String): Boolean =
    TopicValidator.isSystemTopic(topic) || topic.startsWith(MixAll.RETRY_GROUP_TOPIC_PREFIX) ||
      topic.startsWith(MixAll.DLQ_GROUP_TOPIC_PREFIX)
}
