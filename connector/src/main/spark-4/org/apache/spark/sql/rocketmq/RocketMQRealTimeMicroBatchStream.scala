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

import java.util.Optional

import org.apache.spark.sql.connector.read.{InputPartition, PartitionReader, PartitionReaderFactory}
import org.apache.spark.sql.connector.read.streaming._
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.rocketmq.consumer.RocketMQQueuePuller
import org.apache.spark.sql.rocketmq.options.RocketMQOptions

/**
 * The stream on a Spark with real-time mode (4.1 and later; [[RocketMQMicroBatchStream.apply]]
 * picks it). Under `Trigger.RealTime` each batch runs for the trigger's duration: one task per
 * queue reads from the batch's start with no end ([[RocketMQRealTimePartitionReader]]), each
 * message going on through the query as it arrives, and the batch's end is where the tasks stopped
 * ([[mergeOffsets]], each task's offset naming its queue), written to the checkpoint when the batch
 * ends. Queues that appear while the query runs are read from their earliest offset, and the data
 * loss rules are those of micro-batches (the [[RocketMQStreamPlanner]]'s, shared). Options that
 * bound or split a batch (`maxOffsetsPerTrigger`, `minOffsetsPerTrigger`, `maxTriggerDelay`,
 * `minPartitions`) are refused. Under any other trigger it is the micro-batch stream it holds, to
 * which it hands every micro-batch call, and it describes itself as that one in plans and progress
 * on every Spark version.
 */
private[rocketmq] final class RocketMQRealTimeMicroBatchStream(options: RocketMQOptions,
    checkpointLocation: String)
  extends MicroBatchStream
  with SupportsTriggerAvailableNow
  with ReportsSourceMetrics
  with SupportsRealTimeMode {

  private[rocketmq] val planner = new RocketMQStreamPlanner(options, checkpointLocation)
  private val batches = new RocketMQMicroBatchStream(planner)

  /** The running real-time batch's plan: where its tasks started, by queue. */
  @volatile private var plan = RocketMQOpenPlan(Map.empty)
  @volatile private var realTime = false

  override def toString: String = batches.toString

  override def prepareForRealTimeMode(): Unit = {
    options.validateForRealTime()
    realTime = true
  }

  /**
   * The last batch's partitions and the start they were planned from: Spark plans a batch more than
   * once.
   */
  @volatile private var planned: Option[(Offset, Array[InputPartition])] = None

  override def planInputPartitions(start: Offset): Array[InputPartition] = planned match {
    case Some((from, partitions)) if from == start => partitions
    case _ =>
      val next = planner.planOpen(start, refetch = false)
      val partitions = planner.openPartitions(next)
      if (realTime) RocketMQRealTimeSlots.check(SparkSession.active, partitions.map(_.queue))
      plan = next
      val result = partitions.toArray[InputPartition]
      planned = Some((start, result))
      result
  }

  override def mergeOffsets(offsets: Array[PartitionOffset]): Offset = plan.end(offsets)

  override def createReaderFactory(): PartitionReaderFactory =
    new RocketMQRealTimeReaderFactory(batches.queueWait, batches.readSizes)

  override def metrics(latestConsumedOffset: Optional[Offset]): java.util.Map[String, String] = {
    // A real-time batch ran for its whole duration: measure against the queues' ends now, not at
    // its start (the next batch's start takes these ends too).
    if (realTime) planner.fetchAfterBatch()
    batches.metrics(latestConsumedOffset)
  }

  // Every other call is the micro-batch stream's.
  override def initialOffset(): Offset = batches.initialOffset()
  override def deserializeOffset(json: String): Offset = batches.deserializeOffset(json)
  override def getDefaultReadLimit: ReadLimit = batches.getDefaultReadLimit
  override def prepareForTriggerAvailableNow(): Unit = batches.prepareForTriggerAvailableNow()
  override def latestOffset(): Offset = batches.latestOffset()
  override def latestOffset(start: Offset, limit: ReadLimit): Offset =
    batches.latestOffset(start, limit)
  override def reportLatestOffset(): Offset = batches.reportLatestOffset()
  override def planInputPartitions(start: Offset, end: Offset): Array[InputPartition] =
    batches.planInputPartitions(start, end)
  override def commit(end: Offset): Unit = batches.commit(end)
  override def stop(): Unit = batches.stop()
}

/**
 * The micro-batch reader for bounded partitions, the real-time one for open ones; both measure into
 * `queueWait`.
 */
private[rocketmq] final class RocketMQRealTimeReaderFactory(queueWait: RocketMQLatencyAccumulator,
    sizes: RocketMQReadSizes = null)
  extends PartitionReaderFactory {
  override def createReader(partition: InputPartition): PartitionReader[InternalRow] =
    partition match {
      case p: RocketMQInputPartition if p.untilOffset == RocketMQQueuePuller.Open =>
        new RocketMQRealTimePartitionReader(p, queueWait)
      case other =>
        new RocketMQPartitionReader(other.asInstanceOf[RocketMQInputPartition], queueWait, sizes)
    }
}
