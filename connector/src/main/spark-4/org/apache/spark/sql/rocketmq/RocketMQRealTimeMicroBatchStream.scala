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

import org.apache.spark.sql.connector.read.{InputPartition, PartitionReader, PartitionReaderFactory}
import org.apache.spark.sql.connector.read.streaming.{Offset, PartitionOffset, SupportsRealTimeMode}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.rocketmq.consumer.RocketMQQueuePuller

/**
 * The stream on a Spark with real-time mode (4.1 and later; [[RocketMQMicroBatchStream.apply]] picks it). Under
 * `Trigger.RealTime` each batch runs for the trigger's duration: one task per queue reads from the batch's start
 * with no end ([[RocketMQRealTimePartitionReader]]), each message going on through the query as it arrives, and
 * the batch's end is where the tasks stopped ([[mergeOffsets]]), written to the checkpoint when the batch ends.
 * Queues that appear while the query runs are read from their earliest offset, and the data loss rules are those
 * of micro-batches. Options that bound or split a batch (`maxOffsetsPerTrigger`, `minOffsetsPerTrigger`,
 * `maxTriggerDelay`, `minPartitions`) are refused. Under any other trigger it is the micro-batch stream, and it
 * describes itself as that one in plans and progress on every Spark version.
 */
private[rocketmq] final class RocketMQRealTimeMicroBatchStream(options: RocketMQOptions, checkpointLocation: String)
  extends RocketMQMicroBatchStream(options, checkpointLocation)
  with SupportsRealTimeMode {

  /** Where the tasks of the running real-time batch started, by queue. */
  @volatile private var batchStart: Map[RocketMQQueue, Long] = Map.empty
  /** The queue of each input partition of the running real-time batch, in the partitions' order. */
  @volatile private var batchQueues: IndexedSeq[RocketMQQueue] = IndexedSeq.empty
  @volatile private var realTime = false

  override def prepareForRealTimeMode(): Unit = {
    options.validateForRealTime()
    realTime = true
  }

  override def planInputPartitions(start: Offset): Array[InputPartition] = {
    val (from, queues) = planOpen(start)
    batchStart = from
    batchQueues = queues
    openPartitions(from, queues).toArray[InputPartition]
  }

  override def mergeOffsets(offsets: Array[PartitionOffset]): Offset = openEnd(batchStart, batchQueues, offsets)

  override def createReaderFactory(): PartitionReaderFactory = RocketMQRealTimeReaderFactory

  override def metrics(latestConsumedOffset: java.util.Optional[Offset]): java.util.Map[String, String] = {
    // A real-time batch ran for its whole duration: measure against the queues' ends now, not at its start.
    if (realTime) latestRanges = reader.fetchQueueRanges(topics, allowMissing = true)
    super.metrics(latestConsumedOffset)
  }
}

/** The micro-batch reader for bounded partitions, the real-time one for open ones. */
private[rocketmq] object RocketMQRealTimeReaderFactory extends PartitionReaderFactory {
  override def createReader(partition: InputPartition): PartitionReader[InternalRow] = partition match {
    case p: RocketMQInputPartition if p.untilOffset == RocketMQQueuePuller.Open =>
      new RocketMQRealTimePartitionReader(p)
    case other => RocketMQPartitionReaderFactory.createReader(other)
  }
}
