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

package org.apache.spark.sql.rocketmq.common

/**
 * Where a read starts or ends, before it is resolved against the broker's current offsets.
 * A resolved offset is always a position in a queue's consume queue: the next message to read.
 */
private[rocketmq] sealed trait RocketMQOffsetRangeLimit {

  /**
   * The queues this limit names one by one: waited for while their group is missing from the route.
   */
  def namedQueues: Set[RocketMQQueue] = this match {
    case RocketMQOffsetRangeLimit.Specific(offsets) => offsets.keySet
    case RocketMQOffsetRangeLimit.TimestampPerQueue(times) => times.keySet
    case _ => Set.empty
  }
}

private[rocketmq] object RocketMQOffsetRangeLimit {

  /** The oldest message still stored in each queue (the queue's min offset). */
  case object Earliest extends RocketMQOffsetRangeLimit

  /** Just after the newest message of each queue (the queue's max offset, exclusive). */
  case object Latest extends RocketMQOffsetRangeLimit

  /**
   * Offsets given per queue; a queue may use [[EarliestOffset]] or [[LatestOffset]]. Queues not
   * listed fall back to `Earliest` for a start and `Latest` for an end.
   */
  final case class Specific(offsets: Map[RocketMQQueue, Long]) extends RocketMQOffsetRangeLimit

  /**
   * For every queue, the first message stored at or after `timestampMs` (store time, epoch ms); a
   * queue with no such message resolves to its latest offset.
   */
  final case class Timestamp(timestampMs: Long) extends RocketMQOffsetRangeLimit

  /**
   * Where option `consumerGroup`'s group committed its progress on the brokers, queue by queue (as
   * RocketMQ's own consumers resume); a queue the group has not committed starts at
   * `groupOffsetFallback` (earliest or latest).
   */
  case object CommittedByGroup extends RocketMQOffsetRangeLimit

  /** Like [[Timestamp]], one time per queue; queues not listed use the start/end default. */
  final case class TimestampPerQueue(timestampsMs: Map[RocketMQQueue, Long])
    extends RocketMQOffsetRangeLimit

  /** The JSON sentinel for "the queue's earliest offset". */
  val EarliestOffset: Long = -2L

  /** The JSON sentinel for "the queue's latest offset". */
  val LatestOffset: Long = -1L
}
