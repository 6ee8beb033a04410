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
import org.apache.spark.sql.rocketmq.producer.RocketMQTransactionScope

import java.io.Closeable
import java.util.concurrent.ConcurrentHashMap

import scala.collection.mutable.ArrayBuffer
import scala.util.control.NonFatal

import org.slf4j.LoggerFactory

/**
 * The life of each exactly-once stream run in this driver, keyed by Spark's run id (a query
 * restarted at once is a new run while the end of its earlier run may still be on its way). A run
 * - is resumed before it starts, when it restarts from a checkpoint (its coordinator answers the
 *   broker about epochs the earlier run left, even if the new run never plans a batch): held by its
 *   query id until Spark names the run;
 * - starts when Spark says so (the query's start event, or the run's first plan), taking over what
 *   was resumed for its query;
 * - decides its epochs and answers check-backs through its coordinator, made again when a
 *   micro-batch plans other settings (a resume uses the earlier run's options);
 * - ends when Spark says that run ended: only that run's coordinators are closed.
 */
private[rocketmq] class RocketMQTransactionRuns[C <: Closeable] {
  private val log = LoggerFactory.getLogger(classOf[RocketMQTransactionRuns[_]])

  private final class Run(initial: RocketMQTransactionScope) {
    val madeMs: Long = System.currentTimeMillis()
    private var scope = initial
    private var coordinator: C = _
    /** The settings and scope `coordinator` was made with. */
    private var madeWith: (RocketMQCoordinatorSettings, RocketMQTransactionScope) = _
    /** Coordinators replaced by one of another group or connection, still owing the broker. */
    private val replaced = ArrayBuffer[C]()

    /** The run's scope, for transaction group `group` and timeout `timeoutMs` (same run id). */
    def scopeFor(group: String, timeoutMs: Long): RocketMQTransactionScope = synchronized {
      if (scope.group != group || scope.timeoutMs != timeoutMs) {
        scope = scope.copy(group = group, timeoutMs = timeoutMs)
      }
      scope
    }

    /**
     * The coordinator for `settings` and the run's scope, made by `create` unless the current one
     * was made for them. The one it replaces is closed once the new one runs if that answers the
     * same group through the same connection (it reads the same decisions); else it stays until
     * the run ends, to answer the broker about the epochs it decided.
     */
    def coordinatorFor(settings: RocketMQCoordinatorSettings,
        create: RocketMQTransactionScope => C): C = synchronized {
      if (coordinator == null || madeWith != ((settings, scope))) {
        val made = create(scope)
        Option(coordinator).foreach { old =>
          val (oldSettings, oldScope) = madeWith
          if (oldSettings.connection == settings.connection && oldScope.group == scope.group) {
            closeQuietly(old)
          } else replaced += old
        }
        coordinator = made
        madeWith = (settings, scope)
      }
      coordinator
    }

    def current: Option[C] = synchronized(Option(coordinator))

    def close(): Unit = synchronized((replaced ++ Option(coordinator)).foreach(closeQuietly))
  }

  private def closeQuietly(coordinator: C): Unit =
    try coordinator.close()
    catch { case NonFatal(e) => log.warn(s"Could not close a transaction coordinator: $e") }

  /** Started runs, by run id. */
  private val runs = new ConcurrentHashMap[String, Run]()
  /** Runs resumed before Spark named them, by query id. */
  private val resumed = new ConcurrentHashMap[String, Run]()

  private def newRun(group: String, timeoutMs: Long): Run =
    new Run(RocketMQTransactionScope(group, RocketMQTransactionScope.newRun(), timeoutMs))

  /** The scope of query `queryId`'s next run, resumed before it starts. */
  def resumedScope(queryId: String, group: String, timeoutMs: Long): RocketMQTransactionScope =
    resumed.computeIfAbsent(queryId, _ => newRun(group, timeoutMs)).scopeFor(group, timeoutMs)

  /**
   * Resumes query `queryId`'s next run (whose scope must exist): its coordinator for `settings`,
   * made by `create`, is running when this returns, though Spark has not named the run yet.
   */
  def resume(queryId: String, settings: RocketMQCoordinatorSettings)(
      create: RocketMQTransactionScope => C): Unit = {
    Option(resumed.get(queryId)).getOrElse(
      throw new IllegalStateException(s"No resumed run of $queryId"))
      .coordinatorFor(settings, create)
    ()
  }

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

  /**
   * The scope of run `runId` (of query `queryId`), made at its start or first micro-batch; its
   * group and timeout are the latest planned, its run id the run's own.
   */
  def scope(queryId: String, runId: String, group: String, timeoutMs: Long)
      : RocketMQTransactionScope =
    runs.computeIfAbsent(runId,
      _ => Option(resumed.remove(queryId)).getOrElse(newRun(group, timeoutMs)))
      .scopeFor(group, timeoutMs)

  /**
   * The coordinator of run `runId` (whose scope must exist) for `settings`, made by `create` when
   * the run has none for them and its scope now.
   */
  def coordinator(runId: String, settings: RocketMQCoordinatorSettings)(
      create: RocketMQTransactionScope => C): C =
    Option(runs.get(runId)).getOrElse(throw new IllegalStateException(s"No transaction run $runId"))
      .coordinatorFor(settings, create)

  /** The coordinator of run `runId`, if it is running and has one. */
  def running(runId: String): Option[C] = Option(runs.get(runId)).flatMap(_.current)

  /**
   * Run `runId` ended: its coordinators are closed and the run forgotten (other runs are left
   * alone).
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
