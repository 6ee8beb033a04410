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

package org.apache.spark.sql.rocketmq

import org.apache.spark.sql.connector.read.streaming.PartitionOffset
import org.apache.spark.sql.rocketmq.RocketMQQueueOffset.QueueName
import org.apache.spark.sql.rocketmq.common.RocketMQQueue

/**
 * The queues a read with no end reads (one real-time batch, or continuous processing until it plans
 * again), each from its start offset, and where such a read ends: its starts moved on by where each
 * task stopped. A task's offset names its queue ([[RocketMQQueueOffset]]), so the end depends
 * neither on the order of the plan's partitions nor on which plan is the running one: an offset of
 * a queue this plan does not read fails loudly, never moves another queue on. Immutable: a stream
 * swaps whole plans.
 */
private[rocketmq] final case class RocketMQOpenPlan(from: Map[RocketMQQueue, Long]) {

  /** The order of the plan's input partitions. */
  val queues: IndexedSeq[RocketMQQueue] = from.keys.toIndexedSeq.sorted

  private val byName: Map[QueueName, RocketMQQueue] = {
    val named = queues.groupBy(QueueName.of)
    named.collectFirst { case (name, qs) if qs.size > 1 => name -> qs }.foreach { case (name, qs) =>
      // Two names with one 64-bit fingerprint: never seen; refused rather than mixed up.
      throw new IllegalStateException(
        s"Queues ${qs.mkString(", ")} share the fingerprint ${name.fingerprint}")
    }
    named.map { case (name, qs) => name -> qs.head }
  }

  /**
   * The read's end: `from`, with each queue a task reported moved on to where that task stopped.
   */
  def end(offsets: Array[PartitionOffset]): RocketMQSourceOffset =
    RocketMQSourceOffset(from ++ offsets.map {
      case RocketMQQueueOffset(name, next) =>
        byName.getOrElse(name,
          throw new IllegalStateException(
            s"A task reported offset $next of queue id ${name.queueId} (fingerprint " +
              s"${name.fingerprint}), not one of " +
              s"the ${queues.size} queues planned: ${queues.mkString(", ")}")) -> next
      case other =>
        throw new IllegalArgumentException(s"Not the offset of a RocketMQ queue: $other")
    })
}
