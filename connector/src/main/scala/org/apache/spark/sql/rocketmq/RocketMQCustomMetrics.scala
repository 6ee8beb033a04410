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

package org.apache.spark.sql.rocketmq

import org.apache.spark.sql.connector.metric.{CustomMetric, CustomSumMetric, CustomTaskMetric}

/**
 * A per-task count, summed over tasks. Spark instantiates a metric by its class name, so each metric is
 * a subclass with no arguments.
 */
private[rocketmq] class RocketMQCountMetric(metricName: String, text: String) extends CustomSumMetric {
  override def name(): String = metricName
  override def description(): String = text
}

/** Offsets a read skipped because they could no longer be read (only with failOnDataLoss=false). */
private[rocketmq] class RocketMQLostOffsetsMetric
  extends RocketMQCountMetric(RocketMQCustomMetrics.LostOffsets, "offsets lost and skipped (failOnDataLoss=false)")
/** Pulls made again after a retryable failure (a broker restarting, busy or briefly unreachable). */
private[rocketmq] class RocketMQPullRetriesMetric
  extends RocketMQCountMetric(RocketMQCustomMetrics.PullRetries, "pulls retried")
private[rocketmq] class RocketMQPullsMetric
  extends RocketMQCountMetric(RocketMQCustomMetrics.Pulls, "pull requests")
private[rocketmq] class RocketMQPullWaitMetric
  extends RocketMQCountMetric(RocketMQCustomMetrics.PullWaitMs, "time waiting for pull answers (ms)")

/** Messages per pull answer: each task reports its own mean, shown as the mean over tasks. */
private[rocketmq] class RocketMQMessagesPerPullMetric extends CustomMetric {
  override def name(): String = RocketMQCustomMetrics.MessagesPerPull
  override def description(): String = "messages per pull (mean over tasks)"
  override def aggregateTaskMetrics(taskMetrics: Array[Long]): String =
    if (taskMetrics.isEmpty) "0" else f"${taskMetrics.sum.toDouble / taskMetrics.length}%.1f"
}

private[rocketmq] class RocketMQMessagesSentMetric
  extends RocketMQCountMetric(RocketMQCustomMetrics.MessagesSent, "messages sent")
private[rocketmq] class RocketMQBytesSentMetric
  extends RocketMQCountMetric(RocketMQCustomMetrics.BytesSent, "message body bytes sent")
private[rocketmq] class RocketMQSendRequestsMetric
  extends RocketMQCountMetric(RocketMQCustomMetrics.SendRequests, "send requests (a batch is one)")
private[rocketmq] class RocketMQSendRetriesMetric
  extends RocketMQCountMetric(RocketMQCustomMetrics.SendRetries, "sends retried")
private[rocketmq] class RocketMQFailedSendsMetric
  extends RocketMQCountMetric(RocketMQCustomMetrics.FailedSends, "sends failed")

private[rocketmq] object RocketMQCustomMetrics {
  val LostOffsets = "lostOffsets"
  val PullRetries = "pullRetries"
  val Pulls = "pulls"
  val PullWaitMs = "pullWaitMs"
  val MessagesPerPull = "messagesPerPull"
  val MessagesSent = "messagesSent"
  val BytesSent = "bytesSent"
  val SendRetries = "sendRetries"
  val SendRequests = "sendRequests"
  val FailedSends = "failedSends"

  def supported: Array[CustomMetric] = Array(new RocketMQLostOffsetsMetric, new RocketMQPullRetriesMetric,
    new RocketMQPullsMetric, new RocketMQPullWaitMetric, new RocketMQMessagesPerPullMetric)

  def writeMetrics: Array[CustomMetric] = Array(new RocketMQMessagesSentMetric, new RocketMQBytesSentMetric,
    new RocketMQSendRequestsMetric,
    new RocketMQSendRetriesMetric, new RocketMQFailedSendsMetric)

  def taskMetric(metricName: String, metricValue: Long): CustomTaskMetric = new CustomTaskMetric {
    override def name(): String = metricName
    override def value(): Long = metricValue
  }
}
