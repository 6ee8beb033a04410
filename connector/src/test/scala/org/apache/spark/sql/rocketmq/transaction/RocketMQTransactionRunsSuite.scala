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

import org.scalatest.funsuite.AnyFunSuite

/** The life of exactly-once stream runs: resumed, started, ended, each by its own run. */
class RocketMQTransactionRunsSuite extends AnyFunSuite {

  private final class Coordinator(val scope: RocketMQTransactionScope) extends Closeable {
    @volatile var closed = false
    override def close(): Unit = closed = true
  }

  private def newRuns = new RocketMQTransactionRuns[Coordinator]

  test("a run's micro-batches share one scope and one coordinator; its end closes it") {
    val runs = newRuns
    val scope = runs.scope("q", "run-1", "group", 60000L)
    assert(runs.scope("q", "run-1", "group", 60000L) eq scope)
    val coordinator = runs.coordinator("run-1")(new Coordinator(_))
    assert(runs.coordinator("run-1")(_ => fail("made twice")) eq coordinator)
    assert(coordinator.scope === scope && runs.running("run-1").contains(coordinator))
    runs.ended("run-1")
    assert(coordinator.closed && runs.running("run-1").isEmpty && runs.size === 0)
  }

  test(
    "a query restarted at once: the earlier run's late end leaves the new run's coordinator open") {
    val runs = newRuns
    runs.scope("q", "run-1", "group", 60000L)
    val first = runs.coordinator("run-1")(new Coordinator(_))
    // The restart resumes the next run before Spark names it, while run-1's end is still on its
    // way.
    runs.resumedScope("q", "group", 60000L)
    runs.resume("q")(new Coordinator(_))
    runs.started("q", "run-2")
    runs.ended("run-1")
    assert(first.closed)
    val second = runs.running("run-2")
    assert(second.exists(c => !c.closed && c.scope.run != first.scope.run), second)
    // The new run's micro-batches take the resumed state; its own end closes it.
    assert(runs.scope("q", "run-2", "group", 60000L) eq second.get.scope)
    runs.ended("run-2")
    assert(second.get.closed && runs.size === 0)
  }

  test("a resumed run is taken over by its first micro-batch when its start was not heard") {
    val runs = newRuns
    val resumed = runs.resumedScope("q", "group", 60000L)
    runs.resume("q")(new Coordinator(_))
    assert(runs.scope("q", "run-2", "group", 60000L) eq resumed)
    assert(runs.running("run-2").exists(_.scope eq resumed))
    runs.started("q", "run-2") // heard late: nothing left to take over
    assert(runs.size === 1)
  }

  test("the end of a run never heard of, or of another query, closes nothing") {
    val runs = newRuns
    runs.scope("q", "run-1", "group", 60000L)
    val coordinator = runs.coordinator("run-1")(new Coordinator(_))
    runs.ended("run-0")
    runs.started("other", "run-9")
    assert(!coordinator.closed && runs.size === 1)
  }

  test(
    "a start heard late takes over only a resume made before it; the driver's end ends every run") {
    val runs = newRuns
    runs.resumedScope("q", "group", 60000L)
    runs.resume("q")(new Coordinator(_))
    // run-2 started and stopped before this resume, for run-3, was made: its late start leaves it.
    runs.started("q", "run-2", startMs = System.currentTimeMillis() - 60000L)
    assert(runs.running("run-2").isEmpty && runs.size === 1)
    runs.started("q", "run-3", startMs = System.currentTimeMillis())
    val third = runs.running("run-3")
    assert(third.nonEmpty)
    runs.scope("q", "run-4", "group", 60000L)
    runs.resumedScope("q", "group", 60000L)
    runs.resume("q")(new Coordinator(_))
    runs.endAll()
    assert(third.get.closed && runs.size === 0)
  }
}
