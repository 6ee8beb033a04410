package org.apache.spark.sql.rocketmq

import org.apache.spark.sql.connector.metric.{CustomMetric, CustomSumMetric, CustomTaskMetric}

/** Offsets a read skipped because they could no longer be read (only with failOnDataLoss=false). */
private[rocketmq] class RocketMQLostOffsetsMetric extends CustomSumMetric {
  override def name(): String = RocketMQCustomMetrics.LostOffsets
  override def description(): String = "offsets lost and skipped (failOnDataLoss=false)"
}

private[rocketmq] object RocketMQCustomMetrics {
  val LostOffsets = "lostOffsets"

  def supported: Array[CustomMetric] = Array(new RocketMQLostOffsetsMetric)

  def taskMetric(metricName: String, metricValue: Long): CustomTaskMetric = new CustomTaskMetric {
    override def name(): String = metricName
    override def value(): Long = metricValue
  }
}
