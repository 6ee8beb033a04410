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

import scala.collection.mutable

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.{SparkConf, SparkContext}

/** The sharing, eviction and replacement rules of the client cache (clients here are plain counters). */
class RocketMQClientCacheSuite extends AnyFunSuite {

  private final class Fixture {
    var created = 0
    val closed = mutable.Buffer.empty[String]
    val cache = new RocketMQClientCache[String, String]("test", key => { created += 1; s"$key#$created" },
      client => closed += client)
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
    assert(f.closed === Seq("x#1"))
    a.release() // releasing twice changes nothing
    fresh.release()
    assert(f.closed === Seq("x#1"))
  }

  test("a set-up step runs once per client, and again after it failed") {
    val f = new Fixture
    val lease = f.cache.borrow("x")
    var runs = 0
    intercept[IllegalStateException](lease.once("prepare") { runs += 1; throw new IllegalStateException("boom") })
    lease.once("prepare")(runs += 1)
    lease.once("prepare")(runs += 1)
    assert(runs === 2)
    lease.release()
  }

  test("closeAll closes every client") {
    val f = new Fixture
    f.cache.borrow("x").release()
    f.cache.borrow("y")
    f.cache.closeAll()
    assert(f.closed.toSet === Set("x#1", "y#2") && f.cache.size === 0)
  }

  test("every client is closed when the Spark application ends, and again for the next application") {
    val f = new Fixture
    def runApplication(key: String): Unit = {
      val sc = new SparkContext(new SparkConf().setMaster("local[1]").setAppName("cache-test")
        .set("spark.ui.enabled", "false").set("spark.driver.host", "127.0.0.1"))
      try {
        f.cache.borrow(key).release()
        assert(f.cache.size === 1)
      } finally sc.stop()
    }
    runApplication("first")
    assert(f.closed === Seq("first#1") && f.cache.size === 0)
    runApplication("second")
    assert(f.closed === Seq("first#1", "second#2") && f.cache.size === 0)
  }
}
