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

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Path

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

/**
 * Real-time queries topic to topic, side by side: RocketMQ to RocketMQ through this connector, Kafka to Kafka
 * through Spark's Kafka connector, each started from a PySpark program (`bench/python_real_time.py`, on the pyspark
 * of `python`'s virtualenv) under Spark's real-time trigger with batches of `batch`. Two queries: `stateless` (each
 * body through, the producer's time in front of it) and `stateful` (a count per key of `keys`, update output, on
 * `shufflePartitions` shuffle partitions). The source and target topics have `queues` queues (partitions); the
 * session is `local[queues + shufflePartitions]`, the task slots a stateful real-time query needs at once.
 *
 * Each run sends `rate` messages a second of 100 bytes for `warmupSeconds` (not counted) and `seconds`, waits for
 * a batch to end past the source topic's end (the Python program watches the progress reports), stops the query,
 * and reports from the target p50 / p95 / p99 of the broker's store time
 * of each copy minus the producer's time (Kafka's target topic is created with `LogAppendTime` so that its record
 * time is the broker's too), the copies counted, and what shows where the tail comes from: the pauses in the stored
 * times and the median batch-end phases of the progress reports. Beside RocketMQ's rows, the connector's own
 * latency metrics from those reports: how long messages waited in their queues, how long sends took to be
 * acknowledged. Every message the source topic holds must reach the target (for the count, the last count of every
 * key adds up); the messages sent but not held (one-way sends the broker turned away) are a figure of their own. For
 * copies stored twice, a line says where they came from: the rows the source read, the offsets a batch read again
 * (started before the previous batch's end), the sends the sink saw acknowledged and how far apart the copies were
 * stored.
 */
final class RealTimeBench(results: BenchResults, python: Path, script: Path, kafkaJars: Seq[String], queues: Int,
    shufflePartitions: Int, keys: Int, batch: String, warmupSeconds: Int, seconds: Int) {

  private val json = new ObjectMapper()
  private val slots = queues + shufflePartitions

  /** One query (`stateless` or `stateful`) of `system` at `rate` messages a second. */
  final case class Run(system: BenchSystem, query: String, rate: Int)

  /** Runs each of `runs` in one Python program (one Spark session) and adds its figures. */
  def measure(runs: Seq[Run], connection: BenchSystem => Map[String, String])(
      send: BenchSystem => (String, Array[Byte]) => Unit): Unit = {
    val program = new PythonProgram(Seq(python.toString, script.toString, "--kafka-jars", kafkaJars.mkString(","),
      "--slots", slots.toString, "--shuffle-partitions", shufflePartitions.toString))
    try {
      val started = json.readTree(program.await("STARTED"))
      val cores = started.get("cpuCount").asInt()
      println(s"BENCH realtime: pyspark ${started.get("pyspark").asText()}, ${started.get("master").asText()} " +
        s"on $cores cores, Spark's Kafka connector ${kafkaJars.map(_.split('/').last).mkString(", ")}")
      runs.foreach { run =>
        val ask = Map[String, Any]("system" -> run.system.name, "query" -> run.query, "batch" -> batch,
          "keys" -> keys) ++ connection(run.system)
        once(program, run, cores, ask)(send(run.system))
      }
      program.finish()
    } finally program.close()
  }

  private def once(program: PythonProgram, run: Run, cores: Int, ask: Map[String, Any])(
      send: (String, Array[Byte]) => Unit): Unit = {
    val (topic, target) = (s"bench-rt-${System.nanoTime()}", s"bench-rt-out-${System.nanoTime()}")
    run.system.createTopic(topic, queues)
    run.system.createStoreTimedTopic(target, queues)
    program.tell("RUN " + json.writeValueAsString((ask ++ Map("topic" -> topic, "target" -> target)).asJava))
    program.await("READY")
    val (sent, measuredFrom) = SteadyProducer.run(run.rate, warmupSeconds, seconds)(n => send(topic, body(n)))
    val held = sourceHeld(run.system, topic, sent)
    program.tell("DONE " + json.writeValueAsString(
      Map("sent" -> sent, "sourceHeld" -> held, "measuredFrom" -> measuredFrom).asJava))
    val result = json.readTree(program.await("RESULT"))
    val (accounted, stored) = (result.get("accounted").asLong(), result.get("stored").asLong())
    val reads = result.get("reads")
    println(s"BENCH realtime ${run.system.name} ${run.query} ${run.rate} msg/s: sent $sent, source held $held, " +
      s"target stored $stored, accounted for $accounted, duplicates ${result.get("duplicates")} (first to last copy " +
      s"p50 ${result.get("duplicateApartMsP50")} ms, p99 ${result.get("duplicateApartMsP99")} ms); source rows read " +
      s"${reads.get("inputRows")}, offsets spanned ${reads.get("offsetsSpanned")}, read again " +
      s"${reads.get("offsetsReadAgain")}; sends acknowledged ${reads.get("sendsAcknowledged")}; caught up " +
      s"${result.get("caughtUp")}")
    require(accounted == held,
      s"${run.system.name} ${run.query}: the target accounts for $accounted of the $held " +
        s"messages the source holds ($sent sent, $stored stored)")
    report(run, cores, sent, held, result)
  }

  /**
   * What the query can read of the `sent` messages: the source topic's count once it reaches `sent` or has not grown
   * for 2 s (Kafka's producer may still hold records; a one-way send of RocketMQ's that the broker turned away is
   * counted sent, never stored).
   */
  private def sourceHeld(system: BenchSystem, topic: String, sent: Long): Long = {
    system.awaitReadable()
    var held = system.storedMessages(topic)
    var grewAt = System.currentTimeMillis()
    while (held < sent && System.currentTimeMillis() - grewAt < 2000) {
      Thread.sleep(200)
      val now = system.storedMessages(topic)
      if (now > held) { held = now; grewAt = System.currentTimeMillis() }
    }
    held
  }

  /** `<n> xxx…`: the message's sequence number, padded to 100 bytes. */
  private def body(n: Long): Array[Byte] = {
    val number = s"$n "
    (number + "x" * (100 - number.length)).getBytes(UTF_8)
  }

  private def report(run: Run, cores: Int, sent: Long, held: Long, result: JsonNode): Unit = {
    val what = if (run.query == "stateless") "stateless"
    else s"count per key ($keys keys, $shufflePartitions shuffle partitions)"
    val where = s"${run.rate} msg/s, $queues queues, $batch batches, local[$slots] on $cores cores"
    def add(name: String, unit: String, value: JsonNode): Unit =
      if (value != null && !value.isNull) {
        results.add(Figure("realtime", s"$what: $name ($where)", run.system.name, unit, Seq(value.asDouble())))
      }
    Seq("p50", "p95", "p99").foreach { p =>
      add(s"produce to stored copy $p (Kafka target: LogAppendTime)", "ms", result.get(p))
    }
    add("copies counted", "messages", result.get("counted"))
    add("copies stored more than once (at-least-once sinks)", "messages", result.get("duplicates"))
    results.add(Figure("realtime", s"$what: sent per second ($where)", run.system.name, "msg/s",
      Seq(sent.toDouble / (warmupSeconds + seconds))))
    results.add(Figure("realtime", s"$what: sent but not in the source topic (one-way sends turned away) ($where)",
      run.system.name, "messages", Seq((sent - held).toDouble)))
    val reads = result.get("reads")
    add("source offsets a batch read again", "offsets", reads.get("offsetsReadAgain"))
    if (run.system.name == "rocketmq") {
      add("sends the sink saw acknowledged", "messages", reads.get("sendsAcknowledged"))
    }
    add("stored-time pauses over 50 ms", "pauses", result.get("pauses"))
    add("longest stored-time pause", "ms", result.get("longestPauseMs"))
    val progress = result.get("progress")
    add("progress reports", "batches", progress.get("batches"))
    Seq("walCommit", "commitOffsets", "queryPlanning").foreach { phase =>
      add(s"batch end: $phase, median", "ms", progress.get(phase))
    }
    Seq("queueWaitMs" -> "the source", "sendAckMs" -> "the sink").foreach { case (metric, of) =>
      add(s"$of's ${metric}P50, mean of batches", "ms", progress.get(s"${metric}P50"))
      add(s"$of's ${metric}P99, mean of batches", "ms", progress.get(s"${metric}P99"))
      add(s"$of's ${metric}Max, largest", "ms", progress.get(s"${metric}Max"))
      val count = metric.stripSuffix("Ms") + "Count"
      add(s"$of's $count, total", "measures", progress.get(count))
    }
  }
}
