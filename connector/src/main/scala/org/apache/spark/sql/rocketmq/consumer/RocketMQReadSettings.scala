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

import org.apache.spark.sql.rocketmq.client.RocketMQEndpoint
import org.apache.spark.sql.rocketmq.common.{RocketMQConnection, RocketMQRateCap}
import org.apache.spark.sql.rocketmq.errors.RocketMQErrors
import org.apache.spark.sql.rocketmq.options.RocketMQOptions
import org.apache.spark.sql.rocketmq.options.RocketMQOptions._

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
    includeExtraColumns: Boolean,
    throughProxy: Boolean = false,
    rateCap: RocketMQRateCap = RocketMQRateCap.None,
    compactedTopics: Set[String] = Set.empty) {

  /** With a tag or SQL filter the broker skips offsets: a gap is then normal, not data loss. */
  def filtered: Boolean = subExpression.trim != "*" || sqlFilter.isDefined

  /**
   * Whether offsets of `topic` may be missing from a complete read: skipped by a filter, or
   * compacted away (the broker keeps each key's latest message).
   */
  def gapsNormal(topic: String): Boolean = filtered || compactedTopics.contains(topic)

  /**
   * These settings for reading queues of `compacted` topics too; refused with a SQL filter, which
   * brokers do not apply to such topics.
   */
  def reading(compacted: Set[String]): RocketMQReadSettings = {
    if (sqlFilter.isDefined && compacted.nonEmpty) {
      throw RocketMQErrors.sqlFilterOnCompactedTopic(compacted.toSeq.sorted)
    }
    if (compacted == compactedTopics) this else copy(compactedTopics = compacted)
  }

  def selector: MessageSelector =
    sqlFilter.map(MessageSelector.bySql).getOrElse(MessageSelector.byTag(subExpression))

  /**
   * These settings as the tasks of a plan get them: marked `throughProxy` where planning found the
   * endpoint to be a RocketMQ 5 proxy. A proxy drops the answer to a request, without a word, when
   * the connection already holds answers the client has not read (Apache's proxy writes no response
   * to a channel that is not writable, past 64 KiB unread): a pull answer is up to 256 KiB, so
   * through a proxy each task pulls over connections of its own, one pull under way on each (at
   * most [[RocketMQConsumerPool.ProxyConnections]]), and no answer waits behind another. With a
   * rate cap, each of the plan's `tasks` gets its part (see [[RocketMQRateCap.perPlannedTask]]).
   */
  def asPlanned(tasks: Int, allAtOnce: Boolean): RocketMQReadSettings =
    copy(throughProxy = RocketMQEndpoint.knownProxy(connection),
      rateCap = rateCap.perPlannedTask(tasks, allAtOnce))

  /**
   * Pulls a task keeps under way: one with a filter (the next offset is unknowable); through a
   * proxy, one per connection of the task's own.
   */
  def effectivePullsInFlight: Int =
    if (filtered) 1
    else if (throughProxy) math.min(pullsInFlight, RocketMQConsumerPool.ProxyConnections)
    else pullsInFlight
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
    includeExtraColumns = options(IncludeExtraColumns),
    rateCap = options.rateCap)
}
