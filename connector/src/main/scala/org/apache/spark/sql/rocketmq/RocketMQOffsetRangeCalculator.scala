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

import org.apache.spark.SparkEnv
import org.apache.spark.sql.rocketmq.common.{RocketMQOffsetRange, RocketMQQueue}
import org.apache.spark.sql.rocketmq.consumer.RocketMQReadSettings

/**
 * Turns per-queue ranges into Spark input partitions: one per queue with something to read, and,
 * when `minPartitions` asks for more, large ranges cut into contiguous pieces in proportion to
 * their size. A queue read whole prefers the same executor in every batch (so that executor's
 * cached consumer and open connections are reused); a piece of a split range prefers none.
 */
private[rocketmq] object RocketMQOffsetRangeCalculator {

  def partitions(
      ranges: Seq[RocketMQOffsetRange],
      minPartitions: Option[Int],
      settings: RocketMQReadSettings,
      executors: Seq[String]): Seq[RocketMQInputPartition] = {
    val nonEmpty = ranges.filter(_.size > 0)
    val pieces: Seq[(RocketMQOffsetRange, Boolean)] = minPartitions match {
      case Some(min) if min > nonEmpty.size => split(nonEmpty, min)
      case _ => nonEmpty.map(_ -> false)
    }
    val planned = settings.asPlanned(pieces.size, allAtOnce = false)
    pieces.map { case (r, isPiece) =>
      RocketMQInputPartition(r.queue, r.from, r.until, planned,
        if (isPiece) None else preferredExecutor(r.queue, executors))
    }
  }

  /** Each range gets `ceil(size / total * min)` pieces (at least 1, at most one per offset). */
  private[rocketmq] def split(ranges: Seq[RocketMQOffsetRange], min: Int)
      : Seq[(RocketMQOffsetRange, Boolean)] = {
    val total = ranges.map(_.size).sum.toDouble
    ranges.flatMap { r =>
      val parts = math.min(r.size, math.max(1L, math.ceil(r.size / total * min).toLong)).toInt
      if (parts == 1) Seq(r -> false)
      else (0 until parts).map { i =>
        val from = r.from + r.size * i / parts
        val until = r.from + r.size * (i + 1) / parts
        RocketMQOffsetRange(r.queue, from, until) -> true
      }
    }
  }

  /**
   * Ends for a micro-batch that reads at most `limit` offsets in all, shared out in proportion to
   * each queue's backlog (`until - from`): whole shares rounded down, the remainder given one
   * offset at a time to the queues with the largest fractions. The total read is exactly
   * `min(limit, total backlog)`.
   */
  def rateLimit(from: Map[RocketMQQueue, Long], until: Map[RocketMQQueue, Long], limit: Long)
      : Map[RocketMQQueue, Long] = {
    val backlog = until.map { case (q, u) => q -> math.max(0L, u - from.getOrElse(q, u)) }
    val total = backlog.values.sum
    if (total <= limit) return until
    val exact = backlog.map { case (q, b) => q -> BigDecimal(b) * limit / total }
    val whole = exact.map { case (q, e) =>
      q -> e.setScale(0, BigDecimal.RoundingMode.FLOOR).toLong
    }
    val remainder = limit - whole.values.sum
    val extra = exact.toSeq.sortBy { case (q, e) => (-(e - whole(q)), q) }.take(
      remainder.toInt).map(_._1).toSet
    until.map { case (q, u) =>
      val take = whole(q) + (if (extra.contains(q)) 1 else 0)
      q -> math.min(u, from.getOrElse(q, u) + take)
    }
  }

  /**
   * A stable choice among the sorted executors for a queue, by the queue's (JVM-independent) hash.
   */
  private[rocketmq] def preferredExecutor(queue: RocketMQQueue, executors: Seq[String])
      : Option[String] =
    if (executors.isEmpty) None else Some(executors(Math.floorMod(queue.hashCode, executors.size)))

  /**
   * Live executors as Spark's "executor_<host>_<id>" task locations, sorted. Uses the block
   * manager's peer list (Spark-internal, kept to this one place); empty in local mode, where
   * locality is moot.
   */
  def executorLocations(): Seq[String] = {
    val env = SparkEnv.get
    if (env == null) Nil
    else {
      val blockManager = env.blockManager
      blockManager.master.getPeers(blockManager.blockManagerId)
        .map(id => s"executor_${id.host}_${id.executorId}")
        .sorted
    }
  }
}
