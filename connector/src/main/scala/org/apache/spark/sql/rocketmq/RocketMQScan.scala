package org.apache.spark.sql.rocketmq

import org.apache.spark.sql.connector.metric.CustomMetric
import org.apache.spark.sql.connector.read.{Batch, Scan}
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream
import org.apache.spark.sql.types.StructType

/** A read of RocketMQ topics, bounded or streaming; options are checked here, before any broker request. */
private[rocketmq] class RocketMQScan(options: RocketMQOptions) extends Scan {

  override def readSchema(): StructType = RocketMQSourceSchema(options(RocketMQOptions.IncludeExtraColumns))

  override def description(): String = s"RocketMQScan[topic=${options.rawValue(RocketMQOptions.Topic).getOrElse("")}]"

  override def supportedCustomMetrics(): Array[CustomMetric] = RocketMQCustomMetrics.supported

  override def toBatch: Batch = {
    options.validateForBatchRead()
    new RocketMQBatch(options)
  }

  override def toMicroBatchStream(checkpointLocation: String): MicroBatchStream = {
    options.validateForStream()
    new RocketMQMicroBatchStream(options, checkpointLocation)
  }
}
