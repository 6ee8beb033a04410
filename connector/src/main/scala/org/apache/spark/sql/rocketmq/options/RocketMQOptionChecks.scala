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

package org.apache.spark.sql.rocketmq.options

import org.apache.spark.sql.rocketmq.common.{RocketMQOffsetRangeLimit, RocketMQQueue}
import org.apache.spark.sql.rocketmq.errors.RocketMQErrors
import org.apache.spark.sql.rocketmq.options.RocketMQOption._
import org.apache.spark.sql.rocketmq.options.RocketMQOptions._

/**
 * The checks a query's options pass when it is planned, one per kind of query: every option that
 * applies parses, none that does not is set, and the ones that go together agree.
 */
private[options] trait RocketMQOptionChecks { this: RocketMQOptions =>

  /** Checks everything a streaming read needs; batch-only options are refused. */
  def validateForStream(): Unit = {
    validateRead(refused = BatchOnly, refusedIn = "STREAMING", _.streamRead)
    requireGroupForGroupStart(streamStartingOffsets)
    checkTopicsNamed(streamStartingOffsets, StartingOffsets, StartingOffsetsByTimestamp)
    (this(MinOffsetsPerTrigger), this(MaxOffsetsPerTrigger)) match {
      case (Some(min), Some(max)) if min > max =>
        throw RocketMQErrors.invalidOption(MinOffsetsPerTrigger.key, min.toString,
          "ABOVE_MAX_OFFSETS_PER_TRIGGER",
          "max" -> max.toString)
      case _ =>
    }
  }

  /**
   * Refuses, for a stream in real-time mode (after [[validateForStream]]), the options that bound,
   * delay or split a batch: there each queue is read by one task with no end.
   */
  def validateForRealTime(): Unit = refuseBatchBounds("REAL_TIME")

  /**
   * The same as [[validateForRealTime]], for continuous processing: each queue is read by one task
   * with no end.
   */
  def validateForContinuous(): Unit = refuseBatchBounds("CONTINUOUS")

  private def refuseBatchBounds(refusedIn: String): Unit =
    Seq(MaxOffsetsPerTrigger, MaxBytesPerTrigger, MinOffsetsPerTrigger, MaxTriggerDelay,
      MinPartitions).find(
      rawValue(_).isDefined)
      .foreach(o => throw RocketMQErrors.optionNotAllowed(o.key, refusedIn))

  /** Checks everything a batch read needs; streaming-only options are refused. */
  def validateForBatchRead(): Unit = {
    validateRead(refused = StreamOnly, refusedIn = "BATCH", _.batchRead)
    requireGroupForGroupStart(batchStartingOffsets)
    checkTopicsNamed(batchStartingOffsets, StartingOffsets, StartingOffsetsByTimestamp)
    checkTopicsNamed(batchEndingOffsets, EndingOffsets, EndingOffsetsByTimestamp)
  }

  /** startingOffsets=group names no group of its own: option consumerGroup must name it. */
  private def requireGroupForGroupStart(start: RocketMQOffsetRangeLimit): Unit =
    if (start == RocketMQOffsetRangeLimit.CommittedByGroup && this(ConsumerGroup).isEmpty) {
      throw RocketMQErrors.missingOption(ConsumerGroup.key)
    }

  /** Checks everything a write needs. */
  def validateForWrite(): Unit = {
    parseAll(_.write)
    topicToWrite
  }

  /**
   * Fails on the first set option of query type `refused` (the sub-condition `refusedIn` says why),
   * parses every option that applies, and checks the topics and that at most one filter is set.
   */
  private def validateRead(refused: QueryType, refusedIn: String, applies: QueryType => Boolean)
      : Unit = {
    registry.find(o => o.queryType == refused && rawValue(o).isDefined).foreach { o =>
      throw RocketMQErrors.optionNotAllowed(o.key, refusedIn)
    }
    parseAll(applies)
    topicSelection
    if (this(SqlFilter).isDefined && this(SubExpression) != "*") {
      throw RocketMQErrors.conflictingOptions(Seq(SubExpression.key, SqlFilter.key))
    }
  }

  /** Checks the keys given, parses every option that applies and requires the name server. */
  private def parseAll(applies: QueryType => Boolean): Unit = {
    RocketMQOptionKeys.check(all)
    registry.filter(o => applies(o.queryType)).foreach(o => parsed(o))
    this(NameServer)
  }

  /** Per-queue JSON may only name subscribed topics; errors name the option the JSON came from. */
  private def checkTopicsNamed(limit: RocketMQOffsetRangeLimit, offsets: RocketMQOption[_],
      times: RocketMQOption[_])
      : Unit = limit match {
    case RocketMQOffsetRangeLimit.Specific(values) => checkTopicsNamed(offsets, values.keys)
    case RocketMQOffsetRangeLimit.TimestampPerQueue(values) => checkTopicsNamed(times, values.keys)
    case _ =>
  }

  private def checkTopicsNamed(option: RocketMQOption[_], queues: Iterable[RocketMQQueue]): Unit = {
    val selection = topicSelection
    queues.map(_.topic).toSeq.sorted.find(t => !selection.admits(t)).foreach { t =>
      throw RocketMQErrors.invalidOption(option.key, rawValue(option).get, "TOPIC_NOT_READ",
        "topic" -> t, "topics" -> selection.describe)
    }
  }
}
