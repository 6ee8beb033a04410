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

import org.apache.rocketmq.common.message.MessageQueue

/**
 * One RocketMQ message queue: the unit of ordering and of offsets. A queue is named by its topic,
 * the broker that hosts it and its id on that broker; offsets are positions in its consume queue.
 */
private[rocketmq] final case class RocketMQQueue(topic: String, brokerName: String, queueId: Int) {
  /** The queue as the brokers name it (under the connection's namespace, if any). */
  def toMessageQueue(connection: RocketMQConnection): MessageQueue =
    new MessageQueue(connection.onBroker(topic), brokerName, queueId)
  override def toString: String = s"$topic/$brokerName/$queueId"
}

private[rocketmq] object RocketMQQueue {
  def apply(mq: MessageQueue): RocketMQQueue =
    RocketMQQueue(mq.getTopic, mq.getBrokerName, mq.getQueueId)

  implicit val ordering: Ordering[RocketMQQueue] =
    Ordering.by((q: RocketMQQueue) => (q.topic, q.brokerName, q.queueId))
}

/**
 * The offsets a queue holds now: `min` is the oldest stored message, `max` the next one to be
 * written. `fromReplica`: a replica reported them while its group has no master; a replica may
 * trail its master, so its `max` below where a stream already is means "nothing new yet", never
 * "offsets went back".
 */
private[rocketmq] final case class RocketMQQueueRange(min: Long, max: Long,
    fromReplica: Boolean = false)

/** Offsets `[from, until)` of one queue, to be read. */
private[rocketmq] final case class RocketMQOffsetRange(queue: RocketMQQueue, from: Long,
    until: Long) {
  def size: Long = until - from
}
