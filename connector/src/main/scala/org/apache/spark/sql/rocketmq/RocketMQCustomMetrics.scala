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
import org.apache.spark.sql.rocketmq.client.RocketMQLatencyHistogram

/**
 * A per-task count, summed over tasks. Spark instantiates a metric by its class name, so each
 * metric is a subclass with no arguments.
 */
private[rocketmq] class RocketMQCountMetric(metricName: String, text: String)
  extends CustomSumMetric {
  override def name(): String = metricName
  override def description(): String = text
}

/** Offsets a read skipped because they could no longer be read (only with failOnDataLoss=false). */
private[rocketmq] class RocketMQLostOffsetsMetric
  extends RocketMQCountMetric(RocketMQCustomMetrics.LostOffsets,
    "offsets lost and skipped (failOnDataLoss=false)")
/**
 * Pulls made again after a retryable failure (a broker restarting, busy or briefly unreachable).
 */
private[rocketmq] class RocketMQPullRetriesMetric
  extends RocketMQCountMetric(RocketMQCustomMetrics.PullRetries, "pulls retried")
private[rocketmq] class RocketMQPullsMetric
  extends RocketMQCountMetric(RocketMQCustomMetrics.Pulls, "pull requests")
private[rocketmq] class RocketMQPullWaitMetric
  extends RocketMQCountMetric(RocketMQCustomMetrics.PullWaitMs,
    "time waiting for pull answers (ms)")

/** Messages per pull answer: each task reports its own mean, shown as the mean over tasks. */
private[rocketmq] class RocketMQMessagesPerPullMetric extends CustomMetric {
  override def name(): String = RocketMQCustomMetrics.MessagesPerPull
  override def description(): String = "messages per pull (mean over tasks)"
  override def aggregateTaskMetrics(taskMetrics: Array[Long]): String =
    if (taskMetrics.isEmpty) "0" else f"${taskMetrics.sum.toDouble / taskMetrics.length}%.1f"
}

/**
 * A duration in ms each task reports from its own histogram (-1 when it measured nothing), shown
 * over the tasks that measured any: by the highest task value (`highest`: exact for a maximum; for
 * a percentile, the highest task's, an upper bound of the stage's) or by the median of the task
 * values (`highest` false; an approximation of the stage's median).
 */
private[rocketmq] class RocketMQLatencyMetric(metricName: String, text: String, highest: Boolean)
  extends CustomMetric {
  override def name(): String = metricName
  override def description(): String = text
  override def aggregateTaskMetrics(taskMetrics: Array[Long]): String = {
    val measured = taskMetrics.filter(_ >= 0)
    if (measured.isEmpty) "n/a"
    else if (highest) measured.max.toString
    else measured.sorted.apply((measured.length - 1) / 2).toString
  }
}

private[rocketmq] class RocketMQQueueWaitP50Metric
  extends RocketMQLatencyMetric(RocketMQCustomMetrics.QueueWaitMsP50,
    "queue wait p50 (ms, median of the tasks' p50s)", highest = false)
private[rocketmq] class RocketMQQueueWaitP99Metric
  extends RocketMQLatencyMetric(RocketMQCustomMetrics.QueueWaitMsP99,
    "queue wait p99 (ms, highest task p99)", highest = true)
private[rocketmq] class RocketMQQueueWaitMaxMetric
  extends RocketMQLatencyMetric(RocketMQCustomMetrics.QueueWaitMsMax,
    "queue wait max (ms)", highest = true)

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
private[rocketmq] class RocketMQPossibleDuplicatesMetric extends RocketMQCountMetric(
    RocketMQCustomMetrics.PossibleDuplicates,
    "messages resent after a failure that may have stored them")

private[rocketmq] class RocketMQSendAckP50Metric
  extends RocketMQLatencyMetric(RocketMQCustomMetrics.SendAckMsP50,
    "send ack p50 (ms, median of the tasks' p50s)", highest = false)
private[rocketmq] class RocketMQSendAckP99Metric
  extends RocketMQLatencyMetric(RocketMQCustomMetrics.SendAckMsP99,
    "send ack p99 (ms, highest task p99)", highest = true)
private[rocketmq] class RocketMQSendAckMaxMetric
  extends RocketMQLatencyMetric(RocketMQCustomMetrics.SendAckMsMax,
    "send ack max (ms)", highest = true)

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
  /**
   * Messages sent again after a failure (a timeout) that may have stored them: each may be stored
   * twice.
   */
  val PossibleDuplicates = "possibleDuplicates"
  /**
   * How long messages waited in RocketMQ before they were read: read time minus the broker's store
   * time.
   */
  val QueueWait = "queueWait"
  val QueueWaitMsP50 = "queueWaitMsP50"
  val QueueWaitMsP99 = "queueWaitMsP99"
  val QueueWaitMsMax = "queueWaitMsMax"
  /**
   * How long send requests took to be acknowledged, from their first attempt (retries included).
   */
  val SendAck = "sendAck"
  val SendAckMsP50 = "sendAckMsP50"
  val SendAckMsP99 = "sendAckMsP99"
  val SendAckMsMax = "sendAckMsMax"

  def supported: Array[CustomMetric] = Array(new RocketMQLostOffsetsMetric,
    new RocketMQPullRetriesMetric,
    new RocketMQPullsMetric, new RocketMQPullWaitMetric, new RocketMQMessagesPerPullMetric,
    new RocketMQQueueWaitP50Metric, new RocketMQQueueWaitP99Metric, new RocketMQQueueWaitMaxMetric)

  def writeMetrics: Array[CustomMetric] =
    Array(new RocketMQMessagesSentMetric, new RocketMQBytesSentMetric,
      new RocketMQSendRequestsMetric,
      new RocketMQSendRetriesMetric, new RocketMQFailedSendsMetric,
      new RocketMQPossibleDuplicatesMetric,
      new RocketMQSendAckP50Metric, new RocketMQSendAckP99Metric, new RocketMQSendAckMaxMetric)

  def taskMetric(metricName: String, metricValue: Long): CustomTaskMetric = new CustomTaskMetric {
    override def name(): String = metricName
    override def value(): Long = metricValue
  }

  /**
   * A task's `p50`, `p99` and `max` metrics of `measured` (-1 each when empty: left out when
   * shown).
   */
  def latencyTaskMetrics(p50: String, p99: String, max: String, measured: RocketMQLatencyHistogram)
      : Seq[CustomTaskMetric] =
    if (measured.isEmpty) Seq(taskMetric(p50, -1L), taskMetric(p99, -1L), taskMetric(max, -1L))
    else Seq(taskMetric(p50, measured.percentile(0.5)), taskMetric(p99, measured.percentile(0.99)),
      taskMetric(max, measured.max))
}
