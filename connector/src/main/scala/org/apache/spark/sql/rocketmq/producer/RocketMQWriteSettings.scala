package org.apache.spark.sql.rocketmq.producer

import org.apache.spark.sql.rocketmq.RocketMQOptions
import org.apache.spark.sql.rocketmq.RocketMQOptions._

/**
 * What a write task needs: connection, producer and send settings, taken from the options on the
 * driver and shipped with the writer factory. Nothing here has a default of its own: every value
 * comes from the option declarations.
 */
private[rocketmq] final case class RocketMQWriteSettings(
    nameServer: String,
    topic: Option[String],
    producerGroup: String,
    sendTimeoutMs: Long,
    sendRetries: Int,
    maxInFlightMessages: Int,
    maxInFlightBytes: Long,
    compressionThreshold: Int,
    deliveryDelayMs: Option[Long])

private[rocketmq] object RocketMQWriteSettings {
  def apply(options: RocketMQOptions): RocketMQWriteSettings = RocketMQWriteSettings(
    nameServer = options(NameServer),
    topic = options.topicToWrite,
    producerGroup = options(ProducerGroup),
    sendTimeoutMs = options(SendTimeoutMs),
    sendRetries = options(SendRetries),
    maxInFlightMessages = options(MaxInFlightMessages),
    maxInFlightBytes = options(MaxInFlightBytes),
    compressionThreshold = options(CompressionThreshold),
    deliveryDelayMs = options(DeliveryDelayMs))
}
