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

import java.util.concurrent.TimeUnit

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.streaming.{PartitionOffset, SupportsRealTimeRead}
import org.apache.spark.sql.connector.read.streaming.SupportsRealTimeRead.RecordStatus

/**
 * Reads one queue in a real-time batch: from the partition's start with no end, each message as
 * soon as the broker has it (the puller long-polls at the queue's end), until Spark's deadline for
 * the batch. Spark then asks [[getOffset]] where it stopped. A message's arrival time is its broker
 * store time; its queue wait is measured as in micro-batches, and reaches the progress of the batch
 * when the task ends with it.
 */
private[rocketmq] final class RocketMQRealTimePartitionReader(partition: RocketMQInputPartition,
    queueWait: RocketMQLatencyAccumulator)
  extends RocketMQPartitionReader(partition, queueWait)
  with SupportsRealTimeRead[InternalRow] {

  override def getOffset: PartitionOffset = RocketMQQueueOffset(partition.queue, nextOffset)

  /** Spark 4.2 and later: the wait is measured from `startTimeMs`, Spark's clock when it asked. */
  override def nextWithTimeout(startTimeMs: java.lang.Long, timeoutMs: java.lang.Long)
      : RecordStatus =
    nextWithin(startTimeMs + timeoutMs - System.currentTimeMillis())

  /** Spark 4.1's form of the same call (Spark 4.3 has both). */
  def nextWithTimeout(timeoutMs: java.lang.Long): RecordStatus = nextWithin(timeoutMs)

  private def nextWithin(waitMs: Long): RecordStatus = {
    val message =
      nextBefore(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(math.max(0L, waitMs)))
    if (message == null) RecordStatus.newStatusWithoutArrivalTime(false)
    else {
      measure(message)
      RecordStatus.newStatusWithArrivalTimeMs(message.getStoreTimestamp)
    }
  }
}
