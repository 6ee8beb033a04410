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

import org.apache.spark.sql.connector.read.{Batch, InputPartition, PartitionReaderFactory}
import org.apache.spark.sql.rocketmq.consumer.RocketMQReadSettings

/**
 * A bounded read: from `startingOffsets` to `endingOffsets` of every readable queue of the topics,
 * resolved against the brokers once, when Spark plans the partitions. One input partition per queue
 * that has something to read; each reads exactly its range and stops.
 */
private[rocketmq] class RocketMQBatch(options: RocketMQOptions) extends Batch {

  private lazy val partitions: Array[InputPartition] = {
    val reader = new RocketMQOffsetReader(options)
    val (start, end) = try {
      val ranges = reader.fetchQueueRanges(options.topicsToRead, awaitIndexed = true)
      (RocketMQOffsetResolver.resolve(options.batchStartingOffsets, ranges, isStart = true, reader),
        RocketMQOffsetResolver.resolve(options.batchEndingOffsets, ranges, isStart = false, reader))
    } finally reader.close()
    val settings =
      RocketMQReadSettings(options).copy(failOnDataLoss = true) // the spec: batch queries always fail on loss
    val ranges = start.keys.toSeq.sorted.map { queue =>
      val (from, until) = (start(queue), end(queue))
      if (from > until) throw RocketMQErrors.startAfterEnd(queue, from, until)
      RocketMQOffsetRange(queue, from, until)
    }
    RocketMQOffsetRangeCalculator.partitions(ranges, options(RocketMQOptions.MinPartitions), settings, Nil).toArray[
      InputPartition]
  }

  override def planInputPartitions(): Array[InputPartition] = partitions

  override def createReaderFactory(): PartitionReaderFactory = RocketMQPartitionReaderFactory
}
