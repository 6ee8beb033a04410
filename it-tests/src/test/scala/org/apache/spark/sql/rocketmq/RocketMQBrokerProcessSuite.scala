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

import java.net.{InetSocketAddress, Socket}
import java.nio.file.Files

import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

/**
 * The harness itself: a broker JVM killed with SIGKILL comes back on the same port with every
 * message.
 */
class RocketMQBrokerProcessSuite extends AnyFunSuite with BeforeAndAfterAll {

  private var broker: RocketMQBrokerProcess = _

  override protected def beforeAll(): Unit = {
    super.beforeAll()
    broker = new RocketMQBrokerProcess().start()
  }

  override protected def afterAll(): Unit = {
    try if (broker != null) broker.close()
    finally super.afterAll()
  }

  private def accepts(address: String): Boolean = {
    val Array(host, port) = address.split(':')
    val socket = new Socket()
    try { socket.connect(new InetSocketAddress(host, port.toInt), 1000); true }
    catch { case _: java.io.IOException => false }
    finally socket.close()
  }

  test(
    "kill -9 and restart on the same store and port: all 1000 acknowledged messages survive, " +
      "sends work") {
    val topic = "process-self-test"
    val address = broker.brokerAddress
    info(
      s"broker JVM listening after ${broker.lastReadyMillis} ms, registered after " +
        s"${broker.lastStartMillis} ms")
    assert(accepts(address) && accepts(s"127.0.0.1:${broker.brokerPort - 2}"))
    broker.createTopic(topic, queues = 4)
    val sent = (0 until 1000).map(i => s"m-$i")
    broker.produce(topic, 1000, i => s"m-$i")
    assert(broker.readBodies(topic).sorted === sent.sorted)
    assert(broker.maxOffsets(topic).values.sum === 1000)

    broker.kill()
    assert(!broker.isRunning && !accepts(address))
    info(s"the name server dropped the broker ${broker.lastDropMillis} ms after SIGKILL")
    broker.restart()
    info(
      s"restart: ports free after ${broker.lastPortWaitMillis} ms, listening after " +
        s"${broker.lastReadyMillis} ms, " +
        s"registered with its routes after ${broker.lastStartMillis} ms")
    assert(broker.isRunning && broker.brokerAddress === address && accepts(address))
    assert(broker.readBodies(topic).sorted === sent.sorted,
      "messages lost or duplicated by the restart")
    assert(Files.exists(broker.storeDirectory.resolve("logs/broker.log")))

    broker.produce(topic, 100, i => s"n-$i")
    assert(broker.readBodies(topic).sorted === (sent ++ (0 until 100).map(i => s"n-$i")).sorted)
  }
}
