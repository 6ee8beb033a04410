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

import scala.util.control.NonFatal

import org.slf4j.LoggerFactory

import org.apache.spark.SparkContext
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.plans.logical.{
  LogicalPlan, Repartition, RepartitionByExpression
}
import org.apache.spark.sql.rocketmq.common.RocketMQQueue
import org.apache.spark.sql.rocketmq.errors.RocketMQErrors

/**
 * A real-time batch runs every task of its query at once for the batch's whole duration: one per
 * source queue and, past a shuffle (a stateful operator's, or a repartition), one per partition of
 * the stage after it. A query with fewer task slots than that either never reads some queues until
 * the batch ends (stateless: their tasks wait for a free slot) or fails once its job is submitted
 * (stateful: Spark's CONCURRENT_SCHEDULER_INSUFFICIENT_SLOT, which names neither the queues nor the
 * shuffle). So the stream checks before its tasks are launched, on the driver, and fails naming the
 * queues, the tasks needed and the slots there are.
 *
 * Slots are the cores Spark's own check counts, the scheduler's default parallelism (the
 * executors' cores, or `spark.default.parallelism` where set), divided by `spark.task.cpus`: each
 * task holds that many cores. On a cluster whose executors are still registering the check waits
 * for them, up to `spark.scheduler.maxRegisteredResourcesWaitingTime`; under dynamic allocation it
 * only warns, the executors to come being unknown.
 */
private[rocketmq] object RocketMQRealTimeSlots {
  private val log = LoggerFactory.getLogger(getClass)

  /**
   * Stateful operators of a stream: each puts a shuffle, and a stage of
   * `spark.sql.shuffle.partitions` tasks (the state's partitions), after it. (A join of a stream
   * with a static side is left out: broadcast, it shuffles nothing; real-time mode runs no
   * stream-stream join.)
   */
  private val StatefulOperators =
    Set("Aggregate", "Deduplicate", "DeduplicateWithinWatermark", "TransformWithState",
      "TransformWithStateInPySpark", "FlatMapGroupsWithState", "FlatMapGroupsInPandasWithState")

  /**
   * The tasks a real-time batch runs at once beyond its source's: those of the stage after its
   * shuffle.
   */
  final case class LaterStage(tasks: Int, cause: String)

  /**
   * Fails unless the session can run a task per queue of `queues` plus the query's later stage at
   * once.
   */
  def check(session: SparkSession, queues: Seq[RocketMQQueue]): Unit = {
    val later = laterStage(session)
    val needed = queues.size + later.map(_.tasks).getOrElse(0)
    val sc = session.sparkContext
    if (sc.getConf.getBoolean("spark.dynamicAllocation.enabled", defaultValue = false)) {
      val there = slots(sc)
      if (there < needed) {
        log.warn(
          s"This real-time query needs $needed task slots at once (${queues.size} source queues" +
            later.fold("")(s => s", ${s.tasks} ${s.cause}") + s"); $there are there now: dynamic " +
            "allocation must bring the rest, or some queues are read only when a batch ends")
      }
    } else {
      awaitSlots(sc, needed)
      val there = slots(sc)
      if (there < needed) {
        throw RocketMQErrors.realTimeSlotsShort(queues.map(_.toString),
          later.map(s => s"${s.tasks} ${s.cause}"),
          needed, there, sc.master)
      }
    }
  }

  /** The tasks `sc` runs at once: its cores over the cores a task takes (spark.task.cpus). */
  private def slots(sc: SparkContext): Int =
    sc.defaultParallelism / sc.getConf.getInt("spark.task.cpus", 1)

  /**
   * Executors still registering: waits for enough slots, at most as long as Spark's scheduler waits
   * for them.
   */
  private def awaitSlots(sc: SparkContext, needed: Int): Unit =
    if (!sc.master.startsWith("local[") && sc.master != "local") {
      val waitMs =
        sc.getConf.getTimeAsMs("spark.scheduler.maxRegisteredResourcesWaitingTime", "30s")
      val deadline = System.currentTimeMillis() + waitMs
      while (slots(sc) < needed && System.currentTimeMillis() < deadline) Thread.sleep(200)
    }

  /**
   * The stage after the query's shuffle, from the running query's logical plan (found by the query
   * id Spark sets on the planning thread; the shuffle partitions from `session`, the stream's own,
   * where Spark has put the number the checkpoint keeps). None when the query has no shuffle, or
   * when this Spark's internals cannot tell (then only the source's tasks are counted, and a
   * warning says so).
   */
  private def laterStage(session: SparkSession): Option[LaterStage] =
    try {
      val id = session.sparkContext.getLocalProperty(RocketMQSparkInternals.QueryIdProperty)
      val execution = Option(id).flatMap(RocketMQSparkInternals.runningExecution(session, _))
        .getOrElse(throw new IllegalStateException(s"no running streaming query of id $id"))
      val plan = RocketMQSparkInternals.logicalPlanOf(execution)
      shuffleOf(plan, session.conf.get("spark.sql.shuffle.partitions").toInt)
    } catch {
      case e @ (NonFatal(_) | _: LinkageError) =>
        log.warn(
          "Could not tell whether this real-time query shuffles; counting its source's tasks " +
            s"only: $e")
        None
    }

  /**
   * The widest stage after a shuffle on the streaming side of `plan` (real-time mode allows one
   * shuffle a query; a static side's shuffles run in jobs of their own).
   */
  private[rocketmq] def shuffleOf(plan: LogicalPlan, shufflePartitions: Int): Option[LaterStage] =
    plan.collect {
      case r: Repartition if r.isStreaming && r.shuffle =>
        LaterStage(r.numPartitions, s"tasks after repartition(${r.numPartitions})")
      case r: RepartitionByExpression if r.isStreaming =>
        val n = r.optNumPartitions.getOrElse(shufflePartitions)
        LaterStage(n, s"tasks after a repartition by expression ($n partitions)")
      case p if p.isStreaming && StatefulOperators(p.nodeName) =>
        LaterStage(shufflePartitions,
          s"tasks of the stateful stage after ${p.nodeName} " +
            s"(spark.sql.shuffle.partitions = $shufflePartitions)")
    }.sortBy(-_.tasks).headOption
}
