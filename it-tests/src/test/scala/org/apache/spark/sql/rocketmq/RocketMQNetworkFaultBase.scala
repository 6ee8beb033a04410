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

import java.nio.file.Files

import org.apache.spark.sql.Encoders
import org.apache.spark.sql.execution.streaming.runtime.MemoryStream
import org.apache.spark.sql.streaming.StreamingQuery

/**
 * A real TCP fault proxy ([[Toxiproxy]]) between the connector and a real broker, which tells
 * clients the proxy's address: connections reset, answers delayed or never given. Every test
 * removes its fault before it ends.
 */
abstract class RocketMQNetworkFaultBase extends RocketMQSparkSuiteBase {

  // Tasks that lose a half message's answer fail (it is never sent twice): Spark runs them again.
  override protected def sparkMaster: String = "local[2,4]"

  protected var toxiproxy: Toxiproxy = _
  protected val Proxy = "broker"

  /**
   * How long the reset fault lasts: until the connector has connected again this many times, each
   * connection's answers lost (FAULT_CONNECTIONS to measure another; docs/benchmarks.md).
   */
  protected val faultConnections = sys.env.get("FAULT_CONNECTIONS").map(_.toInt).getOrElse(6)

  /** Waits until a send's answer was lost, then until [[faultConnections]] more were reset. */
  protected def awaitResets(log: SendLog): Unit = {
    EmbeddedRocketMQ.awaitCondition("a send whose answer the fault dropped", 60000)(log.seen)
    val accepted = toxiproxy.clientsAccepted(Proxy)
    EmbeddedRocketMQ.awaitCondition(s"$faultConnections connections of the connector reset",
      120000)(toxiproxy.clientsAccepted(Proxy) >= accepted + faultConnections)
  }

  override protected def newRocketMQ(): EmbeddedRocketMQ = {
    toxiproxy = Toxiproxy.start()
    val broker = new EmbeddedRocketMQ(advertisedHost = "127.0.0.2").start()
    toxiproxy.proxy(Proxy, s"127.0.0.2:${broker.brokerPort}", s"127.0.0.1:${broker.brokerPort}")
    broker
  }

  override protected def afterAll(): Unit =
    try super.afterAll()
    finally if (toxiproxy != null) toxiproxy.close()

  /** A stream of rows added to `input` into a new topic of 4 queues, with `options`. */
  protected def streamInto(name: String, options: (String, String)*)
      : (String, MemoryStream[String], StreamingQuery) = {
    val topic = rocketmq.newTopic(name)
    rocketmq.createTopic(topic, queues = 4)
    val input = MemoryStream[String](Encoders.STRING, spark)
    val query = input.toDF().selectExpr("value AS body").writeStream.format("rocketmq")
      .option("nameServer", rocketmq.nameServer).option("topic", topic).options(options.toMap)
      .option("checkpointLocation", Files.createTempDirectory(s"$name-").toString).start()
    (topic, input, query)
  }

  /** Runs `body` while `kind` (with JSON `attributes`) acts on the broker's answers. */
  protected def withFault[T](kind: String, stream: String, attributes: String)(body: => T): T = {
    toxiproxy.addToxic(Proxy, kind, kind, stream, attributes)
    try body
    finally toxiproxy.removeToxic(Proxy, kind)
  }
}
