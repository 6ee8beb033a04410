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
import java.util.concurrent.atomic.AtomicInteger

import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration._

import org.apache.spark.scheduler.{SparkListener, SparkListenerTaskEnd}
import org.apache.spark.sql.Encoders
import org.apache.spark.sql.execution.streaming.runtime.MemoryStream
import org.apache.spark.sql.functions.col
import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}

/**
 * Reads and writes through a real TCP fault proxy ([[Toxiproxy]]) between the connector and a real
 * broker, which tells clients the proxy's address: connections reset, answers delayed. Every test
 * removes its fault before it ends.
 */
class RocketMQNetworkFaultSuite extends RocketMQSparkSuiteBase {
  import ExecutionContext.Implicits.global

  // Tasks that lose a half message's answer fail (it is never sent twice): Spark runs them again.
  override protected def sparkMaster: String = "local[2,4]"

  private var toxiproxy: Toxiproxy = _
  private val Proxy = "broker"

  /**
   * How long the reset fault lasts: until the connector has connected again this many times, each
   * connection's answers lost (FAULT_CONNECTIONS to measure another; docs/benchmarks.md).
   */
  private val faultConnections = sys.env.get("FAULT_CONNECTIONS").map(_.toInt).getOrElse(6)

  /** Waits until a send's answer was lost, then until [[faultConnections]] more were reset. */
  private def awaitResets(log: SendLog): Unit = {
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
  private def streamInto(name: String, options: (String, String)*)
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
  private def withFault[T](kind: String, stream: String, attributes: String)(body: => T): T = {
    toxiproxy.addToxic(Proxy, kind, kind, stream, attributes)
    try body
    finally toxiproxy.removeToxic(Proxy, kind)
  }

  test(
    "a batch write whose broker connections are reset, its answers lost, stores every row, at " +
      "most 1% twice, and its possibleDuplicates are the extra copies") {
    val topic = rocketmq.newTopic("resets")
    rocketmq.createTopic(topic, queues = 8)
    val rows = 20000
    val log = new SendLog(topic)
    try {
      val started = System.nanoTime()
      var faultMs = 0L
      val write = withFault("reset_peer", "downstream", "\"timeout\":500") {
        val write = Future {
          spark.range(rows).select(col("id").cast("string").as("body")).repartition(2)
            .write.format("rocketmq").option("nameServer", rocketmq.nameServer).option("topic",
              topic)
            .save()
        }
        awaitResets(log)
        faultMs = (System.nanoTime() - started) / 1000000
        write
      }
      Await.result(write, 5.minutes)
      val tookMs = (System.nanoTime() - started) / 1000000
      val stored = rocketmq.readAll(topic).map(m => new String(m.getBody, "UTF-8"))
      val extra = stored.size - rows
      val counted = log.saveCounts.getOrElse("possibleDuplicates", -1L)
      info(
        s"reset fault of $faultMs ms ($faultConnections connections): $rows rows stored as " +
          s"${stored.size} ($extra extra copies), " +
          s"possibleDuplicates $counted, the write took $tookMs ms")
      assert(stored.toSet === (0 until rows).map(_.toString).toSet)
      assert(extra <= rows / 100, s"$extra extra copies of $rows rows")
      assert(counted === extra.toLong, s"possibleDuplicates $counted, extra copies $extra")
    } finally log.close()
  }

  test(
    "a stream into RocketMQ whose broker connections are reset during a batch's sends stores " +
      "every row, at most 1% twice, and its progress's possibleDuplicates are the extra copies") {
    val (topic, input, query) = streamInto("stream-resets")
    val rows = (0 until 5000).map(i => s"s$i")
    val log = new SendLog(topic)
    try {
      input.addData("first")
      query.processAllAvailable() // connected, the topic checked: the fault meets the batch's sends
      withFault("reset_peer", "downstream", "\"timeout\":500") {
        input.addData(rows: _*)
        awaitResets(log)
      }
      query.processAllAvailable()
      val stored = rocketmq.readAll(topic).map(m => new String(m.getBody, "UTF-8"))
      val extra = stored.size - rows.size - 1
      val counted =
        query.recentProgress.flatMap(p => Option(p.sink.metrics.get("possibleDuplicates")))
          .map(_.toLong).sum
      info(s"$extra extra copies of ${rows.size} rows, possibleDuplicates $counted")
      assert(stored.toSet === (rows :+ "first").toSet)
      assert(extra <= rows.size / 100, s"$extra extra copies")
      assert(counted === extra.toLong, s"possibleDuplicates $counted, extra copies $extra")
    } finally {
      log.close()
      query.stop()
    }
  }

  test(
    "a batch read of a broker that takes requests and never answers fails naming the broker " +
      "after requestTimeoutMs, then retryTimeoutMs and at most one more requestTimeoutMs, as the " +
      "options say") {
    val topic = rocketmq.newTopic("silent")
    rocketmq.createTopic(topic, queues = 2)
    rocketmq.sendBodies(topic, Seq("a", "b"))
    val (requestMs, retryMs) = (1000L, 3000L)
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
    "a batch write through 100 ms of latency each way and a 200 KB/s pipe stores every row once") {
    val topic = rocketmq.newTopic("slow-write")
    rocketmq.createTopic(topic, queues = 4)
    val rows = (0 until 2000).map(i => f"w$i%05d-" + "x" * 100)
    withFault("latency", "upstream", "\"latency\":100") {
      toxiproxy.addToxic(Proxy, "latency-back", "latency", "downstream", "\"latency\":100")
      toxiproxy.addToxic(Proxy, "thin", "bandwidth", "upstream", "\"rate\":200")
      val started = System.nanoTime()
      try {
        spark.createDataset(rows)(Encoders.STRING).toDF("body").repartition(2).write
          .format("rocketmq").option("nameServer", rocketmq.nameServer).option("topic", topic)
          .save()
        info(s"written in ${(System.nanoTime() - started) / 1000000} ms")
      } finally Seq("latency-back", "thin").foreach(toxiproxy.removeToxic(Proxy, _))
    }
    assert(rocketmq.readAll(topic).map(m => new String(m.getBody, "UTF-8")).sorted === rows)
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
    val (source, target) = (rocketmq.newTopic("rt-in"), rocketmq.newTopic("rt-out"))
    rocketmq.createTopic(source, queues = 2)
    rocketmq.createTopic(target, queues = 2)
    val sent = (0 until 500).map(i => s"rt$i")
    rocketmq.sendBodies(source, sent)
    spark.conf.set("spark.sql.streaming.realTimeMode.allowlistCheck", "false")
    try withFault("latency", "downstream", "\"latency\":100") {
        toxiproxy.addToxic(Proxy, "latency-up", "latency", "upstream", "\"latency\":100")
        val query = streamTopic(source, "startingOffsets" -> "earliest").select("body").writeStream
          .outputMode("update").format("rocketmq").option("nameServer", rocketmq.nameServer)
          .option("topic", target).option("checkpointLocation",
            Files.createTempDirectory("rt-").toString)
          .trigger(Trigger.RealTime("5 seconds")).start()
        try {
          def copied = rocketmq.readAll(target).map(m => new String(m.getBody, "UTF-8"))
          EmbeddedRocketMQ.awaitCondition("500 messages copied", 120000)(copied.size >= sent.size)
          query.stop()
          assert(copied.sorted === sent.sorted)
        } finally {
          query.stop()
          toxiproxy.removeToxic(Proxy, "latency-up")
        }
      }
    finally spark.conf.unset("spark.sql.streaming.realTimeMode.allowlistCheck")
  }

  test("an exactly-once stream whose broker connections are reset during a batch's half messages " +
    "delivers " +
    "every row once: the tasks that lost answers fail, and their retries' rows are the ones " +
    "committed") {
    val (topic, input, query) = streamInto("eo-resets", "deliveryGuarantee" -> "exactly_once")
    val rows = (0 until 2000).map(i => s"e$i")
    try {
      input.addData("first")
      query.processAllAvailable()
      val failedTasks = new AtomicInteger()
      val listener = new SparkListener {
        override def onTaskEnd(end: SparkListenerTaskEnd): Unit =
          if (!end.taskInfo.successful) failedTasks.incrementAndGet()
      }
      spark.sparkContext.addSparkListener(listener)
      try withFault("reset_peer", "downstream", "\"timeout\":500") {
          input.addData(rows: _*)
          // Over as a task fails: its retry then meets no fault (four failures would fail the
          // query).
          EmbeddedRocketMQ.awaitCondition("a task that lost a half message's answer", 60000)(
            failedTasks.get > 0)
        }
      finally spark.sparkContext.removeSparkListener(listener)
      query.processAllAvailable()
      val committed = rocketmq.readAll(topic).map(m => new String(m.getBody, "UTF-8"))
      assert(committed.sorted === (rows :+ "first").sorted)
    } finally query.stop()
  }
}
