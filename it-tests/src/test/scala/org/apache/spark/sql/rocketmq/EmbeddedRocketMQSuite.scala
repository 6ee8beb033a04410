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
import java.nio.charset.StandardCharsets
import java.nio.file.Files

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.rocketmq.common.RocketMQQueue

/** The harness itself: a broker of its own, started and stopped by this suite. */
class EmbeddedRocketMQSuite extends AnyFunSuite {

  private def accepts(address: String): Boolean = {
    val Array(host, port) = address.split(':')
    val socket = new Socket()
    try { socket.connect(new InetSocketAddress(host, port.toInt), 1000); true }
    catch { case _: java.io.IOException => false }
    finally socket.close()
  }

  test(
    "ephemeral ports, a temporary store, topics, sends, offsets; stop frees the ports and " +
      "removes the store") {
    val mq = new EmbeddedRocketMQ().start()
    val nameServer = mq.nameServer
    val store = mq.storeDirectory
    val brokerAddress = mq.brokerController.getBrokerAddr
    try {
      // Ports bound to 0: the kernel hands them out from its ephemeral range (fixed defaults lie
      // below it).
      val range =
        scala.util.Using.resource(
          scala.io.Source.fromFile("/proc/sys/net/ipv4/ip_local_port_range"))(_.mkString)
          .split("[^0-9]+").filter(_.nonEmpty).map(_.toInt)
      assert(range.length == 2, range.mkString(" "))
      val (low, high) = (range(0), range(1))
      for (address <- Seq(nameServer, brokerAddress); port = address.split(":").last.toInt) {
        assert(port >= low && port <= high,
          s"$address is outside the ephemeral range [$low, $high]")
      }
      assert(brokerAddress.startsWith("127.0.0.1:"))
      assert(Files.isDirectory(store) && store.startsWith(System.getProperty("java.io.tmpdir")))
      assert(accepts(nameServer) && accepts(brokerAddress))

      mq.createTopic("harness-topic", queues = 3)
      val results = mq.sendMessages("harness-topic",
        Seq(TestMessage("a", tags = "x", keys = "k", properties = Map("p" -> "1")),
          TestMessage("b")),
        queueId = Some(2))
      assert(results.map(_.getQueueOffset) === Seq(0L, 1L))
      assert(mq.latestOffsets("harness-topic") === Map(
        RocketMQQueue("harness-topic", mq.brokerName, 0) -> 0L,
        RocketMQQueue("harness-topic", mq.brokerName, 1) -> 0L,
        RocketMQQueue("harness-topic", mq.brokerName, 2) -> 2L))
      val stored = mq.readAll("harness-topic")
      assert(stored.map(m => new String(m.getBody, StandardCharsets.UTF_8)) === Seq("a", "b"))
      assert(stored.head.getTags === "x" && stored.head.getKeys === "k" &&
        stored.head.getUserProperty("p") === "1")
      // The harness's bulk send: the i-th message to the i-th queue in turn, as sends of one go.
      mq.createTopic("spread-topic", queues = 3)
      mq.sendSpread("spread-topic", (0 until 7).map(i => TestMessage(s"s$i")))
      val spread = mq.readAll("spread-topic").map(m =>
        (m.getQueueId, m.getQueueOffset, new String(m.getBody, StandardCharsets.UTF_8)))
      assert(spread.sortBy(_._3) === Seq((0, 0L, "s0"), (1, 0L, "s1"), (2, 0L, "s2"),
        (0, 1L, "s3"), (1, 1L, "s4"), (2, 1L, "s5"), (0, 2L, "s6")))
    } finally mq.stop()
    assert(!Files.exists(store), s"$store was left behind")
    assert(!accepts(nameServer) && !accepts(brokerAddress))
  }
}
