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
import java.util.concurrent.ConcurrentLinkedQueue

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.rocketmq.client.RocketMQOffsetReader
import org.apache.spark.sql.rocketmq.common.{RocketMQQueue, RocketMQQueueRange}
import org.apache.spark.sql.rocketmq.options.RocketMQOptions
import org.apache.spark.sql.streaming.{StreamingQuery, StreamingQueryException, Trigger}

/** Reads through the fault proxy of [[RocketMQNetworkFaultBase]], each sink of a stream. */
trait RocketMQNetworkFaultReads extends RocketMQNetworkFaultBase {
  test(
    "a batch read of a broker that takes requests and never answers fails naming the broker " +
      "after requestTimeoutMs, then retryTimeoutMs and at most one more requestTimeoutMs, as the " +
      "options say") {
    val topic = rocketmq.newTopic("silent")
    rocketmq.createTopic(topic, queues = 2)
    rocketmq.sendBodies(topic, Seq("a", "b"))
    val (requestMs, retryMs) = (500L, 1500L)
    // The last pause before the budget ends is at most 2 s (RocketMQRetry.backoffMs).
    val (leastMs, mostMs) = (requestMs + retryMs, requestMs + retryMs + 2000L + requestMs)
    withFault("timeout", "downstream", "\"timeout\":0") {
      val started = System.nanoTime()
      val message = errorMessage(readTopic(topic, "requestTimeoutMs" -> requestMs.toString,
        "retryTimeoutMs" -> retryMs.toString).count())
      val tookMs = (System.nanoTime() - started) / 1000000
      info(s"failed after $tookMs ms (documented: $leastMs to $mostMs ms)")
      assert(message.contains("ROCKETMQ_BROKER_UNAVAILABLE"), message)
      assert(message.contains(rocketmq.brokerName), message)
      assert(tookMs >= leastMs && tookMs <= mostMs, s"$tookMs ms")
    }
  }

  test(
    "a batch read through 100 ms of latency each way and a 200 KB/s pipe returns every message " +
      "once") {
    val topic = rocketmq.newTopic("slow-read")
    rocketmq.createTopic(topic, queues = 4)
    val sent = (0 until 1000).map(i => f"m$i%05d-" + "x" * 200)
    rocketmq.sendBodies(topic, sent)
    withFault("latency", "upstream", "\"latency\":100") {
      toxiproxy.addToxic(Proxy, "latency-back", "latency", "downstream", "\"latency\":100")
      toxiproxy.addToxic(Proxy, "thin", "bandwidth", "downstream", "\"rate\":200")
      val started = System.nanoTime()
      try {
        assert(bodies(readTopic(topic)).sorted === sent)
        info(s"read in ${(System.nanoTime() - started) / 1000000} ms")
      } finally Seq("latency-back", "thin").foreach(toxiproxy.removeToxic(Proxy, _))
    }
  }

  test(
    "a batch read of 20,000 messages over 8 queues through 200 ms of latency each way returns " +
      "every message once, as it does nearby") {
    val topic = rocketmq.newTopic("far-read")
    rocketmq.createTopic(topic, queues = 8)
    val sent = (0 until 20000).map(i => f"f$i%05d")
    rocketmq.sendSpread(topic, sent.map(TestMessage(_)))
    def timedRead(): Long = {
      val started = System.nanoTime()
      assert(bodies(readTopic(topic)).sorted === sent)
      (System.nanoTime() - started) / 1000000
    }
    val coldMs = timedRead() // the first read of a suite run pays for Spark's warm-up
    val nearbyMs = timedRead()
    val farMs = withFault("latency", "upstream", "\"latency\":200") {
      toxiproxy.addToxic(Proxy, "latency-back", "latency", "downstream", "\"latency\":200")
      try timedRead()
      finally toxiproxy.removeToxic(Proxy, "latency-back")
    }
    info(s"nearby $nearbyMs ms (first $coldMs ms), through 200 ms each way $farMs ms " +
      f"(${nearbyMs.toDouble / farMs}%.2f of the speed nearby)")
  }

  test(
    "a batch plan asks the master that served the topic's last plan how far it has indexed while " +
      "the name server looks the route up, and uses that answer") {
    val topic = rocketmq.newTopic("early-probe")
    rocketmq.createTopic(topic, queues = 2)
    rocketmq.sendBodies(topic, Seq("a", "b", "c"))
    val listen = {
      val socket = new java.net.ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.2"))
      try s"127.0.0.2:${socket.getLocalPort}"
      finally socket.close()
    }
    toxiproxy.proxy("nameserver-early", listen, rocketmq.nameServer)
    val options = new RocketMQOptions(Map("nameServer" -> listen, "topic" -> topic,
      "requestTimeoutMs" -> "60000"))
    def planned(reader: RocketMQOffsetReader): Map[RocketMQQueue, RocketMQQueueRange] =
      reader.fetchQueueRanges(Seq(topic), awaitIndexed = true)
    // The first plan: the route, then the master's indexing, then the topic's stats.
    val first = new RocketMQOffsetReader(options)
    try {
      assert(planned(first).values.map(r => r.max - r.min).sum === 3)
      assert(first.requestCount === 3)
    } finally first.close()
    // The second, its route held back by the proxy: the master is asked before the route comes.
    val second = new RocketMQOffsetReader(options)
    toxiproxy.addToxic("nameserver-early", "hold", "latency", "downstream", "\"latency\":600000")
    val plan = scala.concurrent.Future(planned(second))(scala.concurrent.ExecutionContext.global)
    try {
      try EmbeddedRocketMQ.awaitCondition("the master asked while the route is held", 30000)(
          second.requestCount >= 2)
      finally toxiproxy.removeToxic("nameserver-early", "hold")
      val ranges = scala.concurrent.Await.result(plan, scala.concurrent.duration.Duration(60, "s"))
      assert(ranges.values.map(r => r.max - r.min).sum === 3)
      // Its answer stood for the indexing wait: not asked again.
      assert(second.requestCount === 3)
    } finally second.close()
  }

  test(
    "a stream from RocketMQ into Parquet whose broker connections are reset while it reads and " +
      "plans writes every message once") {
    val topic = rocketmq.newTopic("read-resets")
    rocketmq.createTopic(topic, queues = 4)
    val sent = (0 until 2000).map(i => f"r$i%05d")
    rocketmq.sendSpread(topic, sent.map(TestMessage(_)))
    val out = Files.createTempDirectory("read-resets-").toString
    val accepted = toxiproxy.clientsAccepted(Proxy)
    val query = withFault("reset_peer", "downstream", "\"timeout\":500") {
      // A lost answer is waited for until its request's timeout: shorter ones than the defaults.
      val query = streamTopic(topic, "startingOffsets" -> "earliest",
        "maxOffsetsPerTrigger" -> "500", "requestTimeoutMs" -> "2000", "pullTimeoutMs" -> "1000")
        .selectExpr("CAST(body AS STRING) AS body").writeStream
        .format("parquet").option("path", s"$out/data")
        .option("checkpointLocation", s"$out/checkpoint").trigger(Trigger.AvailableNow()).start()
      val started = System.nanoTime()
      EmbeddedRocketMQ.awaitCondition("2 connections of the connector reset", 120000) {
        query.exception.foreach(e => throw e)
        toxiproxy.clientsAccepted(Proxy) >= accepted + 2
      }
      info(s"fault of ${(System.nanoTime() - started) / 1000000} ms")
      query
    }
    try {
      val ending = System.nanoTime()
      assert(query.awaitTermination(120000), "the stream did not end")
      info(s"ended ${(System.nanoTime() - ending) / 1000000} ms after the fault")
      query.exception.foreach(e => throw e)
      val written = spark.read.parquet(s"$out/data").collect().map(_.getString(0)).toSeq
      assert(written.sorted === sent)
    } finally query.stop()
  }

  test(
    "a real-time query copying between topics through 100 ms of latency each way copies every " +
      "message once") {
    val sent = (0 until 500).map(i => s"rt$i")
    realTimeCopy("rt", sent) { (_, copied) =>
      withFault("latency", "downstream", "\"latency\":100") {
        toxiproxy.addToxic(Proxy, "latency-up", "latency", "upstream", "\"latency\":100")
        try {
          EmbeddedRocketMQ.awaitCondition("500 messages copied", 120000)(
            copied().size >= sent.size)
          assert(copied().sorted === sent.sorted)
        } finally toxiproxy.removeToxic(Proxy, "latency-up")
      }
    }
  }

  test(
    "streams from RocketMQ into the memory sink and through foreachBatch whose broker " +
      "connections are reset while they read and plan give every message once") {
    val topic = rocketmq.newTopic("sink-resets")
    rocketmq.createTopic(topic, queues = 4)
    val sent = (0 until 2000).map(i => f"k$i%05d")
    rocketmq.sendSpread(topic, sent.map(TestMessage(_)))
    val fromBatches = new ConcurrentLinkedQueue[String]()
    val collect: (DataFrame, Long) => Unit =
      (batch, _) => batch.collect().foreach(row => fromBatches.add(row.getString(0)))
    val accepted = toxiproxy.clientsAccepted(Proxy)
    val queries = withFault("reset_peer", "downstream", "\"timeout\":500") {
      def read = streamTopic(topic, "startingOffsets" -> "earliest",
        "maxOffsetsPerTrigger" -> "500", "requestTimeoutMs" -> "2000", "pullTimeoutMs" -> "1000")
        .selectExpr("CAST(body AS STRING) AS body").writeStream.trigger(Trigger.AvailableNow())
      def checkpoint = Files.createTempDirectory("sink-resets-").toString
      val queries = Seq(
        read.format("memory").queryName("sink_resets").option("checkpointLocation", checkpoint)
          .start(),
        read.foreachBatch(collect).option("checkpointLocation", checkpoint).start())
      EmbeddedRocketMQ.awaitCondition("2 connections of the connector reset", 120000) {
        queries.flatMap(_.exception).foreach(e => throw e)
        toxiproxy.clientsAccepted(Proxy) >= accepted + 2
      }
      queries
    }
    try {
      queries.foreach { query =>
        assert(query.awaitTermination(120000), s"${query.name} did not end")
        query.exception.foreach(e => throw e)
      }
      assert(spark.table("sink_resets").collect().map(_.getString(0)).toSeq.sorted === sent)
      assert(fromBatches.asScala.toSeq.sorted === sent)
    } finally queries.foreach(_.stop())
  }

  test(
    "a stream reading a broker that takes requests and never answers fails naming the broker " +
      "after requestTimeoutMs, then retryTimeoutMs and at most one more requestTimeoutMs") {
    val topic = rocketmq.newTopic("silent-stream")
    rocketmq.createTopic(topic, queues = 2)
    rocketmq.sendBodies(topic, Seq("a", "b"))
    val (requestMs, retryMs) = (500L, 1500L)
    val (leastMs, mostMs) = (requestMs + retryMs, requestMs + retryMs + 2000L + requestMs)
    val query = streamTopic(topic, "startingOffsets" -> "earliest",
      "requestTimeoutMs" -> requestMs.toString, "retryTimeoutMs" -> retryMs.toString)
      .select("body").writeStream.format("memory").queryName("silent_stream").start()
    try {
      query.processAllAvailable()
      withFault("timeout", "downstream", "\"timeout\":0") {
        val started = System.nanoTime()
        val message = intercept[StreamingQueryException](query.awaitTermination(60000))
          .getMessage
        val tookMs = (System.nanoTime() - started) / 1000000
        info(s"failed after $tookMs ms (documented: $leastMs to $mostMs ms)")
        assert(message.contains("ROCKETMQ_BROKER_UNAVAILABLE"), message)
        assert(message.contains(rocketmq.brokerName), message)
        assert(tookMs >= leastMs && tookMs <= mostMs, s"$tookMs ms")
      }
    } finally query.stop()
  }

  test(
    "a real-time query copying between topics whose broker connections are reset while it " +
      "reads and writes copies every message, at most 1% twice") {
    val sent = (0 until 2000).map(i => f"rr$i%05d")
    val accepted = toxiproxy.clientsAccepted(Proxy)
    realTimeCopy("rt-resets", sent, "requestTimeoutMs" -> "2000", "pullTimeoutMs" -> "1000") {
      (query, copied) =>
        withFault("reset_peer", "downstream", "\"timeout\":500") {
          EmbeddedRocketMQ.awaitCondition("2 connections of the connector reset", 120000) {
            query.exception.foreach(e => throw e)
            toxiproxy.clientsAccepted(Proxy) >= accepted + 2
          }
        }
        EmbeddedRocketMQ.awaitCondition(s"${sent.size} messages copied", 120000) {
          query.exception.foreach(e => throw e)
          copied().size >= sent.size
        }
        query.stop()
        val extra = copied().size - sent.size
        info(s"$extra extra copies of ${sent.size} messages")
        assert(copied().toSet === sent.toSet)
        assert(extra <= sent.size / 100, s"$extra extra copies")
    }
  }

  /**
   * Runs `body` beside a real-time query copying `sent` (sent first to a new topic of 2 queues)
   * into another topic, its source read with `options`; `body` gets the query and a look at what
   * the target holds.
   */
  private def realTimeCopy(name: String, sent: Seq[String], options: (String, String)*)(
      body: (StreamingQuery, () => Seq[String]) => Unit): Unit = {
    val (source, target) = (rocketmq.newTopic(s"$name-in"), rocketmq.newTopic(s"$name-out"))
    rocketmq.createTopic(source, queues = 2)
    rocketmq.createTopic(target, queues = 2)
    rocketmq.sendBodies(source, sent)
    spark.conf.set("spark.sql.streaming.realTimeMode.allowlistCheck", "false")
    try {
      val query = streamTopic(source, ("startingOffsets" -> "earliest") +: options: _*)
        .select("body").writeStream.outputMode("update").format("rocketmq")
        .option("nameServer", rocketmq.nameServer).option("topic", target)
        .option("checkpointLocation", Files.createTempDirectory(s"$name-").toString)
        .trigger(Trigger.RealTime("5 seconds")).start()
      try body(query, () => rocketmq.readAll(target).map(m => new String(m.getBody, "UTF-8")))
      finally query.stop()
    } finally spark.conf.unset("spark.sql.streaming.realTimeMode.allowlistCheck")
  }
}
