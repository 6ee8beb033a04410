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

import java.util.concurrent.{Callable, Executors, Future, TimeUnit}

import scala.util.control.NonFatal

import org.slf4j.LoggerFactory

import org.apache.spark.SparkContext
import org.apache.spark.sql.connector.read.InputPartition
import org.apache.spark.sql.connector.read.streaming.{
  ContinuousPartitionReaderFactory, ContinuousStream, Offset,
  PartitionOffset
}

/**
 * A stream under continuous processing (`Trigger.Continuous`): one long-running task per queue reads from where
 * the last committed epoch ended, with no end, each message going on through the query as it arrives
 * ([[RocketMQContinuousPartitionReader]]). At each epoch Spark collects where every task is and writes the merged
 * offsets ([[mergeOffsets]]) to the checkpoint, in the micro-batch's format: a query can move between continuous,
 * micro-batch and real-time triggers on one checkpoint. The first offsets, the data loss rules and queues that
 * appear (read from their earliest offset) are those of micro-batches; a change in the topics' queues is noticed
 * in the background at most once a second ([[needsReconfiguration]]), and Spark then plans the tasks again from
 * the last committed epoch. Options that bound, delay or split a batch are refused.
 */
private[rocketmq] final class RocketMQContinuousStream(options: RocketMQOptions, checkpointLocation: String)
  extends RocketMQMicroBatchStream(options, checkpointLocation)
  with ContinuousStream {

  import RocketMQContinuousStream._

  /** Where the running plan's tasks started, and the queue of each task, by input partition. */
  @volatile private var planStart: Map[RocketMQQueue, Long] = Map.empty
  @volatile private var planQueues: IndexedSeq[RocketMQQueue] = IndexedSeq.empty

  /** Looks at the topics' queues off the epoch thread, with a client of its own (a slow broker stalls no epoch). */
  private lazy val checker = Executors.newSingleThreadExecutor((r: Runnable) => {
    val thread = new Thread(r, s"rocketmq-continuous-queues-${topics.mkString(",")}")
    thread.setDaemon(true)
    thread
  })
  private lazy val checkReader = new RocketMQOffsetReader(options)
  private var check: Future[Boolean] = _
  private var lastCheckMs = 0L

  override def toString: String = s"RocketMQContinuousStream[${topics.mkString(",")}]"

  override def planInputPartitions(start: Offset): Array[InputPartition] = {
    latestRanges = Map.empty // each plan looks at the queues there are now
    val (from, queues) = planOpen(start)
    planStart = from
    planQueues = queues
    val slots = Option(SparkContext.getActive.orNull).map(_.defaultParallelism).getOrElse(Int.MaxValue)
    if (queues.size > slots) {
      log.warn(s"Continuous processing of ${topics.mkString(",")} runs one task per queue, ${queues.size} in all, " +
        s"but Spark has $slots task slots: the tasks that do not start hold every epoch back")
    }
    openPartitions(from, queues).zipWithIndex.map { case (p, i) =>
      RocketMQContinuousInputPartition(p, i): InputPartition
    }.toArray
  }

  override def createContinuousReaderFactory(): ContinuousPartitionReaderFactory = RocketMQContinuousReaderFactory

  override def mergeOffsets(offsets: Array[PartitionOffset]): Offset = openEnd(planStart, planQueues, offsets)

  /** Whether the topics' queues differ from the running plan's, as the last background look found. */
  override def needsReconfiguration(): Boolean = synchronized {
    val planned = planQueues.toSet
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
        override def call(): Boolean = checkReader.fetchQueueRanges(topics, allowMissing = true).keySet != planned
      })
    }
    changed
  }

  override def stop(): Unit = {
    try super.stop()
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
