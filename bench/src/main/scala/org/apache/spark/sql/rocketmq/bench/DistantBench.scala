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

package org.apache.spark.sql.rocketmq.bench

import java.net.ServerSocket
import java.nio.file.Path

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.rocketmq.{RocketMQBrokerProcess, Toxiproxy}

/**
 * A batch read across a slow network beside the same read nearby, for the connector and Spark's
 * Kafka connector behind the same fault proxy (Toxiproxy) in the same run: a RocketMQ broker and
 * a Kafka broker, each in a process of its own with the same JVM flags (`brokerJvmOptions`), both
 * telling clients the proxy's addresses (RocketMQ's name server, in this JVM, behind the proxy
 * too), each filled with the same messages. Nearby is the
 * proxy without a fault; far is `delayMs` added to the bytes each way. Both connectors on their
 * defaults. Each read's first run is reported on its own, beside the median of the runs after it
 * (Kafka's far read: its first run alone). `systems`: those measured: rocketmq, python (the
 * connector from a PySpark program, `bench/python_read.py` on `python`, a virtualenv's with the
 * wheel: a Spark of its own, `local[2]` on its defaults) and kafka.
 */
final class DistantBench(spark: SparkSession, results: BenchResults, kafkaClasspath: String,
    brokerJvmOptions: Seq[String], kafkaLog: Path, messages: Int, bodyBytes: Int, queues: Int,
    runs: Int, delayMs: Int, systems: Seq[String], python: => Path) {

  private val Far = "127.0.0.2" // the loopback address clients are told: the proxy's

  def measure(): Unit = {
    val toxiproxy = Toxiproxy.start()
    val rocketmq = new RocketMQBrokerProcess(commitLogFileSize = 1024 * 1024 * 1024,
      brokerJvmOptions, Seq(s"brokerIP1=$Far", "bindAddress=127.0.0.1")).start()
    val kafka = new KafkaProcess(kafkaClasspath, brokerJvmOptions, kafkaLog, Far).start()
    val fromPython = if (systems.contains("python")) Some(new PythonReads(python)) else None
    try {
      val nameServerPort = freePort()
      val proxies = Seq(
        ("nameserver", s"$Far:$nameServerPort", rocketmq.nameServer),
        ("broker", s"$Far:${rocketmq.brokerPort}", s"127.0.0.1:${rocketmq.brokerPort}"),
        ("kafka", s"$Far:${kafka.port}", s"127.0.0.1:${kafka.port}"))
      proxies.foreach { case (name, listen, upstream) => toxiproxy.proxy(name, listen, upstream) }
      val nameServer = s"$Far:$nameServerPort"
      val bootstrap = s"$Far:${kafka.port}"
      val topic = "bench-distant"
      rocketmq.createTopic(topic, queues)
      kafka.createTopic(topic, queues)
      val rows = spark.range(0, messages.toLong, 1, queues)
        .selectExpr(s"repeat('x', $bodyBytes) AS body")
      rows.write.format("rocketmq").option("nameServer", nameServer).option("topic", topic).save()
      rows.selectExpr("body AS value").write.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap).option("topic", topic)
        .option("kafka.enable.idempotence", "false").save()
      require(rocketmq.maxOffsets(topic).values.sum == messages)
      require(kafka.endOffsets(topic) == messages)
      def readRocketMQ() = spark.read.format("rocketmq").option("nameServer", nameServer)
        .option("topic", topic).load()
      def readKafka() = spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic).load().selectExpr("value AS body")
      def readBoth(how: String, kafkaRuns: Int): Unit = {
        if (systems.contains("rocketmq")) {
          readRuns("rocketmq", s"batch read, $how", runs)(timed("rocketmq", readRocketMQ()))
        }
        fromPython.foreach(p =>
          readRuns("rocketmq", s"batch read from Python, $how", runs)(
            p.read(nameServer, topic, messages.toLong * bodyBytes)))
        if (systems.contains("kafka"))
          readRuns("kafka", s"batch read, $how", kafkaRuns)(timed("kafka", readKafka()))
      }
      readBoth("nearby (through the proxy, no delay)", runs)
      proxies.foreach { case (name, _, _) =>
        Seq("upstream", "downstream").foreach { stream =>
          toxiproxy.addToxic(name, s"delay-$stream", "latency", stream, s""""latency":$delayMs""")
        }
      }
      // Spark's Kafka connector takes minutes to read far on its defaults: its first run alone.
      readBoth(s"$delayMs ms each way", kafkaRuns = 0)
    } finally {
      fromPython.foreach(_.close())
      kafka.close()
      rocketmq.close()
      toxiproxy.close()
    }
  }

  /**
   * Seconds a read in this JVM took. It sums the bodies' lengths: a read that came back short must
   * not count as fast.
   */
  private def timed(system: String, read: => DataFrame): Double = {
    val start = System.nanoTime()
    val bytes = read.selectExpr("sum(length(body))").head().getLong(0)
    val seconds = (System.nanoTime() - start) / 1e9
    require(bytes == messages.toLong * bodyBytes, s"$system's read summed $bytes bytes of bodies")
    seconds
  }

  private def readRuns(system: String, name: String, runs: Int)(seconds: => Double): Unit = {
    val values = (0 to runs).map(_ => messages / seconds)
    results.add(Figure("distant", s"$name, first run", system, "msg/s", values.take(1)))
    if (runs > 0) results.add(Figure("distant", name, system, "msg/s", values.drop(1)))
  }

  private def freePort(): Int = {
    val socket = new ServerSocket(0)
    try socket.getLocalPort
    finally socket.close()
  }
}
