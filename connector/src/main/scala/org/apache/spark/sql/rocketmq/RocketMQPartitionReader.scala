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

import org.apache.rocketmq.common.message.MessageExt

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.metric.CustomTaskMetric
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReader, PartitionReaderFactory}
import org.apache.spark.sql.rocketmq.client.RocketMQLatencyHistogram
import org.apache.spark.sql.rocketmq.consumer.RocketMQQueuePuller

/**
 * Creates the reader of each [[RocketMQInputPartition]], in batch and micro-batch reads alike; a
 * stream's readers add the queue waits they measured to `queueWait` (null: a batch read, which
 * reports none).
 */
private[rocketmq] final class RocketMQPartitionReaderFactory(queueWait: RocketMQLatencyAccumulator,
    sizes: RocketMQReadSizes = null)
  extends PartitionReaderFactory {
  override def createReader(partition: InputPartition): PartitionReader[InternalRow] =
    new RocketMQPartitionReader(partition.asInstanceOf[RocketMQInputPartition], queueWait, sizes)
}

private[rocketmq] object RocketMQPartitionReaderFactory {
  /** A batch read's. */
  val batch = new RocketMQPartitionReaderFactory(null)
}

/**
 * Reads one input partition: the messages of `[fromOffset, untilOffset)` of one queue, each turned
 * into a row as it is pulled. The range is exact ([[RocketMQQueuePuller]] says how gaps are told
 * apart); the metrics `lostOffsets` and `pullRetries` count what was skipped as lost and the pulls
 * made again after a retryable failure, and `pulls`, `messagesPerPull` and `pullWaitMs` show how
 * the task's pulls went. Each message's queue wait (when it is read minus when the broker stored
 * it) goes into the task's histogram, shown as `queueWaitMsP50`, `queueWaitMsP99` and
 * `queueWaitMsMax`, and added to a stream's `queueWait` accumulator when the reader closes, for the
 * query's progress.
 */
private[rocketmq] class RocketMQPartitionReader(val partition: RocketMQInputPartition,
    queueWait: RocketMQLatencyAccumulator = null, sizes: RocketMQReadSizes = null)
  extends PartitionReader[InternalRow] {

  private val converter =
    new RocketMQMessageToRow(partition.queue, partition.settings.includeExtraColumns)
  private val puller =
    RocketMQQueuePuller(partition.queue, partition.fromOffset, partition.untilOffset,
      partition.settings)
  private var current: InternalRow = _

  private val narrowed = partition.storeFromMs != Long.MinValue ||
    partition.storeUntilMs != Long.MaxValue
  private var rows = 0L
  private var pulled, bodyBytes = 0L
  private val waited = new RocketMQLatencyHistogram
  private var closed = false
  /** Holds this task to its part of maxMessagesPerSecond / maxBytesPerSecond (null: no cap). */
  private val pacer = partition.settings.rateCap.newPacer()

  override def next(): Boolean = {
    if (rows >= partition.maxRows) return false
    var message = nextBefore(Long.MaxValue)
    // A store-time bound is turned into offsets; a message stored out of order at either end is
    // left out here.
    while (narrowed && message != null &&
      (message.getStoreTimestamp < partition.storeFromMs ||
        message.getStoreTimestamp >= partition.storeUntilMs)) {
      message = nextBefore(Long.MaxValue)
    }
    if (message != null) {
      rows += 1
      measure(message)
    }
    message != null
  }

  /** Records how long `message`, just read, waited in its queue. */
  protected final def measure(message: MessageExt): Unit =
    waited.record(System.currentTimeMillis() - message.getStoreTimestamp)

  /**
   * Moves to the next message (null if none by `deadlineNanos`, or past the range's end) and
   * returns it.
   */
  protected final def nextBefore(deadlineNanos: Long): MessageExt = {
    val message = puller.next(deadlineNanos)
    if (message != null) {
      pulled += 1
      bodyBytes += message.getBody.length
      if (pacer != null) pacer.take(1, message.getBody.length)
      current = converter.toRow(message)
    }
    message
  }

  /** Where reading this queue goes on after the messages returned so far. */
  protected final def nextOffset: Long = puller.nextOffset

  override def get(): InternalRow = current

  override def currentMetricsValues(): Array[CustomTaskMetric] =
    (Seq(
      RocketMQCustomMetrics.taskMetric(RocketMQCustomMetrics.LostOffsets, puller.lostOffsets),
      RocketMQCustomMetrics.taskMetric(RocketMQCustomMetrics.PullRetries, puller.pullRetries),
      RocketMQCustomMetrics.taskMetric(RocketMQCustomMetrics.Pulls, puller.pulls),
      RocketMQCustomMetrics.taskMetric(RocketMQCustomMetrics.PullWaitMs, puller.pullWaitMs),
      RocketMQCustomMetrics.taskMetric(RocketMQCustomMetrics.MessagesPerPull,
        if (puller.pulls == 0) 0 else math.round(puller.messagesPulled.toDouble / puller.pulls))) ++
      RocketMQCustomMetrics.latencyTaskMetrics(RocketMQCustomMetrics.QueueWaitMsP50,
        RocketMQCustomMetrics.QueueWaitMsP99, RocketMQCustomMetrics.QueueWaitMsMax, waited)).toArray

  override def close(): Unit = {
    if (!closed && queueWait != null) queueWait.add(waited)
    if (!closed && sizes != null) sizes.add(bodyBytes, pulled)
    closed = true
    puller.close()
  }
}
