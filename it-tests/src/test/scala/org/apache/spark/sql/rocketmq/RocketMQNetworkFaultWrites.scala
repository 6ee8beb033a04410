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

import java.util.concurrent.atomic.AtomicInteger

import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration._

import org.apache.spark.scheduler.{SparkListener, SparkListenerTaskEnd}
import org.apache.spark.sql.Encoders
import org.apache.spark.sql.functions.col

/** Writes through the fault proxy of [[RocketMQNetworkFaultBase]], batch and streaming. */
trait RocketMQNetworkFaultWrites extends RocketMQNetworkFaultBase {
  import ExecutionContext.Implicits.global

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

  test(
    "a batch write to a broker that takes requests and never answers fails naming the broker, " +
      "each task attempt after sendTimeoutMs, then retryTimeoutMs and at most one more " +
      "sendTimeoutMs, as the options say") {
    val topic = rocketmq.newTopic("silent-write")
    rocketmq.createTopic(topic, queues = 2)
    val (sendMs, retryMs) = (500L, 1000L)
    // RocketMQ's client notices a timed-out send when it scans its requests: every second, the
    // first time 3 s after it starts (a failed task's retry gets a new client).
    val (leastMs, mostMs) =
      (sendMs + retryMs, math.max(sendMs, 3000L) + 1000L + retryMs + 2000L + sendMs + 1000L)
    val attemptsMs = new java.util.concurrent.ConcurrentLinkedQueue[Long]()
    val listener = new SparkListener {
      override def onTaskEnd(end: SparkListenerTaskEnd): Unit =
        if (!end.taskInfo.successful) attemptsMs.add(end.taskInfo.duration)
    }
    spark.sparkContext.addSparkListener(listener)
    val message = try withFault("timeout", "downstream", "\"timeout\":0") {
        errorMessage(spark.range(10).select(col("id").cast("string").as("body")).coalesce(1)
          .write.format("rocketmq").option("nameServer", rocketmq.nameServer)
          .option("topic", topic).option("sendTimeoutMs", sendMs.toString)
          .option("retryTimeoutMs", retryMs.toString).option("requestTimeoutMs", "500").save())
      }
    finally spark.sparkContext.removeSparkListener(listener)
    info(s"task attempts failed after ${attemptsMs.toArray.mkString(", ")} ms " +
      s"(documented: $leastMs to $mostMs ms each)")
    assert(message.contains(rocketmq.brokerName), message)
    assert(attemptsMs.size === 4, "Spark's four attempts of the task")
    attemptsMs.toArray.map(_.asInstanceOf[Long]).foreach { ms =>
      assert(ms >= leastMs && ms <= mostMs, s"an attempt of $ms ms")
    }
  }
}
