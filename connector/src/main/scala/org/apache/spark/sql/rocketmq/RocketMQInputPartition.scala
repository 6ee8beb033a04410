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

import org.apache.spark.sql.connector.read.InputPartition
import org.apache.spark.sql.rocketmq.common.RocketMQQueue
import org.apache.spark.sql.rocketmq.consumer.RocketMQReadSettings

/**
 * Offsets `[fromOffset, untilOffset)` of one queue, read by one task with `settings`. A queue read
 * whole prefers the same executor in every batch (see [[RocketMQOffsetRangeCalculator]]), so that
 * executor's cached consumer and open connections are reused. A batch read narrowed by its filters
 * returns only messages stored in `[storeFromMs, storeUntilMs)`, and at most `maxRows` of them.
 */
private[rocketmq] final case class RocketMQInputPartition(
    queue: RocketMQQueue,
    fromOffset: Long,
    untilOffset: Long,
    settings: RocketMQReadSettings,
    preferredLocation: Option[String] = None,
    storeFromMs: Long = Long.MinValue,
    storeUntilMs: Long = Long.MaxValue,
    maxRows: Long = Long.MaxValue)
  extends InputPartition {
  override def preferredLocations(): Array[String] = preferredLocation.toArray
}
