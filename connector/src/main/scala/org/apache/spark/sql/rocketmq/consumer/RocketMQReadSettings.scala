package org.apache.spark.sql.rocketmq.consumer

import org.apache.rocketmq.client.consumer.MessageSelector

import org.apache.spark.sql.rocketmq.RocketMQOptions
import org.apache.spark.sql.rocketmq.RocketMQOptions._

/**
 * What an executor needs to pull one queue range, taken from the options on the driver and shipped
 * with each input partition. Nothing here has a default of its own: every value comes from the
 * option declarations. Nothing secret is in `toString`.
 */
private[rocketmq] final case class RocketMQReadSettings(
    nameServer: String,
    subExpression: String,
    sqlFilter: Option[String],
    pullTimeoutMs: Long,
    pullBatchSize: Int,
    failOnDataLoss: Boolean,
    group: String,
    includeExtraColumns: Boolean) {

  /** With a tag or SQL filter the broker skips offsets: a gap is then normal, not data loss. */
  def filtered: Boolean = subExpression.trim != "*" || sqlFilter.isDefined

  def selector: MessageSelector = sqlFilter.map(MessageSelector.bySql).getOrElse(MessageSelector.byTag(subExpression))
}

private[rocketmq] object RocketMQReadSettings {

  def apply(options: RocketMQOptions): RocketMQReadSettings = RocketMQReadSettings(
    nameServer = options(NameServer),
    subExpression = options(SubExpression),
    sqlFilter = options(SqlFilter),
    pullTimeoutMs = options(PullTimeoutMs),
    pullBatchSize = options(PullBatchSize),
    failOnDataLoss = options(FailOnDataLoss),
    group = options(ConsumerGroup).getOrElse(RocketMQConsumerPool.ReaderGroup),
    includeExtraColumns = options(IncludeExtraColumns))
}
