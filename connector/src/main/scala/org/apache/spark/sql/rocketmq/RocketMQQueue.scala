package org.apache.spark.sql.rocketmq

import org.apache.rocketmq.common.message.MessageQueue

/**
 * One RocketMQ message queue: the unit of ordering and of offsets. A queue is named by its topic,
 * the broker that hosts it and its id on that broker; offsets are positions in its consume queue.
 */
private[rocketmq] final case class RocketMQQueue(topic: String, brokerName: String, queueId: Int) {
  def toMessageQueue: MessageQueue = new MessageQueue(topic, brokerName, queueId)
  override def toString: String = s"$topic/$brokerName/$queueId"
}

private[rocketmq] object RocketMQQueue {
  def apply(mq: MessageQueue): RocketMQQueue = RocketMQQueue(mq.getTopic, mq.getBrokerName, mq.getQueueId)

  implicit val ordering: Ordering[RocketMQQueue] =
    Ordering.by((q: RocketMQQueue) => (q.topic, q.brokerName, q.queueId))
}

/** The offsets a queue holds now: `min` is the oldest stored message, `max` the next one to be written. */
private[rocketmq] final case class RocketMQQueueRange(min: Long, max: Long)

/** Offsets `[from, until)` of one queue, to be read. */
private[rocketmq] final case class RocketMQOffsetRange(queue: RocketMQQueue, from: Long, until: Long) {
  def size: Long = until - from
}
