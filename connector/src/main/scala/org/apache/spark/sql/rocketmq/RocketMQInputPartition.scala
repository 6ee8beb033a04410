package org.apache.spark.sql.rocketmq

import org.apache.spark.sql.connector.read.InputPartition
import org.apache.spark.sql.rocketmq.consumer.RocketMQReadSettings

/**
 * Offsets `[fromOffset, untilOffset)` of one queue, read by one task with `settings`. A queue read
 * whole prefers the same executor in every batch (see [[RocketMQOffsetRangeCalculator]]), so that
 * executor's cached consumer and open connections are reused.
 */
private[rocketmq] final case class RocketMQInputPartition(
    queue: RocketMQQueue,
    fromOffset: Long,
    untilOffset: Long,
    settings: RocketMQReadSettings,
    preferredLocation: Option[String] = None)
  extends InputPartition {
  override def preferredLocations(): Array[String] = preferredLocation.toArray
}
