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
   * Untimed runs before the timed ones of each figure (JIT, connections, caches): without one, the
   * first run of a figure was often half as fast as the others. The quick mode sets 0.
   */
  @volatile var warmupRuns: Int = 1

  /**
   * The processes whose CPU use each timed run records: a name and the operating system's process
   * id.
   */
  @volatile var watched: Seq[(String, Long)] = Nil

  /**
   * For the last call of [[seconds]]: the CPU each watched process used over each timed run, in
   * cores (CPU seconds per second of the run; the machine's cores are the most there is).
   */
  @volatile var lastCores: Map[String, Seq[Double]] = Map.empty

  /**
   * Seconds `action` takes, for `runs` actions each made by `prepare` (not timed), after the
   * warm-up runs.
   */
  def seconds(runs: Int)(prepare: Int => () => Unit): Seq[Double] = {
    (1 to warmupRuns).foreach(run => prepare(-run)())
    val processes = watched
    val timed = (1 to runs).map { run =>
      val action = prepare(run)
      val cpuBefore = processes.map { case (_, pid) => cpuSeconds(pid) }
      val start = System.nanoTime()
      action()
      val wall = (System.nanoTime() - start) / 1e9
      val cores = processes.zip(cpuBefore).map { case ((name, pid), before) =>
        name -> (cpuSeconds(pid) - before) / wall
      }
      (wall, cores)
    }
    lastCores = processes.map { case (name, _) => name -> timed.map(_._2.toMap.apply(name)) }.toMap
    timed.map(_._1)
  }

  /**
   * CPU seconds (user and system) a process has used so far, from Linux's `/proc/<pid>/stat`
   * (fields 14 and 15, in clock ticks of 1/100 s, Linux's fixed user-visible tick rate).
   */
  def cpuSeconds(pid: Long): Double = {
    val (user, system) = userAndSystemSeconds(pid)
    user + system
  }

  /**
   * [[cpuSeconds]] in its two parts: in user mode, and in the kernel on the process's behalf
   * (system time).
   */
  def userAndSystemSeconds(pid: Long): (Double, Double) = {
    val stat = new String(
      java.nio.file.Files.readAllBytes(java.nio.file.Paths.get(s"/proc/$pid/stat")), "US-ASCII")
    // The command name (field 2) is in parentheses and may hold spaces: count the fields after its
    // end.
    val after = stat.substring(stat.lastIndexOf(')') + 2).split(' ')
    (after(11).toLong / 100.0, after(12).toLong / 100.0)
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
