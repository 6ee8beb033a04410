package org.apache.spark.sql.rocketmq

import org.apache.spark.sql.connector.read.{Batch, Scan}
import org.apache.spark.sql.types.StructType

/** A read of RocketMQ topics; options are checked here, before any job or broker request. */
private[rocketmq] class RocketMQScan(options: RocketMQOptions) extends Scan {

  override def readSchema(): StructType = RocketMQSourceSchema.schema

  override def description(): String = s"RocketMQScan[topic=${options.get(RocketMQOptions.Topic).getOrElse("")}]"

  override def toBatch: Batch = {
    options.validateForBatchRead()
    new RocketMQBatch(options)
  }
}
