package org.apache.spark.sql.rocketmq

import org.apache.spark.sql.connector.write.{LogicalWriteInfo, SupportsTruncate, Write, WriteBuilder}
import org.apache.spark.sql.internal.connector.SupportsStreamingUpdateAsAppend

/**
 * Builds the write of a streaming query. Every output mode sends each row Spark emits as one
 * message: in complete mode that is the whole result each batch (a topic cannot be truncated), in
 * update mode the changed rows, as the Kafka sink does.
 */
private[rocketmq] class RocketMQWriteBuilder(options: RocketMQOptions, info: LogicalWriteInfo)
  extends WriteBuilder with SupportsTruncate with SupportsStreamingUpdateAsAppend {

  override def truncate(): WriteBuilder = this

  override def build(): Write = RocketMQWrite.plan(options, info.schema())
}
