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

import java.util.Optional

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.slf4j.LoggerFactory

import org.apache.spark.SparkContext
import org.apache.spark.sql.connector.read.InputPartition
import org.apache.spark.sql.connector.read.streaming.Offset
import org.apache.spark.sql.rocketmq.client.RocketMQOffsetReader
import org.apache.spark.sql.rocketmq.common.{
  RocketMQOffsetRange, RocketMQQueue, RocketMQQueueRange, RocketMQTopicSelection
}
import org.apache.spark.sql.rocketmq.consumer.{RocketMQQueuePuller, RocketMQReadSettings}
import org.apache.spark.sql.rocketmq.errors.{RocketMQErrorKinds, RocketMQErrors}
import org.apache.spark.sql.rocketmq.options.{RocketMQOffsetsJson, RocketMQOptions}

/**
 * What the three streams (micro-batch, real-time, continuous) share: the reader of the topics'
 * queues, where a stream starts, which queues a batch or an epoch reads and from where, the data
 * loss rules, the progress written to a consumer group, and the lag metrics. Each stream is a class
 * of its own that holds one planner.
 *
 * The rules, the same under every trigger: queues first seen while the query runs (a topic scaled
 * out) are read from their earliest offset; a queue of the stream's offsets whose broker group is
 * missing from the route is waited for (unavailable, not gone); a queue gone, or one whose offsets
 * went back (a recreated topic), fails the query, or with `failOnDataLoss=false` is logged and
 * skipped (a recreated queue read from its first offset). Called from Spark's stream execution
 * thread.
 */
private[rocketmq] final class RocketMQStreamPlanner(val options: RocketMQOptions,
    checkpointLocation: String) {
  private val log = LoggerFactory.getLogger(getClass)
  private val selection = options.topicSelection
  val settings: RocketMQReadSettings = RocketMQReadSettings(options)
  private[rocketmq] val reader = new RocketMQOffsetReader(options)

  /**
   * The queues' ranges as last fetched: what metrics measure against, and where new queues start.
   */
  @volatile private var ranges: Map[RocketMQQueue, RocketMQQueueRange] = Map.empty
  /**
   * Whether [[ranges]] were fetched after a real-time batch's tasks had all stopped (see
   * [[fetchAfterBatch]]).
   */
  @volatile private var freshAfterBatch = false
  /** Where queues first seen while the query runs start: their earliest offset when seen. */
  private var newQueueStarts: Map[RocketMQQueue, Long] = Map.empty

  def latestRanges: Map[RocketMQQueue, RocketMQQueueRange] = ranges

  /** What the stream reads, for names and logs. */
  def describe: String = selection.describe

  /**
   * The topics to look at now with `reader`: those the selection reads (a pattern's as the name
   * server lists them now), and those of the queues `known`, so that a topic deleted is seen gone.
   */
  def topicsNow(reader: RocketMQOffsetReader, known: Set[RocketMQQueue]): Seq[String] =
    (reader.topicsOf(selection) ++ known.map(_.topic).toSeq.sorted).distinct

  /** A pattern's topics may be none for now, or go: they are looked for again at each batch. */
  private val matching = selection.isInstanceOf[RocketMQTopicSelection.Matching]

  /** The stream's first offsets: from the start options once, then from the checkpoint's store. */
  def initialOffset(): RocketMQSourceOffset = {
    val store = new RocketMQInitialOffsetStore(checkpointLocation,
      SparkContext.getOrCreate().hadoopConfiguration)
    store.getOrCreate { () =>
      // Queues the start names are waited for while their group is missing from the route, as in a
      // batch read.
      val now = reader.fetchQueueRanges(topicsNow(reader, Set.empty), allowMissing = matching,
        knownQueues = options.streamStartingOffsets.namedQueues)
      val offsets =
        RocketMQOffsetResolver.resolve(options.streamStartingOffsets, now, isStart = true, reader)
      log.info(
        s"RocketMQ stream of $describe starts at " +
          s"${RocketMQOffsetsJson.format(offsets)}")
      RocketMQSourceOffset(offsets)
    }
  }

  /**
   * The queues' ranges now, kept as the latest. Queues of `known` (the stream's offsets) whose
   * group is missing from the route are waited for; with `awaitIndexed`, each master is first asked
   * to index what it stored.
   */
  def fetchLatest(known: Set[RocketMQQueue], awaitIndexed: Boolean = false)
      : Map[RocketMQQueue, RocketMQQueueRange] = {
    val reuse = freshAfterBatch && !awaitIndexed && known.forall(ranges.contains)
    freshAfterBatch = false
    if (!reuse) ranges = reader.fetchQueueRanges(topicsNow(reader, known), allowMissing = true,
      knownQueues = known, awaitIndexed = awaitIndexed)
    ranges
  }

  /**
   * The queues' ranges now, fetched once a real-time batch's tasks have stopped (for its progress):
   * the next call of [[fetchLatest]], when the next batch starts a moment later, takes them as they
   * are instead of asking the brokers again, if they name every queue it knows (else it asks, and
   * waits for a group missing from the route). Every offset the stopped tasks reached was stored
   * before this fetch, so these ends are at or past it.
   */
  def fetchAfterBatch(): Unit = {
    fetchLatest(Set.empty)
    freshAfterBatch = true
  }

  /**
   * Each queue's end now. A replica standing in for its group's master may trail where the stream
   * already is (it copies from the master asynchronously): there, nothing is new yet; the stream
   * never goes back.
   */
  def endsOf(startOffsets: Map[RocketMQQueue, Long]): Map[RocketMQQueue, Long] = ranges.map {
    case (q, r) =>
      q -> (if (r.fromReplica) math.max(r.max, startOffsets.getOrElse(q, r.max)) else r.max)
  }

  /**
   * Where each queue of `latest` (its ends) is read from after `startOffsets`: a queue first seen
   * now from its earliest offset (kept for later batches), one whose offsets went back (topic
   * recreated) from its first one left, if the query goes on.
   */
  def startsOf(startOffsets: Map[RocketMQQueue, Long], latest: Map[RocketMQQueue, Long])
      : Map[RocketMQQueue, Long] = {
    (latest.keySet -- startOffsets.keySet -- newQueueStarts.keySet).foreach { q =>
      newQueueStarts += q -> ranges.get(q).map(_.min).getOrElse(0L)
    }
    latest.map { case (q, l) =>
      val start = startOffsets.getOrElse(q, newQueueStarts(q))
      q -> (if (l < start) ranges.get(q).map(_.min).getOrElse(l) else start)
    }
  }

  /** The input partitions of a batch that reads `[start, end)`. */
  def planBounded(start: Offset, end: Offset): Array[InputPartition] = {
    val from = RocketMQSourceOffset(start).queueOffsets
    val until = RocketMQSourceOffset(end).queueOffsets
    (from.keySet -- until.keySet).foreach(q => reportDataLoss(RocketMQErrors.queueGone(q, from(q))))
    val unknownStarts = until.keySet -- from.keySet -- newQueueStarts.keySet
    if (unknownStarts.nonEmpty) { // a restart replays a batch that found new queues
      val now = reader.fetchQueueRanges(unknownStarts.map(_.topic).toSeq.sorted.distinct,
        allowMissing = true)
      unknownStarts.foreach(q => newQueueStarts += q -> now.get(q).map(_.min).getOrElse(0L))
    }
    val planned = until.toSeq.sortBy(_._1).map { case (q, u) =>
      val f = from.getOrElse(q, newQueueStarts(q))
      if (u < f) {
        reportDataLoss(RocketMQErrors.dataLoss(q, u, f,
          RocketMQErrorKinds.DataLossReason.OffsetsWentBack))
        // Going on: read the recreated queue from its first offset.
        val first =
          ranges.get(q).orElse(reader.fetchQueueRanges(Seq(q.topic), allowMissing = true).get(q))
            .map(_.min).getOrElse(u)
        RocketMQOffsetRange(q, math.min(first, u), u)
      } else RocketMQOffsetRange(q, f, u)
    }
    RocketMQOffsetRangeCalculator.partitions(planned, options(RocketMQOptions.MinPartitions),
      settings.reading(reader.compactedTopics(planned.map(_.queue))),
      RocketMQOffsetRangeCalculator.executorLocations()).toArray[InputPartition]
  }

  /**
   * The plan of a read with no end from `start` (a real-time batch, continuous processing): the
   * queues there are now, each with the offset it starts at. With `refetch` the queues are looked
   * up now; without, those of the last look-up are used if they name every queue of `start` (Spark
   * usually asks for the latest offsets before each real-time batch, but not before a batch it runs
   * again after a restart).
   */
  def planOpen(start: Offset, refetch: Boolean): RocketMQOpenPlan = {
    val startOffsets = RocketMQSourceOffset(start).queueOffsets
    if (refetch || ranges.isEmpty || !startOffsets.keySet.forall(ranges.contains)) {
      fetchLatest(startOffsets.keySet)
    }
    val latest = endsOf(startOffsets)
    (startOffsets.keySet -- latest.keySet).foreach(q =>
      reportDataLoss(RocketMQErrors.queueGone(q, startOffsets(q))))
    latest.foreach { case (q, l) =>
      startOffsets.get(q).filter(_ > l).foreach { s =>
        reportDataLoss(RocketMQErrors.dataLoss(q, l, s,
          RocketMQErrorKinds.DataLossReason.OffsetsWentBack))
      }
    }
    RocketMQOpenPlan(startsOf(startOffsets, latest))
  }

  /**
   * One input partition per queue of `plan`, in its order, each read from its start with no end.
   */
  def openPartitions(plan: RocketMQOpenPlan): IndexedSeq[RocketMQInputPartition] = {
    val executors = RocketMQOffsetRangeCalculator.executorLocations()
    // Every task of an open plan runs the whole batch or epoch at once.
    val planned = settings.reading(reader.compactedTopics(plan.queues))
      .asPlanned(plan.queues.size, allAtOnce = true)
    plan.queues.map { q =>
      RocketMQInputPartition(q, plan.from(q), RocketMQQueuePuller.Open, planned,
        RocketMQOffsetRangeCalculator.preferredExecutor(q, executors))
    }
  }

  def reportDataLoss(error: Throwable): Unit = {
    if (settings.failOnDataLoss) throw error
    log.warn(s"Skipping lost data (failOnDataLoss=false): ${error.getMessage}")
  }

  /**
   * With option consumerGroup: writes processed offsets to the brokers (unchanged ones are
   * skipped).
   */
  def commitProgress(
      offsets: Map[RocketMQQueue, Long]): Unit = options(RocketMQOptions.ConsumerGroup).foreach {
    group =>
      try reader.commitGroupOffsets(group, offsets)
      catch {
        // Progress in the brokers is for monitoring; the checkpoint is the source of truth.
        case NonFatal(e) =>
          log.warn(s"Could not commit progress of consumer group '$group' to RocketMQ: $e")
      }
  }

  /**
   * With option consumerGroup, when the stream stops: commits where it stood at the end of the
   * last micro-batch the query's checkpoint records as done (a batch's end is otherwise committed
   * only when a later trigger plans from it). Never a batch Spark did not record as done.
   */
  def commitProgressAtStop(): Unit = if (options(RocketMQOptions.ConsumerGroup).isDefined) {
    val hadoopConf = SparkContext.getOrCreate().hadoopConfiguration
    RocketMQCommittedBatch.lastEnd(checkpointLocation, hadoopConf).foreach { json =>
      // Spark interrupts the stream thread to stop it; the commit's requests would fail at once.
      val interrupted = Thread.interrupted()
      try commitProgress(RocketMQSourceOffset.parse(json).queueOffsets)
      finally if (interrupted) Thread.currentThread().interrupt()
    }
  }

  /** How far behind the latest ranges the consumed offsets are, per queue: min, max and mean. */
  def lagMetrics(latestConsumedOffset: Optional[Offset]): java.util.Map[String, String] = {
    val consumed = if (latestConsumedOffset.isPresent)
      RocketMQSourceOffset(latestConsumedOffset.get).queueOffsets
    else Map.empty[RocketMQQueue, Long]
    val behind = consumed.toSeq.flatMap { case (q, o) =>
      ranges.get(q).map(r => math.max(0L, r.max - o))
    }
    if (behind.isEmpty) java.util.Collections.emptyMap()
    else Map(
      "minOffsetsBehindLatest" -> behind.min.toString,
      "maxOffsetsBehindLatest" -> behind.max.toString,
      "avgOffsetsBehindLatest" -> (behind.sum.toDouble / behind.size).toString).asJava
  }

  def close(): Unit = reader.close()
}
