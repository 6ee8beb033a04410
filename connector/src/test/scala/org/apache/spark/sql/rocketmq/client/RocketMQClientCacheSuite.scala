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

package org.apache.spark.sql.rocketmq.client

import java.util.concurrent.{ConcurrentLinkedQueue, CountDownLatch, TimeUnit}

import scala.collection.mutable
import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.{SparkConf, SparkContext}

/**
 * The sharing, eviction and replacement rules of the client cache (clients here are plain
 * counters).
 */
class RocketMQClientCacheSuite extends AnyFunSuite {

  private final class Fixture {
    var created = 0
    val closed = mutable.Buffer.empty[String]
    val cache =
      new RocketMQClientCache[String, String]("test", key => { created += 1; s"$key#$created" },
        // closeAll closes clients on threads of their own; a test waiting for a close is told of
        // each one.
        client => {
          if (client.startsWith("slow")) slowClose.await(30, TimeUnit.SECONDS)
          closed.synchronized { closed += client; closed.notifyAll() }
        })
    /** Holds the close of clients whose key starts with "slow", as a silent broker would. */
    val slowClose = new CountDownLatch(1)

    /** The clients closed, once there are `count` (closes may run in the background). */
    def closedWhen(count: Int): Seq[String] = closed.synchronized {
      val deadline = System.currentTimeMillis() + 30000
      while (closed.size < count && System.currentTimeMillis() < deadline) closed.wait(100)
      closed.toList
    }
  }

  test("one client per key, shared by concurrent borrowers") {
    val f = new Fixture
    val (a, b, c) = (f.cache.borrow("x"), f.cache.borrow("x"), f.cache.borrow("y"))
    assert(a.client == b.client && a.client != c.client)
    assert(f.created === 2 && f.cache.size === 2)
    Seq(a, b, c).foreach(_.release())
    assert(f.closed.isEmpty, "released clients stay cached until idle")
  }

  test("idle clients are closed after the timeout; held ones never") {
    val f = new Fixture
    val held = f.cache.borrow("held")
    f.cache.borrow("idle").release()
    f.cache.evictIdle(System.currentTimeMillis() + 10L * 60 * 1000)
    assert(f.closed === Seq("idle#2"))
    assert(f.cache.size === 1)
    held.release()
  }

  test("a broken client is closed once released by all, and the next borrow gets a fresh one") {
    val f = new Fixture
    val (a, b) = (f.cache.borrow("x"), f.cache.borrow("x"))
    a.markBroken()
    val fresh = f.cache.borrow("x")
    assert(fresh.client === "x#2", "a broken client is not lent again")
    a.release()
    assert(f.closed.isEmpty, "still held by b")
    b.release()
    assert(f.closedWhen(1) === Seq("x#1"))
    a.release() // releasing twice changes nothing
    fresh.release()
    assert(f.closed.synchronized(f.closed.toList) === Seq("x#1"), "fresh is not broken")
  }

  test("a broken client whose close hangs holds up neither its last task nor other borrowers") {
    val f = new Fixture
    val lease = f.cache.borrow("slow")
    lease.markBroken()
    val released = new Thread(() => lease.release())
    released.start()
    released.join(30000)
    assert(!released.isAlive, "release waited for the close")
    val other = f.cache.borrow("other")
    assert(f.cache.borrow("slow").client === "slow#3", "a fresh client replaces the broken one")
    assert(f.closed.isEmpty)
    f.slowClose.countDown()
    assert(f.closedWhen(1) === Seq("slow#1"))
    other.release()
  }

  test("a set-up step runs once per client, and again after it failed") {
    val f = new Fixture
    val lease = f.cache.borrow("x")
    var runs = 0
    intercept[IllegalStateException](lease.once("prepare") {
      runs += 1; throw new IllegalStateException("boom")
    })
    lease.once("prepare")(runs += 1)
    lease.once("prepare")(runs += 1)
    assert(runs === 2)
    lease.release()
  }

  test("a task asking for a set-up step another task is running waits until it is done") {
    val f = new Fixture
    val (first, second) = (f.cache.borrow("x"), f.cache.borrow("x"))
    val inSetUp = new CountDownLatch(1)
    val finishSetUp = new CountDownLatch(1)
    val events = new ConcurrentLinkedQueue[String]()
    val a = new Thread(() =>
      first.once("prepare") { inSetUp.countDown(); finishSetUp.await(); events.add("set up") })
    val b = new Thread(() => {
      second.once("prepare")(events.add("set up twice")); events.add("second went on")
    })
    a.start()
    assert(inSetUp.await(30, TimeUnit.SECONDS))
    b.start()
    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30)
    while (b.getState != Thread.State.BLOCKED && System.nanoTime() < deadline) Thread.`yield`()
    assert(b.getState === Thread.State.BLOCKED, "the second task should wait for the set-up")
    finishSetUp.countDown()
    a.join(30000)
    b.join(30000)
    assert(events.asScala.toSeq === Seq("set up", "second went on"))
    first.release()
    second.release()
  }

  test("closeAll closes every client") {
    val f = new Fixture
    f.cache.borrow("x").release()
    f.cache.borrow("y")
    f.cache.closeAll()
    assert(f.closed.toSet === Set("x#1", "y#2") && f.cache.size === 0)
  }

  test("closeAll closes the clients at once, not one after the other") {
    // Each close returns only once all three have begun: one after the other, the first would wait
    // in vain.
    val begun = new CountDownLatch(3)
    val closed = new ConcurrentLinkedQueue[String]()
    val cache = new RocketMQClientCache[String, String]("test", key => key,
      { client =>
        begun.countDown()
        if (begun.await(30, TimeUnit.SECONDS)) closed.add(client)
      })
    Seq("a", "b", "c").foreach(cache.borrow(_).release())
    cache.closeAll()
    assert(closed.asScala.toSet === Set("a", "b", "c") && cache.size === 0)
  }

  test(
    "every client is closed when the Spark application ends, and again for the next application") {
    val f = new Fixture
    def runApplication(key: String): Unit = {
      val sc = new SparkContext(new SparkConf().setMaster("local[1]").setAppName("cache-test")
        .set("spark.ui.enabled", "false").set("spark.driver.host", "127.0.0.1"))
      try {
        f.cache.borrow(key).release()
        assert(f.cache.size === 1)
      } finally sc.stop()
    }
    // The clients close in the background once the application has ended.
    def awaitClosed(expected: Seq[String]): Unit = f.closed.synchronized {
      val deadline = System.currentTimeMillis() + 30000
      while (f.closed.toList != expected && System.currentTimeMillis() < deadline) {
        f.closed.wait(math.max(1L, deadline - System.currentTimeMillis()))
      }
      assert(f.closed.toList === expected)
    }
    runApplication("first")
    assert(f.cache.size === 0)
    awaitClosed(Seq("first#1"))
    runApplication("second")
    assert(f.cache.size === 0)
    awaitClosed(Seq("first#1", "second#2"))
  }
}
