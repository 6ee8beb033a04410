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

import org.apache.spark.sql.rocketmq.common.RocketMQConnection
import org.apache.spark.sql.rocketmq.producer.RocketMQTransactionScope

/** The life of exactly-once stream runs: resumed, started, ended, each by its own run. */
class RocketMQTransactionRunsSuite extends AnyFunSuite {

  private final class Coordinator(val scope: RocketMQTransactionScope,
      val settings: RocketMQCoordinatorSettings = usual) extends Closeable {
    @volatile var closed = false
    override def close(): Unit = closed = true
  }

  private def settingsOf(nameServer: String, namespace: Option[String] = None) =
    RocketMQCoordinatorSettings(RocketMQConnection(nameServer, namespace = namespace),
      Some("out"), requestTimeoutMs = 3000L, retryTimeoutMs = 60000L)

  private val usual = settingsOf("ns-1:40001")

  private def newRuns = new RocketMQTransactionRuns[Coordinator]

  test("a run's micro-batches share one scope and one coordinator; its end closes it") {
    val runs = newRuns
    val scope = runs.scope("q", "run-1", "group", 60000L)
    assert(runs.scope("q", "run-1", "group", 60000L) eq scope)
    val coordinator = runs.coordinator("run-1", usual)(new Coordinator(_))
    assert(runs.coordinator("run-1", usual)(_ => fail("made twice")) eq coordinator)
    assert(coordinator.scope === scope && runs.running("run-1").contains(coordinator))
    runs.ended("run-1")
    assert(coordinator.closed && runs.running("run-1").isEmpty && runs.size === 0)
  }

  test(
    "a query restarted at once: the earlier run's late end leaves the new run's coordinator open") {
    val runs = newRuns
    runs.scope("q", "run-1", "group", 60000L)
    val first = runs.coordinator("run-1", usual)(new Coordinator(_))
    // The restart resumes the next run before Spark names it, while run-1's end is still on its
    // way.
    runs.resumedScope("q", "group", 60000L)
    runs.resume("q", usual)(new Coordinator(_))
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
    runs.resume("q", usual)(new Coordinator(_))
    assert(runs.scope("q", "run-2", "group", 60000L) eq resumed)
    assert(runs.running("run-2").exists(_.scope eq resumed))
    runs.started("q", "run-2") // heard late: nothing left to take over
    assert(runs.size === 1)
  }

  test("the end of a run never heard of, or of another query, closes nothing") {
    val runs = newRuns
    runs.scope("q", "run-1", "group", 60000L)
    val coordinator = runs.coordinator("run-1", usual)(new Coordinator(_))
    runs.ended("run-0")
    runs.started("other", "run-9")
    assert(!coordinator.closed && runs.size === 1)
  }

  test(
    "a start heard late takes over only a resume made before it; the driver's end ends every run") {
    val runs = newRuns
    runs.resumedScope("q", "group", 60000L)
    runs.resume("q", usual)(new Coordinator(_))
    // run-2 started and stopped before this resume, for run-3, was made: its late start leaves it.
    runs.started("q", "run-2", startMs = System.currentTimeMillis() - 60000L)
    assert(runs.running("run-2").isEmpty && runs.size === 1)
    runs.started("q", "run-3", startMs = System.currentTimeMillis())
    val third = runs.running("run-3")
    assert(third.nonEmpty)
    runs.scope("q", "run-4", "group", 60000L)
    runs.resumedScope("q", "group", 60000L)
    runs.resume("q", usual)(new Coordinator(_))
    runs.endAll()
    assert(third.get.closed && runs.size === 0)
  }

  test("a run resumed from an earlier run's options takes the name server its first " +
    "micro-batch plans; the resumed coordinator stays until the run ends (the old name server's " +
    "brokers may still ask it)") {
    val runs = newRuns
    val recorded = settingsOf("old-ns:40001")
    runs.resumedScope("q", "group", 60000L)
    runs.resume("q", recorded)(new Coordinator(_, recorded))
    runs.started("q", "run-2")
    val resumed = runs.running("run-2").get
    val planned = settingsOf("new-ns:40001")
    val scope = runs.scope("q", "run-2", "group", 60000L)
    val current = runs.coordinator("run-2", planned)(new Coordinator(_, planned))
    assert(current.settings === planned && (current.scope eq scope) && !current.closed)
    assert(!resumed.closed && runs.running("run-2").contains(current))
    assert(runs.coordinator("run-2", planned)(_ => fail("made twice")) eq current)
    runs.ended("run-2")
    assert(resumed.closed && current.closed && runs.size === 0)
  }

  test("a coordinator replaced by one of the same group and connection closes once the new one " +
    "runs: the new one answers from the same decisions") {
    val runs = newRuns
    runs.scope("q", "run-1", "group", 60000L)
    val old = runs.coordinator("run-1", usual)(new Coordinator(_))
    val slower = usual.copy(retryTimeoutMs = 120000L)
    val current = runs.coordinator("run-1", slower)(scope => {
      assert(!old.closed, "closed before the new one ran")
      new Coordinator(scope, slower)
    })
    assert(old.closed && !current.closed && (current.scope eq old.scope))
    assert(runs.running("run-1").contains(current))
    runs.ended("run-1")
    assert(current.closed)
  }

  test("a coordinator replaced by one of another transaction group stays open until the run " +
    "ends: the broker asks that group about the epochs it decided") {
    val runs = newRuns
    val before = settingsOf("ns:40001", Some("a"))
    val first = runs.scope("q", "run-1", "a%group", 60000L)
    val old = runs.coordinator("run-1", before)(new Coordinator(_, before))
    val after = settingsOf("ns:40001", Some("b"))
    val moved = runs.scope("q", "run-1", "b%group", 120000L)
    assert(moved.run === first.run && moved.group === "b%group" && moved.timeoutMs === 120000L)
    val current = runs.coordinator("run-1", after)(new Coordinator(_, after))
    assert((current.scope eq moved) && !old.closed && runs.running("run-1").contains(current))
    runs.ended("run-1")
    assert(old.closed && current.closed && runs.size === 0)
  }

  test("a coordinator that cannot be made from new settings leaves the run's coordinator as it " +
    "was") {
    val runs = newRuns
    runs.scope("q", "run-1", "group", 60000L)
    val old = runs.coordinator("run-1", usual)(new Coordinator(_))
    intercept[IllegalArgumentException] {
      runs.coordinator("run-1", settingsOf("bad:40001"))(_ => throw new IllegalArgumentException)
    }
    assert(!old.closed && runs.running("run-1").contains(old))
  }
}
