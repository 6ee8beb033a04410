/*
 * Copyright the rocketmq-spark authors.
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at
 *
 *     https://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */

package org.apache.spark.sql.rocketmq.consumer

import org.apache.rocketmq.client.consumer.MessageSelector

import org.apache.spark.sql.rocketmq.{RocketMQConnection, RocketMQOptions}
import org.apache.spark.sql.rocketmq.RocketMQOptions._

/**
 * What an executor needs to pull one queue range, taken from the options on the driver and shipped
 * with each input partition. Nothing here has a default of its own: every value comes from the
 * option declarations. Nothing secret is in `toString`.
 */
private[rocketmq] final case class RocketMQReadSettings(
    connection: RocketMQConnection,
    subExpression: String,
    sqlFilter: Option[String],
    pullTimeoutMs: Long,
    pullBatchSize: Int,
    pullsInFlight: Int,
    readAheadBytes: Long,
    retryTimeoutMs: Long,
    failOnDataLoss: Boolean,
    group: String,
    includeExtraColumns: Boolean) {

  /** With a tag or SQL filter the broker skips offsets: a gap is then normal, not data loss. */
  def filtered: Boolean = subExpression.trim != "*" || sqlFilter.isDefined

  def selector: MessageSelector = sqlFilter.map(MessageSelector.bySql).getOrElse(MessageSelector.byTag(subExpression))
}

private[rocketmq] object RocketMQReadSettings {

  def apply(options: RocketMQOptions): RocketMQReadSettings = RocketMQReadSettings(
    connection = options.connection,
    subExpression = options(SubExpression),
    sqlFilter = options(SqlFilter),
    pullTimeoutMs = options(PullTimeoutMs),
    pullBatchSize = options(PullBatchSize),
    pullsInFlight = options(PullsInFlight),
    readAheadBytes = options(ReadAheadBytes),
    retryTimeoutMs = options(RetryTimeoutMs),
    failOnDataLoss = options(FailOnDataLoss),
    group = options(ConsumerGroup).getOrElse(RocketMQConsumerPool.readerGroupOfThisApplication),
    includeExtraColumns = options(IncludeExtraColumns))
}
