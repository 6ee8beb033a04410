package org.apache.spark.sql.rocketmq

import org.apache.spark.sql.connector.read.{Scan, ScanBuilder}

/** Builds the scan; no filters or columns are pushed down (every message is read whole). */
private[rocketmq] class RocketMQScanBuilder(options: RocketMQOptions) extends ScanBuilder {
  override def build(): Scan = new RocketMQScan(options)
}
