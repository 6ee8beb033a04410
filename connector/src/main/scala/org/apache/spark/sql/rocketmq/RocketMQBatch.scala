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
import org.apache.spark.sql.rocketmq.client.RocketMQOffsetReader
import org.apache.spark.sql.rocketmq.common.{RocketMQTopicSelection, RocketMQOffsetRange}
import org.apache.spark.sql.rocketmq.consumer.RocketMQReadSettings
import org.apache.spark.sql.rocketmq.errors.RocketMQErrors
import org.apache.spark.sql.rocketmq.options.RocketMQOptions

/**
 * A bounded read: from `startingOffsets` to `endingOffsets` of every readable queue of the topics,
 * resolved against the brokers once, when Spark plans the partitions (or first asks for the read's
 * size). `pushdown` narrows it: queues its filters exclude are left out, offset and store-time
 * bounds cut each range (store times by the brokers' time index, one request per queue and bound,
 * each answer checked by the store time of one message: [[RocketMQStoreTimeCut]]), tags become the
 * tag filter, and a limit caps each task's rows. One input partition per queue that has something
 * to read; each reads exactly its range and stops.
 */
private[rocketmq] class RocketMQBatch(options: RocketMQOptions,
    pushdown: RocketMQPushdown = RocketMQPushdown())
  extends Batch {

  private lazy val partitions: Array[InputPartition] = {
    val settings = RocketMQReadSettings(options).copy(
      failOnDataLoss = true) // the spec: batch queries fail on loss
    pushdown.tagExpression(settings.subExpression) match {
      case None => Array.empty[InputPartition] // no tag can pass both the option and the filters
      case Some(tags) =>
        val (planned, compacted) = plannedRanges()
        val narrowed = settings.copy(subExpression = tags).reading(compacted)
        // A limit caps offsets only where every offset holds a message.
        val limited = pushdown.limit.filter(_ => !narrowed.filtered && compacted.isEmpty)
        val ranges = planned.map(r =>
          limited.fold(r)(n => r.copy(until = math.min(r.until, r.from + n))))
        RocketMQOffsetRangeCalculator.partitions(ranges, options(RocketMQOptions.MinPartitions),
          narrowed, Nil)
          .map(p =>
            p.copy(maxRows = pushdown.limit.fold(Long.MaxValue)(_.toLong),
              storeFromMs = pushdown.storeTimeFromMs.getOrElse(Long.MinValue),
              storeUntilMs = pushdown.storeUntilMs.getOrElse(Long.MaxValue)))
          .toArray[InputPartition]
    }
  }

  /**
   * The ranges to read, each queue's `[start, end)` narrowed by the pushed filters, and which of
   * their topics are compacted.
   */
  private def plannedRanges(): (Seq[RocketMQOffsetRange], Set[String]) = {
    val selection = options.topicSelection
    val reader = new RocketMQOffsetReader(options)
    try {
      // A pattern is resolved once, here: a topic deleted since the list is not read.
      val topics = reader.topicsOf(selection).filter(t => pushdown.topics.forall(_.contains(t)))
      if (topics.isEmpty) return (Nil, Set.empty)
      // Queues the offsets name are waited for while their broker group is missing from the route
      // (unavailable).
      val named = options.batchStartingOffsets.namedQueues ++ options.batchEndingOffsets.namedQueues
      val ranges = reader.fetchQueueRanges(topics, knownQueues = named, awaitIndexed = true,
        allowMissing = selection.isInstanceOf[RocketMQTopicSelection.Matching])
      val start =
        RocketMQOffsetResolver.resolve(options.batchStartingOffsets, ranges, isStart = true, reader)
      val end =
        RocketMQOffsetResolver.resolve(options.batchEndingOffsets, ranges, isStart = false, reader)
      val kept = start.keys.toSeq.sorted.filter(pushdown.keeps).map { queue =>
        val (from, until) = (start(queue), end(queue))
        if (from > until) throw RocketMQErrors.startAfterEnd(queue, from, until)
        pushdown.narrow(RocketMQOffsetRange(queue, from, until))
      }.filter(_.size > 0)
      // A store time bound is an offset of each queue: its first message stored at or after that
      // time, as the broker's time index answers it, checked (RocketMQStoreTimeCut).
      val storeTimes = new RocketMQStoreTimes(RocketMQReadSettings(options))
      def byTime(ranges: Seq[RocketMQOffsetRange], timeMs: Option[Long], lower: Boolean)
          : Seq[RocketMQOffsetRange] =
        timeMs match {
          case Some(ms) if ranges.nonEmpty =>
            val answers = reader.offsetsForTimestamp(ranges.map(_.queue), ms)
            ranges.map { r =>
              val cut =
                RocketMQStoreTimeCut.cut(ms, r.from, r.until, answers(r.queue), lower)(
                  storeTimes.at(r.queue, _))
              if (lower) r.copy(from = cut) else r.copy(until = cut)
            }.filter(_.size > 0)
          case _ => ranges
        }
      val compacted = reader.compactedTopics(kept.map(_.queue))
      val cut =
        try byTime(byTime(kept, pushdown.storeTimeFromMs, lower = true), pushdown.storeUntilMs,
            lower = false)
        finally storeTimes.close()
      (cut, compacted)
    } finally reader.close()
  }

  /** The rows this read plans: its offsets, at most the pushed limit. */
  def plannedRows: Long = {
    val offsets = partitions.map { case p: RocketMQInputPartition =>
      p.untilOffset - p.fromOffset
    }.sum
    pushdown.limit.fold(offsets)(n => math.min(offsets, n.toLong))
  }

  override def planInputPartitions(): Array[InputPartition] = partitions

  override def createReaderFactory(): PartitionReaderFactory = RocketMQPartitionReaderFactory.batch
}
