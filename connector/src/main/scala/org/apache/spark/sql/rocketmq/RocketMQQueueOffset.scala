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

import org.apache.spark.sql.connector.read.streaming.PartitionOffset
import org.apache.spark.sql.execution.streaming.continuous.RateStreamPartitionOffset

/**
 * Where the task of a read with no end (a real-time batch, continuous processing) stopped: the next offset of the
 * queue of input partition `partition` (its index in the planned partitions). It travels to the driver in a task
 * result or an RPC, which Spark reads with its own class loader: over Spark Connect, a connector attached to the
 * session as an artifact is not there, and a class of ours would fail to load (ClassNotFoundException). So it rides
 * in one of Spark's own partition offsets (the continuous rate source's: partition, value, time), time unused.
 */
private[rocketmq] object RocketMQQueueOffset {
  def apply(partition: Int, offset: Long): PartitionOffset = RateStreamPartitionOffset(partition, offset, 0L)

  def unapply(offset: PartitionOffset): Option[(Int, Long)] = offset match {
    case RateStreamPartitionOffset(partition, next, _) => Some((partition, next))
    case _ => None
  }
}
