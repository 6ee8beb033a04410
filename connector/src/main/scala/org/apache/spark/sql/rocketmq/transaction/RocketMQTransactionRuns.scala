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
 * The transaction state of each running exactly-once stream in this driver. Spark plans a streaming
 * write again for every micro-batch, but a query run must keep one run id (its half messages and
 * decisions name it) and one coordinator (whose producer answers the broker's check-back) from its
 * start to its end. Both are kept here by the run's key (the query id: Spark runs one run of a query at
 * a time in a driver), and forgotten when the run ends.
 */
private[rocketmq] object RocketMQTransactionRuns {

  private final class Run(val scope: RocketMQTransactionScope) {
    var coordinator: RocketMQTransactionCoordinator = _
  }

  private val runs = new ConcurrentHashMap[String, Run]()

  /** The scope of run `key`, made at its first micro-batch. */
  def scope(key: String, group: String, timeoutMs: Long): RocketMQTransactionScope =
    runs.computeIfAbsent(key,
      _ => new Run(RocketMQTransactionScope(group, RocketMQTransactionScope.newRun(), timeoutMs)))
      .scope

  /**
   * The coordinator of run `key` (whose scope must exist), made by `create` at its first micro-batch;
   * `onCreate` is given what ends the run's state (closes the coordinator, forgets the run).
   */
  def coordinator(key: String)(create: RocketMQTransactionScope => RocketMQTransactionCoordinator,
      onCreate: Closeable => Unit): RocketMQTransactionCoordinator = {
    val run = runs.get(key)
    run.synchronized {
      if (run.coordinator == null) {
        run.coordinator = create(run.scope)
        onCreate(() => end(key, run))
      }
      run.coordinator
    }
  }

  /** The coordinator of run `key`, if it is running and has one. */
  def running(key: String): Option[RocketMQTransactionCoordinator] =
    Option(runs.get(key)).flatMap(run => run.synchronized(Option(run.coordinator)))

  /**
   * Closes `run`'s coordinator and forgets it, if it is still run `key` (the end of an earlier run of a query, heard
   * late, leaves the next run alone).
   */
  private def end(key: String, run: Run): Unit = if (runs.remove(key, run)) {
    run.synchronized(Option(run.coordinator).foreach(_.close()))
  }

  /** Runs known now (tests). */
  private[rocketmq] def size: Int = runs.size
}
