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

import java.nio.charset.StandardCharsets.UTF_8
import java.util.UUID

import org.apache.spark.sql.connector.read.streaming.PartitionOffset
import org.apache.spark.sql.execution.streaming.continuous.RateStreamPartitionOffset
import org.apache.spark.sql.rocketmq.common.RocketMQQueue

/**
 * Where the task of a read with no end (a real-time batch, continuous processing) stopped: the next
 * offset of the queue it reads, and which queue that is. It travels to the driver in a task result
 * or an RPC, which Spark reads with its own class loader: over Spark Connect, a connector attached
 * to the session as an artifact is not there, and a class of ours would fail to load
 * (ClassNotFoundException). So it rides in one of Spark's own partition offsets, the continuous
 * rate source's (partition, value, time), which carries numbers only: the queue id, the next
 * offset, and a 64-bit fingerprint of the queue's topic, broker group and id ([[QueueName]]), which
 * the driver resolves among the queues it planned ([[RocketMQOpenPlan]]).
 */
private[rocketmq] object RocketMQQueueOffset {

  /** A queue as a task's offset names it: its id and the fingerprint of its whole name. */
  final case class QueueName(queueId: Int, fingerprint: Long)

  object QueueName {
    def of(queue: RocketMQQueue): QueueName = QueueName(queue.queueId, fingerprint(queue))
  }

  def apply(queue: RocketMQQueue, next: Long): PartitionOffset =
    RateStreamPartitionOffset(queue.queueId, next, fingerprint(queue))

  def unapply(offset: PartitionOffset): Option[(QueueName, Long)] = offset match {
    case RateStreamPartitionOffset(queueId, next, fingerprint) =>
      Some((QueueName(queueId, fingerprint), next))
    case _ => None
  }

  /**
   * The same on every JVM and build (a name-based UUID of the UTF-8 name, its first half): a driver
   * and its executors agree on it, and so do two releases of the connector.
   */
  def fingerprint(queue: RocketMQQueue): Long =
    UUID.nameUUIDFromBytes(
      s"${queue.topic}\u0000${queue.brokerName}\u0000${queue.queueId}".getBytes(UTF_8))
      .getMostSignificantBits
}
