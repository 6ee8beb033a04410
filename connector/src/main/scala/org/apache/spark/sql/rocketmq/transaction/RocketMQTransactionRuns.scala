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

package org.apache.spark.sql.rocketmq.transaction

import java.io.Closeable
import java.util.concurrent.ConcurrentHashMap

/**
 * The life of each exactly-once stream run in this driver, keyed by Spark's run id (a query
 * restarted at once is a new run while the end of its earlier run may still be on its way). A run
 * - is resumed before it starts, when it restarts from a checkpoint (its coordinator answers the
 *   broker about epochs the earlier run left, even if the new run never plans a batch): held by its
 *   query id until Spark names the run;
 * - starts when Spark says so (the query's start event, or the run's first plan), taking over what
 *   was resumed for its query;
 *   - decides its epochs and answers check-backs through its one coordinator;
 *   - ends when Spark says that run ended: only that run's coordinator is closed.
 */
private[rocketmq] class RocketMQTransactionRuns[C <: Closeable] {

  private final class Run(val scope: RocketMQTransactionScope) {
    val madeMs: Long = System.currentTimeMillis()
    var coordinator: C = _

    def coordinatorOr(create: RocketMQTransactionScope => C): C = synchronized {
      if (coordinator == null) coordinator = create(scope)
      coordinator
    }

    def close(): Unit = synchronized(Option(coordinator).foreach(_.close()))
  }

  /** Started runs, by run id. */
  private val runs = new ConcurrentHashMap[String, Run]()
  /** Runs resumed before Spark named them, by query id. */
  private val resumed = new ConcurrentHashMap[String, Run]()

  private def newRun(group: String, timeoutMs: Long): Run =
    new Run(RocketMQTransactionScope(group, RocketMQTransactionScope.newRun(), timeoutMs))

  /** The scope of query `queryId`'s next run, resumed before it starts. */
  def resumedScope(queryId: String, group: String, timeoutMs: Long): RocketMQTransactionScope =
    resumed.computeIfAbsent(queryId, _ => newRun(group, timeoutMs)).scope

  /**
   * Resumes query `queryId`'s next run (whose scope must exist): its coordinator, made by `create`,
   * is running when this returns, though Spark has not named the run yet.
   */
  def resume(queryId: String)(create: RocketMQTransactionScope => C): Unit =
    Option(resumed.get(queryId)).getOrElse(
      throw new IllegalStateException(s"No resumed run of $queryId"))
      .coordinatorOr(create)

  /**
   * Run `runId` of query `queryId` started at `startMs`: it takes over what was resumed for the
   * query before it started (a resume made later is a later run's, heard of before this start was).
   */
  def started(queryId: String, runId: String, startMs: Long = Long.MaxValue): Unit =
    if (!runs.containsKey(runId)) {
      Option(resumed.get(queryId)).filter(_.madeMs <= startMs).foreach { run =>
        if (resumed.remove(queryId, run) && runs.putIfAbsent(runId, run) != null) run.close()
      }
    }

  /** The scope of run `runId` (of query `queryId`), made at its start or first micro-batch. */
  def scope(queryId: String, runId: String, group: String, timeoutMs: Long)
      : RocketMQTransactionScope =
    runs.computeIfAbsent(runId,
      _ => Option(resumed.remove(queryId)).getOrElse(newRun(group, timeoutMs))).scope

  /** The coordinator of run `runId` (whose scope must exist), made by `create` when it has none. */
  def coordinator(runId: String)(create: RocketMQTransactionScope => C): C =
    Option(runs.get(runId)).getOrElse(throw new IllegalStateException(s"No transaction run $runId"))
      .coordinatorOr(create)

  /** The coordinator of run `runId`, if it is running and has one. */
  def running(runId: String): Option[C] =
    Option(runs.get(runId)).flatMap(run => run.synchronized(Option(run.coordinator)))

  /**
   * Run `runId` ended: its coordinator is closed and the run forgotten (other runs are left alone).
   */
  def ended(runId: String): Unit = Option(runs.remove(runId)).foreach(_.close())

  /** The driver stops: every run ends (their end events may never be delivered). */
  def endAll(): Unit = {
    runs.keySet().forEach(id => ended(id))
    resumed.keySet().forEach(id => Option(resumed.remove(id)).foreach(_.close()))
  }

  /** Runs known now, started or resumed. */
  def size: Int = runs.size + resumed.size
}

/** The exactly-once stream runs of this driver. */
private[rocketmq] object RocketMQTransactionRuns
  extends RocketMQTransactionRuns[RocketMQTransactionCoordinator]
