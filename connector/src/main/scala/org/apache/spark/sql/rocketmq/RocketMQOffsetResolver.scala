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

import org.apache.spark.sql.rocketmq.client.RocketMQOffsetReader
import org.apache.spark.sql.rocketmq.common.{
  RocketMQOffsetRangeLimit, RocketMQQueue, RocketMQQueueRange
}
import org.apache.spark.sql.rocketmq.errors.RocketMQErrors
import org.apache.spark.sql.rocketmq.options.RocketMQOptions

/**
 * Turns a start or end limit into one offset per queue, given the queues' current ranges: for batch
 * reads (both ends) and for the first offsets of a streaming query. Offsets by time cost one broker
 * request per queue; everything else is answered from the ranges.
 */
private[rocketmq] object RocketMQOffsetResolver {
  import RocketMQOffsetRangeLimit._

  def resolve(
      limit: RocketMQOffsetRangeLimit,
      ranges: Map[RocketMQQueue, RocketMQQueueRange],
      isStart: Boolean,
      reader: => RocketMQOffsetReader): Map[RocketMQQueue, Long] = {
    def default: Map[RocketMQQueue, Long] =
      resolve(if (isStart) Earliest else Latest, ranges, isStart, reader)
    def checkKnown(queues: Iterable[RocketMQQueue], option: String): Unit =
      queues.find(q => !ranges.contains(q)).foreach { q =>
        throw RocketMQErrors.unknownQueue(option, q, ranges.keys.filter(_.topic == q.topic))
      }
    def clamp(q: RocketMQQueue, offset: Long): Long =
      math.min(math.max(offset, ranges(q).min), ranges(q).max)

    limit match {
      case CommittedByGroup =>
        val fallback =
          resolve(reader.options(RocketMQOptions.GroupOffsetFallback), ranges, isStart, reader)
        val group = reader.options(RocketMQOptions.ConsumerGroup).getOrElse(
          throw RocketMQErrors.missingOption(RocketMQOptions.ConsumerGroup.key))
        // A committed offset is taken as it is, as JSON offsets are: one the brokers no longer hold
        // is data loss.
        val committed = reader.groupOffsets(group, ranges.keys)
        ranges.map { case (q, _) => q -> committed.getOrElse(q, fallback(q)) }
      case Earliest => ranges.map { case (q, r) => q -> r.min }
      case Latest => ranges.map { case (q, r) => q -> r.max }
      case Specific(offsets) =>
        checkKnown(offsets.keys,
          if (isStart) RocketMQOptions.StartingOffsets.key else RocketMQOptions.EndingOffsets.key)
        val fallback = default
        ranges.map { case (q, r) =>
          q ->
            (offsets.get(q) match {
              case Some(EarliestOffset) => r.min
              case Some(LatestOffset) => r.max
              case Some(offset) => offset
              case None => fallback(q)
            })
        }
      case Timestamp(ts) =>
        reader.offsetsForTimestamp(ranges.keys, ts).map { case (q, o) => q -> clamp(q, o) }
      case TimestampPerQueue(times) =>
        checkKnown(times.keys,
          if (isStart) RocketMQOptions.StartingOffsetsByTimestamp.key
          else RocketMQOptions.EndingOffsetsByTimestamp.key)
        val found = times.groupBy(_._2).flatMap { case (ts, qs) =>
          reader.offsetsForTimestamp(qs.keys, ts)
        }
        val fallback = default
        ranges.map { case (q, _) => q -> found.get(q).map(clamp(q, _)).getOrElse(fallback(q)) }
    }
  }
}
