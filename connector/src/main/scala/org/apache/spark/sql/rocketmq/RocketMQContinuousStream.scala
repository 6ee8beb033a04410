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
import java.util.concurrent.{Callable, Executors, Future, TimeUnit}

import scala.util.control.NonFatal

import org.slf4j.LoggerFactory

import org.apache.spark.SparkContext
import org.apache.spark.sql.connector.read.InputPartition
import org.apache.spark.sql.connector.read.streaming.{
  ContinuousPartitionReaderFactory, ContinuousStream, Offset, PartitionOffset, ReportsSourceMetrics
}
import org.apache.spark.sql.rocketmq.client.RocketMQOffsetReader
import org.apache.spark.sql.rocketmq.options.RocketMQOptions

/**
 * A stream under continuous processing (`Trigger.Continuous`): one long-running task per queue
 * reads from where the last committed epoch ended, with no end, each message going on through the
 * query as it arrives ([[RocketMQContinuousPartitionReader]]). At each epoch Spark collects where
 * every task is, each task's offset naming its queue, and writes the merged offsets
 * ([[mergeOffsets]]) to the checkpoint, in the micro-batch's format: a query can move between
 * continuous, micro-batch and real-time triggers on one checkpoint. The first offsets, the data
 * loss rules and queues that appear (read from their earliest offset) are those of micro-batches
 * (the [[RocketMQStreamPlanner]]'s); a change in the topics' queues is noticed in the background at
 * most once a second ([[needsReconfiguration]]), and Spark then plans the tasks again from the last
 * committed epoch. Options that bound, delay or split a batch are refused.
 */
private[rocketmq] final class RocketMQContinuousStream(options: RocketMQOptions,
    checkpointLocation: String)
  extends ContinuousStream
  with ReportsSourceMetrics {

  import RocketMQContinuousStream._

  private val planner = new RocketMQStreamPlanner(options, checkpointLocation)
  private val topics = planner.describe

  /** The running plan: where its tasks started, by queue. */
  @volatile private var plan = RocketMQOpenPlan(Map.empty)

  /**
   * Looks at the topics' queues off the epoch thread, with a client of its own (a slow broker
   * stalls no epoch).
   */
  private lazy val checker = Executors.newSingleThreadExecutor((r: Runnable) => {
    val thread = new Thread(r, s"rocketmq-continuous-queues-$topics")
    thread.setDaemon(true)
    thread
  })
  private lazy val checkReader = new RocketMQOffsetReader(options)
  private var check: Future[Boolean] = _
  private var lastCheckMs = 0L

  override def toString: String = s"RocketMQContinuousStream[$topics]"

  override def initialOffset(): Offset = planner.initialOffset()

  override def deserializeOffset(json: String): Offset = RocketMQSourceOffset.parse(json)

  override def planInputPartitions(start: Offset): Array[InputPartition] = {
    val next =
      planner.planOpen(start, refetch = true) // each plan looks at the queues there are now
    plan = next
    val slots =
      Option(SparkContext.getActive.orNull).map(_.defaultParallelism).getOrElse(Int.MaxValue)
    if (next.queues.size > slots) {
      log.warn(s"Continuous processing of $topics runs one task per queue, " +
        s"${next.queues.size} in all, but Spark has $slots task slots: the tasks that do not " +
        "start hold every epoch back")
    }
    planner.openPartitions(next).toArray[InputPartition]
  }

  override def createContinuousReaderFactory(): ContinuousPartitionReaderFactory =
    RocketMQContinuousReaderFactory

  override def mergeOffsets(offsets: Array[PartitionOffset]): Offset = plan.end(offsets)

  /**
   * Whether the topics' queues differ from the running plan's, as the last background look found.
   */
  override def needsReconfiguration(): Boolean = synchronized {
    val planned = plan.from.keySet
    if (planned.isEmpty) return false
    val changed = check != null && check.isDone && {
      val found = try check.get()
      catch { case NonFatal(e) => log.debug(s"Queue check failed: $e"); false }
      check = null
      found
    }
    if (!changed && check == null && System.currentTimeMillis() - lastCheckMs >= CheckIntervalMs) {
      lastCheckMs = System.currentTimeMillis()
      check = checker.submit(new Callable[Boolean] {
        override def call(): Boolean =
          checkReader.fetchQueueRanges(planner.topicsNow(checkReader, planned),
            allowMissing = true).keySet != planned
      })
    }
    changed
  }

  override def commit(end: Offset): Unit =
    planner.commitProgress(RocketMQSourceOffset(end).queueOffsets)

  override def metrics(latestConsumedOffset: Optional[Offset]): java.util.Map[String, String] =
    planner.lagMetrics(latestConsumedOffset)

  override def stop(): Unit = {
    try planner.close()
    finally synchronized {
        if (check != null || lastCheckMs > 0) {
          checker.shutdownNow()
          checker.awaitTermination(10, TimeUnit.SECONDS)
          checkReader.close()
        }
      }
  }
}

private[rocketmq] object RocketMQContinuousStream {
  private val log = LoggerFactory.getLogger(classOf[RocketMQContinuousStream])

  /** The queues are looked at no more often than this. */
  private val CheckIntervalMs = 1000L
}
