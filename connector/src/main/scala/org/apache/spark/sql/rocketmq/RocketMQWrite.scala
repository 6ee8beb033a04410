package org.apache.spark.sql.rocketmq

import org.apache.spark.sql.connector.metric.CustomMetric
import org.apache.spark.sql.connector.write.{BatchWrite, LogicalWriteInfo, SupportsTruncate, Write, WriteBuilder}
import org.apache.spark.sql.connector.write.streaming.StreamingWrite
import org.apache.spark.sql.internal.connector.SupportsStreamingUpdateAsAppend
import org.apache.spark.sql.types.StructType

/** What a write task needs: connection, producer and send settings. */
private[rocketmq] final case class RocketMQWriteSettings(
    nameServer: String,
    topic: Option[String],
    sendTimeoutMs: Long,
    maxInFlightMessages: Int,
    producerGroup: String = RocketMQClients.WriterGroup,
    sendRetries: Int = 2,
    compressionThreshold: Int = 4096,
    deliveryDelayMs: Option[Long] = None)

private[rocketmq] object RocketMQWriteSettings {
  def apply(options: RocketMQOptions): RocketMQWriteSettings = RocketMQWriteSettings(
    options.nameServer, options.topicToWrite, options.sendTimeoutMs, options.maxInFlightMessages,
    options.producerGroup, options.sendRetries, options.compressionThreshold, options.deliveryDelayMs)

  /** Checks the options and the columns, and that a topic named by the option exists. */
  def forWrite(options: RocketMQOptions, schema: StructType): (RocketMQWriteSettings, RocketMQWriteColumns) = {
    options.validateForWrite()
    val settings = RocketMQWriteSettings(options)
    val columns = RocketMQWriteColumns.resolve(schema, settings.topic)
    settings.topic.foreach(topic => RocketMQOffsetReader.requireTopic(options, topic))
    (settings, columns)
  }
}

/**
 * Builds writes for DataFrames and streaming queries. Every output mode sends each row Spark emits
 * as one message: in complete mode that is the whole result each batch (a topic cannot be
 * truncated), in update mode the changed rows, as the Kafka sink does.
 */
private[rocketmq] class RocketMQWriteBuilder(options: RocketMQOptions, info: LogicalWriteInfo)
  extends WriteBuilder with SupportsTruncate with SupportsStreamingUpdateAsAppend {

  override def truncate(): WriteBuilder = this

  override def build(): Write = {
    val (settings, columns) = RocketMQWriteSettings.forWrite(options, info.schema())
    new RocketMQWrite(settings, columns)
  }
}

/** A write to RocketMQ: at-least-once, each task committing only when all its sends are acknowledged. */
private[rocketmq] class RocketMQWrite(settings: RocketMQWriteSettings, columns: RocketMQWriteColumns) extends Write {

  override def description(): String = s"RocketMQWrite[topic=${settings.topic.getOrElse("(from column topic)")}]"

  override def toBatch: BatchWrite = new RocketMQBatchWrite(settings, columns)

  override def toStreaming: StreamingWrite = new RocketMQStreamingWrite(settings, columns)

  override def supportedCustomMetrics(): Array[CustomMetric] = RocketMQCustomMetrics.writeMetrics
}
