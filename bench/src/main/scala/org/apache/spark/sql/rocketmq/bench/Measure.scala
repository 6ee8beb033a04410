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

package org.apache.spark.sql.rocketmq.bench

/** Timing: each run prepares untimed, then only the action is timed. */
object Measure {

  /**
   * Untimed runs before the timed ones of each figure (JIT, connections, caches): without one, the first run
   * of a figure was often half as fast as the others. The quick mode sets 0.
   */
  @volatile var warmupRuns: Int = 1

  /** Seconds `action` takes, for `runs` actions each made by `prepare` (not timed), after the warm-up runs. */
  def seconds(runs: Int)(prepare: Int => () => Unit): Seq[Double] = {
    (1 to warmupRuns).foreach(run => prepare(-run)())
    (1 to runs).map { run =>
      val action = prepare(run)
      val start = System.nanoTime()
      action()
      (System.nanoTime() - start) / 1e9
    }
  }

  /** Messages per second for `messages` moved by each of `runs` actions. */
  def rates(messages: Long, runs: Int)(prepare: Int => () => Unit): Seq[Double] =
    seconds(runs)(prepare).map(messages / _)

  /** The `p`-th percentile (0 to 100) of `values`, nearest rank. */
  def percentile(values: Seq[Double], p: Double): Double = {
    require(values.nonEmpty, "no values")
    val sorted = values.sorted
    sorted(math.min(sorted.size - 1, math.max(0, math.ceil(p / 100 * sorted.size).toInt - 1)))
  }
}
