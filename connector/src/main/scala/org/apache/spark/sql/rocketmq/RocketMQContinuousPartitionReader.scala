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

import org.apache.spark.TaskContext
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.InputPartition
import org.apache.spark.sql.connector.read.streaming.{
  ContinuousPartitionReader, ContinuousPartitionReaderFactory,
  PartitionOffset
}

private[rocketmq] object RocketMQContinuousReaderFactory extends ContinuousPartitionReaderFactory {
  override def createReader(partition: InputPartition): ContinuousPartitionReader[InternalRow] =
    new RocketMQContinuousPartitionReader(partition.asInstanceOf[RocketMQInputPartition])
}

/**
 * Reads one queue under continuous processing: from the partition's start with no end, each message
 * as soon as the broker has it (the puller long-polls at the queue's end). `next()` waits for a
 * message as long as the task runs, looking at whether Spark has stopped the task between waits of
 * at most half a second; [[getOffset]] is where the queue goes on after the messages returned so
 * far, naming the queue, which Spark records at each epoch.
 */
private[rocketmq] final class RocketMQContinuousPartitionReader(partition: RocketMQInputPartition)
  extends RocketMQPartitionReader(partition)
  with ContinuousPartitionReader[InternalRow] {

  private val context = TaskContext.get()
  private val waitNanos = TimeUnit.MILLISECONDS.toNanos(500L)

  override def next(): Boolean = {
    while (context == null || !(context.isInterrupted() || context.isCompleted())) {
      val message = nextBefore(System.nanoTime() + waitNanos)
      if (message != null) {
        measure(message)
        return true
      }
    }
    false
  }

  override def getOffset: PartitionOffset = RocketMQQueueOffset(partition.queue, nextOffset)
}
