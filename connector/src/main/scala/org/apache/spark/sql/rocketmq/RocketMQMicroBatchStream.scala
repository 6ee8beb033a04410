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
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReaderFactory}
import org.apache.spark.sql.connector.read.streaming._
import org.apache.spark.sql.rocketmq.consumer.{RocketMQQueuePuller, RocketMQReadSettings}

/**
 * A Structured Streaming read of RocketMQ topics, one micro-batch at a time.
 *
 * An offset ([[RocketMQSourceOffset]]) holds, per queue, the next offset to read. A batch reads
 * `[previous end, end)` of every queue; its end is the queues' max offsets as one request per broker
 * reports them, cut down by `maxOffsetsPerTrigger` (shared out by backlog) or held back while fewer
 * than `minOffsetsPerTrigger` are new (for at most `maxTriggerDelay`). Queues that appear while the
 * query runs (a topic scaled out) are read from their earliest offset. The first offsets come from
 * the start options once, and are kept in the checkpoint; a restart resumes from the checkpoint and
 * ignores the start options.
 *
 * Offsets that cannot be read any more (expired, a queue or topic gone, offsets gone backwards after a
 * topic was recreated) fail the query, or with `failOnDataLoss=false` are logged and skipped; a topic
 * that comes back has its queues read from their earliest offsets.
 */
private[rocketmq] class RocketMQMicroBatchStream(options: RocketMQOptions, checkpointLocation: String)
  extends MicroBatchStream
  with SupportsTriggerAvailableNow
  with ReportsSourceMetrics {

  private val log = LoggerFactory.getLogger(getClass)
  protected val topics: Seq[String] = options.topicsToRead
  protected val settings: RocketMQReadSettings = RocketMQReadSettings(options)
  private[rocketmq] val reader = new RocketMQOffsetReader(options)

  /** Queue ranges of the latest trigger: the "latest" that metrics measure against. */
  protected var latestRanges: Map[RocketMQQueue, RocketMQQueueRange] = Map.empty
  /** Where queues first seen while the query runs start: their earliest offset when seen. */
  private var newQueueStarts: Map[RocketMQQueue, Long] = Map.empty
  /** Under Trigger.AvailableNow: the offsets that existed when the query started; read no further. */
  private var availableNowTarget: Option[Map[RocketMQQueue, Long]] = None
  private var lastBatchMs = System.currentTimeMillis()

  override def toString: String = s"RocketMQMicroBatchStream[${topics.mkString(",")}]"

  override def initialOffset(): Offset = {
    val store = new RocketMQInitialOffsetStore(checkpointLocation, SparkContext.getOrCreate().hadoopConfiguration)
    store.getOrCreate { () =>
      val ranges = reader.fetchQueueRanges(topics)
      val offsets = RocketMQOffsetResolver.resolve(options.streamStartingOffsets, ranges, isStart = true, reader)
      log.info(s"RocketMQ stream of ${topics.mkString(",")} starts at ${RocketMQOffsetsJson.format(offsets)}")
      RocketMQSourceOffset(offsets)
    }
  }

  override def deserializeOffset(json: String): Offset = RocketMQSourceOffset.parse(json)

  override def getDefaultReadLimit: ReadLimit = {
    val delay = options(RocketMQOptions.MaxTriggerDelay)
    (options(RocketMQOptions.MinOffsetsPerTrigger), options(RocketMQOptions.MaxOffsetsPerTrigger)) match {
      case (Some(min), Some(max)) =>
        ReadLimit.compositeLimit(Array(ReadLimit.minRows(min, delay), ReadLimit.maxRows(max)))
      case (Some(min), None) => ReadLimit.minRows(min, delay)
      case (None, Some(max)) => ReadLimit.maxRows(max)
      case _ => ReadLimit.allAvailable()
    }
  }

  /** Under Trigger.AvailableNow: its end is taken at the first batch, once the queues read so far are known. */
  private var availableNow = false

  override def prepareForTriggerAvailableNow(): Unit = availableNow = true

  override def latestOffset(): Offset = throw new UnsupportedOperationException(
    "RocketMQMicroBatchStream supports admission control: Spark calls latestOffset(start, limit)")

  override def latestOffset(start: Offset, limit: ReadLimit): Offset = {
    val startOffsets = RocketMQSourceOffset(start).queueOffsets
    // `start` is the end of the last completed batch: its progress can go to the brokers now
    // (Spark calls commit() for a batch only when it plans the next one).
    commitProgress(startOffsets)
    val ranges = {
      val known = startOffsets.keySet
      // AvailableNow's end is what exists at its first batch, every queue the checkpoint names included (a broker
      // group wholly down, which the name server forgets, is waited for as unavailable, never left out as gone),
      // each master first asked to index what it stored.
      val firstOfAvailableNow = availableNow && availableNowTarget.isEmpty
      val now = reader.fetchQueueRanges(topics, allowMissing = true, knownQueues = known,
        awaitIndexed = firstOfAvailableNow)
      if (firstOfAvailableNow) availableNowTarget = Some(now.map { case (q, r) => q -> r.max })
      // A master's queue ending before where the stream is: its offsets went back (a recreated topic), or the
      // master has not indexed all it stored (restarted, it rebuilds its queues' tails from its commit log).
      // Asked again once each master has indexed what it stored: what still ends before is gone.
      if (!firstOfAvailableNow &&
        now.exists { case (q, r) => !r.fromReplica && startOffsets.get(q).exists(r.max < _) }) {
        reader.fetchQueueRanges(topics, allowMissing = true, knownQueues = known, awaitIndexed = true)
      } else now
    }
    latestRanges = ranges
    val latest = availableNowTarget.getOrElse(endsOf(ranges, startOffsets))
    val end = limitBatch(startsOf(startOffsets, latest), latest, limit) match {
      case None => startOffsets // hold this trigger: not enough new offsets yet
      case Some(until) =>
        if (until != startOffsets) lastBatchMs = System.currentTimeMillis()
        until
    }
    RocketMQSourceOffset(end)
  }

  /**
   * Each queue's end now. A replica standing in for its group's master may trail where the stream already is
   * (it copies from the master asynchronously): there, nothing is new yet; the stream never goes back.
   */
  protected def endsOf(ranges: Map[RocketMQQueue, RocketMQQueueRange], startOffsets: Map[RocketMQQueue, Long])
      : Map[RocketMQQueue, Long] = ranges.map { case (q, r) =>
    q -> (if (r.fromReplica) math.max(r.max, startOffsets.getOrElse(q, r.max)) else r.max)
  }

  /**
   * Where each queue of `latest` (its ends) is read from after `startOffsets`: a queue first seen now from its
   * earliest offset (kept for later batches), one whose offsets went back (topic recreated) from its first one
   * left, if the query goes on.
   */
  protected def startsOf(startOffsets: Map[RocketMQQueue, Long], latest: Map[RocketMQQueue, Long])
      : Map[RocketMQQueue, Long] = {
    (latest.keySet -- startOffsets.keySet -- newQueueStarts.keySet).foreach { q =>
      newQueueStarts += q -> latestRanges.get(q).map(_.min).getOrElse(0L)
    }
    latest.map { case (q, l) =>
      val start = startOffsets.getOrElse(q, newQueueStarts(q))
      q -> (if (l < start) latestRanges.get(q).map(_.min).getOrElse(l) else start)
    }
  }

  /** The batch's ends under `limit`; None when the batch should wait for more data. */
  private def limitBatch(from: Map[RocketMQQueue, Long], until: Map[RocketMQQueue, Long], limit: ReadLimit)
      : Option[Map[RocketMQQueue, Long]] = {
    val limits = limit match {
      case c: CompositeReadLimit => c.getReadLimits.toSeq
      case one => Seq(one)
    }
    val backlog = until.map { case (q, u) => math.max(0L, u - from(q)) }.sum
    val waitForMore = availableNowTarget.isEmpty && limits.exists {
      case m: ReadMinRows => backlog < m.minRows && System.currentTimeMillis() - lastBatchMs < m.maxTriggerDelayMs
      case _ => false
    }
    if (waitForMore) None
    else Some(limits.collectFirst { case m: ReadMaxRows => m.maxRows }
      .map(max => RocketMQOffsetRangeCalculator.rateLimit(from, until, max))
      .getOrElse(until))
  }

  override def reportLatestOffset(): Offset =
    if (latestRanges.isEmpty) null else RocketMQSourceOffset(latestRanges.map { case (q, r) => q -> r.max })

  override def planInputPartitions(start: Offset, end: Offset): Array[InputPartition] = {
    val from = RocketMQSourceOffset(start).queueOffsets
    val until = RocketMQSourceOffset(end).queueOffsets
    (from.keySet -- until.keySet).foreach { q =>
      reportDataLoss(RocketMQErrors.queueGone(q, from(q)))
    }
    val unknownStarts = until.keySet -- from.keySet -- newQueueStarts.keySet
    if (unknownStarts.nonEmpty) { // a restart replays a batch that found new queues
      val ranges = reader.fetchQueueRanges(topics, allowMissing = true)
      unknownStarts.foreach(q => newQueueStarts += q -> ranges.get(q).map(_.min).getOrElse(0L))
    }
    val ranges = until.toSeq.sortBy(_._1).map { case (q, u) =>
      val f = from.getOrElse(q, newQueueStarts(q))
      if (u < f) {
        reportDataLoss(RocketMQErrors.dataLoss(q, u, f, RocketMQErrors.DataLossReason.OffsetsWentBack))
        // Going on: read the recreated queue from its first offset.
        val first = latestRanges.get(q).orElse(reader.fetchQueueRanges(Seq(q.topic), allowMissing = true).get(q)).map(
          _.min).getOrElse(u)
        RocketMQOffsetRange(q, math.min(first, u), u)
      } else RocketMQOffsetRange(q, f, u)
    }
    RocketMQOffsetRangeCalculator.partitions(ranges, options(RocketMQOptions.MinPartitions), settings,
      RocketMQOffsetRangeCalculator.executorLocations()).toArray[InputPartition]
  }

  /**
   * The queues a stream reads with no end from `start` (in real-time batches and continuous processing), each
   * with the offset it starts at, sorted: the input partitions' order. Queues gone since `start`, and queues whose
   * offsets went back (a recreated topic), follow `failOnDataLoss`; queues new since then start at their earliest
   * offset.
   */
  protected def planOpen(start: Offset): (Map[RocketMQQueue, Long], IndexedSeq[RocketMQQueue]) = {
    val startOffsets = RocketMQSourceOffset(start).queueOffsets
    // Spark asks for the latest offsets before each real-time batch: latestRanges then lists the queues there are.
    // (A queue of `start` whose broker group is missing from the route is waited for: unavailable, not gone.)
    if (latestRanges.isEmpty) {
      latestRanges = reader.fetchQueueRanges(topics, allowMissing = true, knownQueues = startOffsets.keySet)
    }
    val latest = endsOf(latestRanges, startOffsets)
    (startOffsets.keySet -- latest.keySet).foreach(q => reportDataLoss(RocketMQErrors.queueGone(q, startOffsets(q))))
    latest.foreach { case (q, l) =>
      startOffsets.get(q).filter(_ > l).foreach { s =>
        reportDataLoss(RocketMQErrors.dataLoss(q, l, s, RocketMQErrors.DataLossReason.OffsetsWentBack))
      }
    }
    val from = startsOf(startOffsets, latest)
    (from, from.keys.toIndexedSeq.sorted)
  }

  /** One input partition per queue of `queues`, each read from `from` with no end. */
  protected def openPartitions(from: Map[RocketMQQueue, Long], queues: IndexedSeq[RocketMQQueue])
      : IndexedSeq[RocketMQInputPartition] = {
    val executors = RocketMQOffsetRangeCalculator.executorLocations()
    queues.map { q =>
      RocketMQInputPartition(q, from(q), RocketMQQueuePuller.Open, settings.asPlanned,
        RocketMQOffsetRangeCalculator.preferredExecutor(q, executors))
    }
  }

  /** The end of a read with no end: `from`, moved on by where the task of each queue (by index) stopped. */
  protected def openEnd(from: Map[RocketMQQueue, Long], queues: IndexedSeq[RocketMQQueue],
      offsets: Array[PartitionOffset]): Offset =
    RocketMQSourceOffset(from ++ offsets.map {
      case RocketMQQueueOffset(partition, offset) if queues.indices.contains(partition) => queues(partition) -> offset
      case other => throw new IllegalArgumentException(
          s"Not the offset of one of the ${queues.size} queues this stream planned: $other")
    })

  protected def reportDataLoss(error: Throwable): Unit = {
    if (settings.failOnDataLoss) throw error
    log.warn(s"Skipping lost data (failOnDataLoss=false): ${error.getMessage}")
  }

  override def createReaderFactory(): PartitionReaderFactory = RocketMQPartitionReaderFactory

  override def commit(end: Offset): Unit = commitProgress(RocketMQSourceOffset(end).queueOffsets)

  /** With option consumerGroup: writes processed offsets to the brokers (unchanged ones are skipped). */
  private def commitProgress(
      offsets: Map[RocketMQQueue, Long]): Unit = options(RocketMQOptions.ConsumerGroup).foreach { group =>
    try reader.commitGroupOffsets(group, offsets)
    catch {
      // Progress in the brokers is for monitoring; the checkpoint is the source of truth.
      case NonFatal(e) => log.warn(s"Could not commit progress of consumer group '$group' to RocketMQ: $e")
    }
  }

  override def metrics(latestConsumedOffset: Optional[Offset]): java.util.Map[String, String] = {
    val consumed = if (latestConsumedOffset.isPresent) RocketMQSourceOffset(latestConsumedOffset.get).queueOffsets
    else Map.empty[RocketMQQueue, Long]
    val behind = consumed.toSeq.flatMap { case (q, o) => latestRanges.get(q).map(r => math.max(0L, r.max - o)) }
    if (behind.isEmpty) java.util.Collections.emptyMap()
    else Map(
      "minOffsetsBehindLatest" -> behind.min.toString,
      "maxOffsetsBehindLatest" -> behind.max.toString,
      "avgOffsetsBehindLatest" -> (behind.sum.toDouble / behind.size).toString).asJava
  }

  override def stop(): Unit = reader.close()
}

private[rocketmq] object RocketMQMicroBatchStream {

  /**
   * The stream for this Spark: [[RocketMQRealTimeMicroBatchStream]] where Spark has real-time mode (4.1 and
   * later), made by reflection so that no class naming its interfaces is loaded on an older Spark (and absent
   * from the Spark 3.5 builds).
   */
  def apply(options: RocketMQOptions, checkpointLocation: String): RocketMQMicroBatchStream =
    realTimeStream match {
      case Some(c) => c.getConstructor(classOf[RocketMQOptions], classOf[String]).newInstance(options,
          checkpointLocation)
      case None => new RocketMQMicroBatchStream(options, checkpointLocation)
    }

  private lazy val realTimeStream: Option[Class[_ <: RocketMQMicroBatchStream]] =
    try {
      Class.forName("org.apache.spark.sql.connector.read.streaming.SupportsRealTimeMode")
      Some(Class.forName(classOf[RocketMQMicroBatchStream].getName.replace("MicroBatch", "RealTimeMicroBatch"))
        .asSubclass(classOf[RocketMQMicroBatchStream]))
    } catch { case _: ClassNotFoundException => None }
}
