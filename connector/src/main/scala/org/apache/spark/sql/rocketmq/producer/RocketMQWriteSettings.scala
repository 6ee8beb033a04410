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

package org.apache.spark.sql.rocketmq.producer

import org.apache.spark.sql.rocketmq.common.{RocketMQConnection, RocketMQRateCap}
import org.apache.spark.sql.rocketmq.options.{DeliveryGuarantee, RocketMQOptions}
import org.apache.spark.sql.rocketmq.options.RocketMQOptions._

/**
 * What a write task needs: connection, producer and send settings, taken from the options on the
 * driver and shipped with the writer factory. Nothing here has a default of its own: every value
 * comes from the option declarations, but `transaction`, which an exactly-once write's plan sets,
 * and `sendEachAtOnce`, which a real-time or continuous query's sink sets (see
 * [[RocketMQMessageSender]]).
 */
private[rocketmq] final case class RocketMQWriteSettings(
    connection: RocketMQConnection,
    topic: Option[String],
    producerGroup: String,
    sendTimeoutMs: Long,
    sendRetries: Option[Int],
    retryTimeoutMs: Long,
    maxInFlightMessages: Int,
    maxInFlightBytes: Long,
    sendBatchMessages: Int,
    sendBatchBytes: Long,
    compressionThreshold: Int,
    deliveryDelayMs: Option[Long],
    deliveryGuarantee: DeliveryGuarantee,
    transactionTimeoutMs: Long,
    statedBrokerChecks: RocketMQStatedChecks = RocketMQStatedChecks(None, None),
    transaction: Option[RocketMQTransactionScope] = None,
    throughProxy: Boolean = false,
    sendEachAtOnce: Boolean = false,
    rateCap: RocketMQRateCap = RocketMQRateCap.None,
    traceTopic: Option[String] = None) {

  /**
   * Messages a task keeps unacknowledged. Through a RocketMQ 5 proxy at most
   * [[RocketMQWriteSettings.ProxyInFlight]], over a connection of the task's own: Apache's proxy
   * writes no answer to a connection holding more than 64 KiB the client has not read, and a send
   * whose answer is lost is sent again, storing copies (docs/managed-rocketmq.md).
   */
  def effectiveMaxInFlightMessages: Int =
    if (throughProxy) math.min(maxInFlightMessages, RocketMQWriteSettings.ProxyInFlight)
    else maxInFlightMessages

  /**
   * These settings as the tasks of a write of `partitions` get them: a rate cap shared by those
   * that run at once (all of them under real-time mode and continuous processing, where each runs
   * the whole batch; else at most one a core).
   */
  def forTasks(partitions: Int): RocketMQWriteSettings =
    copy(rateCap = rateCap.perPlannedTask(partitions, allAtOnce = sendEachAtOnce))

}

private[rocketmq] object RocketMQWriteSettings {

  /**
   * Messages a task keeps unacknowledged through a RocketMQ 5 proxy: their answers stay well under
   * 64 KiB.
   */
  val ProxyInFlight = 64
  def apply(options: RocketMQOptions): RocketMQWriteSettings = RocketMQWriteSettings(
    connection = options.connection,
    topic = options.topicToWrite,
    producerGroup = options(ProducerGroup),
    sendTimeoutMs = options(SendTimeoutMs),
    sendRetries = options(SendRetries),
    retryTimeoutMs = options(RetryTimeoutMs),
    maxInFlightMessages = options(MaxInFlightMessages),
    maxInFlightBytes = options(MaxInFlightBytes),
    sendBatchMessages = options(SendBatchMessages),
    sendBatchBytes = options(SendBatchBytes),
    compressionThreshold = options(CompressionThreshold),
    deliveryDelayMs = options(DeliveryDelayMs),
    deliveryGuarantee = options(DeliveryGuaranteeOption),
    transactionTimeoutMs = options(TransactionTimeoutOption),
    statedBrokerChecks = RocketMQStatedChecks(options(BrokerCheckInterval),
      options(BrokerCheckMax)),
    rateCap = options.rateCap,
    traceTopic = if (options(TraceEnabled)) Some(options(TraceTopic)) else None)
}
