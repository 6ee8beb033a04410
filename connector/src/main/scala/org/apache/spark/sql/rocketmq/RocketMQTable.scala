package org.apache.spark.sql.rocketmq

import java.util

import org.apache.spark.sql.connector.catalog.{SupportsRead, TableCapability}
import org.apache.spark.sql.connector.read.ScanBuilder
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/** RocketMQ topics seen as a table of messages with the fixed [[RocketMQSourceSchema]]. */
private[rocketmq] class RocketMQTable(options: RocketMQOptions) extends SupportsRead {

  override def name(): String = "rocketmq"

  override def schema(): StructType = RocketMQSourceSchema(options.includeExtraColumns)

  override def capabilities(): util.Set[TableCapability] = util.EnumSet.of(TableCapability.BATCH_READ, TableCapability.MICRO_BATCH_READ)

  override def newScanBuilder(scanOptions: CaseInsensitiveStringMap): ScanBuilder = new RocketMQScanBuilder(options)
}
