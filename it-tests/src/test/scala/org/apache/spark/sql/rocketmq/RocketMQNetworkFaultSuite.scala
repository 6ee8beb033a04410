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

import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration._

import org.apache.spark.sql.functions.col

/**
 * Reads and writes through a real TCP fault proxy ([[Toxiproxy]]) between the connector and a real
 * broker, which tells clients the proxy's address: connections reset, answers delayed. Every test
 * removes its fault before it ends.
 */
class RocketMQNetworkFaultSuite extends RocketMQSparkSuiteBase {
  import ExecutionContext.Implicits.global

  private var toxiproxy: Toxiproxy = _
  private val Proxy = "broker"

  /** How long the reset fault lasts (FAULT_SECONDS to measure another; docs/benchmarks.md). */
  private val faultMs = sys.env.get("FAULT_SECONDS").map(_.toLong * 1000).getOrElse(5000L)

  override protected def newRocketMQ(): EmbeddedRocketMQ = {
    toxiproxy = Toxiproxy.start()
    val broker = new EmbeddedRocketMQ(advertisedHost = "127.0.0.2").start()
    toxiproxy.proxy(Proxy, s"127.0.0.2:${broker.brokerPort}", s"127.0.0.1:${broker.brokerPort}")
    broker
  }

  override protected def afterAll(): Unit =
    try super.afterAll() finally if (toxiproxy != null) toxiproxy.close()

  /** Runs `body` while `kind` (with JSON `attributes`) acts on the broker's answers. */
  private def withFault[T](kind: String, stream: String, attributes: String)(body: => T): T = {
    toxiproxy.addToxic(Proxy, kind, kind, stream, attributes)
    try body finally toxiproxy.removeToxic(Proxy, kind)
  }

  test("a batch write whose broker connections are reset, its answers lost, stores every row, at most 1% " +
    "twice, and counts every extra copy as a possible duplicate") {
    val topic = rocketmq.newTopic("resets")
    rocketmq.createTopic(topic, queues = 8)
    val rows = 20000
    val log = new SendLog(topic)
    try {
      val started = System.nanoTime()
      val write = withFault("reset_peer", "downstream", "\"timeout\":500") {
        val write = Future {
          spark.range(rows).select(col("id").cast("string").as("body")).repartition(2)
            .write.format("rocketmq").option("nameServer", rocketmq.nameServer).option("topic", topic)
            .save()
        }
        EmbeddedRocketMQ.awaitCondition("a send whose answer the fault dropped", 60000)(log.seen)
        Thread.sleep(faultMs) // the fault's length is the scenario: answers are lost for this long
        write
      }
      Await.result(write, 5.minutes)
      val tookMs = (System.nanoTime() - started) / 1000000
      val stored = rocketmq.readAll(topic).map(m => new String(m.getBody, "UTF-8"))
      val extra = stored.size - rows
      val counted = log.saveCounts.getOrElse("possibleDuplicates", -1L)
      info(s"reset fault of $faultMs ms: $rows rows stored as ${stored.size} ($extra extra copies), " +
        s"possibleDuplicates $counted, the write took $tookMs ms")
      assert(stored.toSet === (0 until rows).map(_.toString).toSet)
      assert(extra <= rows / 100, s"$extra extra copies of $rows rows")
      assert(counted >= extra, s"possibleDuplicates $counted, extra copies $extra")
    } finally log.close()
  }
}
