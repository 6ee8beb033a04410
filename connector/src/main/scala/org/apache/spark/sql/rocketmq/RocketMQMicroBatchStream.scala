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

import org.apache.spark.sql.connector.read.{InputPartition, PartitionReaderFactory}
import org.apache.spark.sql.connector.read.streaming._
import org.apache.spark.sql.rocketmq.common.RocketMQQueue
import org.apache.spark.sql.rocketmq.options.RocketMQOptions

/**
 * A Structured Streaming read of RocketMQ topics, one micro-batch at a time.
 *
 * An offset ([[RocketMQSourceOffset]]) holds, per queue, the next offset to read. A batch reads
 * `[previous end, end)` of every queue; its end is the queues' max offsets as one request per
 * broker reports them, cut down by `maxOffsetsPerTrigger` (shared out by backlog) or held back
 * while fewer than `minOffsetsPerTrigger` are new (for at most `maxTriggerDelay`). Queues that
 * appear while the query runs (a topic scaled out) are read from their earliest offset. The first
 * offsets come from the start options once, and are kept in the checkpoint; a restart resumes from
 * the checkpoint and ignores the start options.
 *
 * Offsets that cannot be read any more (expired, a queue or topic gone, offsets gone backwards
 * after a topic was recreated) fail the query, or with `failOnDataLoss=false` are logged and
 * skipped; a topic that comes back has its queues read from their earliest offsets. Those rules,
 * the first offsets and the planning of a batch's partitions are the [[RocketMQStreamPlanner]]'s,
 * which the real-time and continuous streams share.
 */
private[rocketmq] final class RocketMQMicroBatchStream(
    private[rocketmq] val planner: RocketMQStreamPlanner)
  extends MicroBatchStream
  with SupportsTriggerAvailableNow
  with ReportsSourceMetrics {

  def this(options: RocketMQOptions, checkpointLocation: String) =
    this(new RocketMQStreamPlanner(options, checkpointLocation))

  private val options = planner.options
  /**
   * Under Trigger.AvailableNow: the offsets that existed when the query started; read no further.
   */
  private var availableNowTarget: Option[Map[RocketMQQueue, Long]] = None
  private var lastBatchMs = System.currentTimeMillis()

  override def toString: String = s"RocketMQMicroBatchStream[${planner.describe}]"

  override def initialOffset(): Offset = planner.initialOffset()

  override def deserializeOffset(json: String): Offset = RocketMQSourceOffset.parse(json)

  /** Under maxBytesPerTrigger: how many offsets a batch's bytes come to. */
  private val triggerBytes = options(RocketMQOptions.MaxBytesPerTrigger).map(
    new RocketMQTriggerBytes(_, planner.settings))

  /**
   * The options' limits. Under maxBytesPerTrigger alone it is a row limit that never binds (not
   * "all available", which Spark passes where no limit may hold: the byte limit holds with it).
   */
  override def getDefaultReadLimit: ReadLimit = {
    val delay = options(RocketMQOptions.MaxTriggerDelay)
    val max = options(RocketMQOptions.MaxOffsetsPerTrigger)
      .orElse(triggerBytes.map(_ => Long.MaxValue))
    (options(RocketMQOptions.MinOffsetsPerTrigger), max) match {
      case (Some(min), Some(max)) =>
        ReadLimit.compositeLimit(Array(ReadLimit.minRows(min, delay), ReadLimit.maxRows(max)))
      case (Some(min), None) => ReadLimit.minRows(min, delay)
      case (None, Some(max)) => ReadLimit.maxRows(max)
      case _ => ReadLimit.allAvailable()
    }
  }

  /**
   * Under Trigger.AvailableNow: its end is taken at the first batch, once the queues read so far
   * are known.
   */
  private var availableNow = false

  override def prepareForTriggerAvailableNow(): Unit = availableNow = true

  override def latestOffset(): Offset = throw new UnsupportedOperationException(
    "RocketMQMicroBatchStream supports admission control: Spark calls latestOffset(start, limit)")

  override def latestOffset(start: Offset, limit: ReadLimit): Offset = {
    val startOffsets = RocketMQSourceOffset(start).queueOffsets
    // `start` is the end of the last completed batch: its progress can go to the brokers now
    // (Spark calls commit() for a batch only when it plans the next one; stop() commits the last).
    planner.commitProgress(startOffsets)
    val known = startOffsets.keySet
    // AvailableNow's end is what exists at its first batch, every queue the checkpoint names
    // included (a broker group wholly down, which the name server forgets, is waited for as
    // unavailable, never left out as gone), each master first asked to index what it stored.
    val firstOfAvailableNow = availableNow && availableNowTarget.isEmpty
    val now = planner.fetchLatest(known, awaitIndexed = firstOfAvailableNow)
    if (firstOfAvailableNow) availableNowTarget = Some(now.map { case (q, r) => q -> r.max })
    // A master's queue ending before where the stream is: its offsets went back (a recreated
    // topic), or the master has not indexed all it stored (restarted, it rebuilds its queues' tails
    // from its commit log). Asked again once each master has indexed what it stored: what still
    // ends before is gone.
    if (!firstOfAvailableNow &&
      now.exists { case (q, r) => !r.fromReplica && startOffsets.get(q).exists(r.max < _) }) {
      planner.fetchLatest(known, awaitIndexed = true)
    }
    val latest = availableNowTarget.getOrElse(planner.endsOf(startOffsets))
    val end = limitBatch(planner.startsOf(startOffsets, latest), latest, limit) match {
      case None => startOffsets // hold this trigger: not enough new offsets yet
      case Some(until) =>
        if (until != startOffsets) lastBatchMs = System.currentTimeMillis()
        until
    }
    RocketMQSourceOffset(end)
  }

  /** The batch's ends under `limit`; None when the batch should wait for more data. */
  private def limitBatch(from: Map[RocketMQQueue, Long], until: Map[RocketMQQueue, Long],
      limit: ReadLimit)
      : Option[Map[RocketMQQueue, Long]] = {
    val limits = limit match {
      case c: CompositeReadLimit => c.getReadLimits.toSeq
      case one => Seq(one)
    }
    val backlog = until.map { case (q, u) => math.max(0L, u - from(q)) }.sum
    val waitForMore = availableNowTarget.isEmpty && limits.exists {
      case m: ReadMinRows => backlog < m.minRows &&
        System.currentTimeMillis() - lastBatchMs < m.maxTriggerDelayMs
      case _ => false
    }
    if (waitForMore) None
    else {
      val byBytes = if (limit.isInstanceOf[ReadAllAvailable]) None
      else triggerBytes.map(_.offsetsFor(from, until))
      val most = (limits.collect { case m: ReadMaxRows => m.maxRows } ++ byBytes)
        .reduceOption[Long](math.min)
      val end = most.map(RocketMQOffsetRangeCalculator.rateLimit(from, until, _)).getOrElse(until)
      triggerBytes.foreach(_.planned(end.map { case (q, e) => e - from.getOrElse(q, e) }.sum))
      Some(end)
    }
  }

  override def reportLatestOffset(): Offset = {
    val latest = planner.latestRanges
    if (latest.isEmpty) null else RocketMQSourceOffset(latest.map { case (q, r) => q -> r.max })
  }

  override def planInputPartitions(start: Offset, end: Offset): Array[InputPartition] =
    planner.planBounded(start, end)

  /**
   * The queue waits the tasks of the batch being run measure (the real-time stream's tasks too),
   * made on the driver when first needed.
   */
  private[rocketmq] lazy val queueWait: RocketMQLatencyAccumulator =
    RocketMQLatencyAccumulator.register()

  override def createReaderFactory(): PartitionReaderFactory =
    new RocketMQPartitionReaderFactory(queueWait, readSizes)

  /** What a batch's tasks read, under maxBytesPerTrigger (else null: nothing gathered). */
  private[rocketmq] def readSizes: RocketMQReadSizes = triggerBytes.map(_.sizes).orNull

  override def commit(end: Offset): Unit =
    planner.commitProgress(RocketMQSourceOffset(end).queueOffsets)

  /**
   * How far the queues are behind ([[RocketMQStreamPlanner.lagMetrics]]), and how long the messages
   * of the batch that just ended waited in their queues: `queueWaitMsP50`, `queueWaitMsP99`,
   * `queueWaitMsMax` and `queueWaitCount` (none when it read none). Spark calls this once a batch's
   * job has ended, when every task's measures are in, and also after a trigger that ran no batch
   * (which then has none).
   */
  override def metrics(latestConsumedOffset: Optional[Offset]): java.util.Map[String, String] = {
    val waits =
      RocketMQLatencyAccumulator.progressMetrics(RocketMQCustomMetrics.QueueWait, queueWait.drain())
    if (waits.isEmpty) planner.lagMetrics(latestConsumedOffset)
    else (planner.lagMetrics(latestConsumedOffset).asScala ++ waits).asJava
  }

  override def stop(): Unit =
    try planner.commitProgressAtStop()
    finally planner.close()
}

private[rocketmq] object RocketMQMicroBatchStream {

  /**
   * The stream for this Spark: [[RocketMQRealTimeMicroBatchStream]] where Spark has real-time mode
   * (4.1 and later), made by reflection so that no class naming its interfaces is loaded on an
   * older Spark (and absent from the Spark 3.5 builds).
   */
  def apply(options: RocketMQOptions, checkpointLocation: String): MicroBatchStream =
    realTimeStream match {
      case Some(c) =>
        c.getConstructor(classOf[RocketMQOptions], classOf[String]).newInstance(options,
          checkpointLocation)
      case None => new RocketMQMicroBatchStream(options, checkpointLocation)
    }

  private lazy val realTimeStream: Option[Class[_ <: MicroBatchStream]] =
    try {
      Class.forName("org.apache.spark.sql.connector.read.streaming.SupportsRealTimeMode")
      Some(Class.forName(classOf[RocketMQMicroBatchStream].getName.replace("MicroBatch",
        "RealTimeMicroBatch"))
        .asSubclass(classOf[MicroBatchStream]))
    } catch { case _: ClassNotFoundException => None }
}
