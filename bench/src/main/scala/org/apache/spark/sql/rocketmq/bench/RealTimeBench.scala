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
 * Real-time queries topic to topic, side by side: RocketMQ to RocketMQ through this connector,
 * Kafka to Kafka through Spark's Kafka connector, each started from a PySpark program
 * (`bench/python_real_time.py`, on the pyspark of `python`'s virtualenv) under Spark's real-time
 * trigger with batches of `batch`. Two queries: `stateless` (each body through, the producer's time
 * in front of it) and `stateful` (a count per key of `keys`, update output, on `shufflePartitions`
 * shuffle partitions). The source and target topics have `queues` queues (partitions); the session
 * is `local[queues + shufflePartitions]`, the task slots a stateful real-time query needs at once.
 * Beside them, `relay`: no Spark, each system's own plain clients copying every message as the
 * stateless query does, in this JVM ([[PlainClientRelay]]), the floor each broker and client stack
 * gives on this machine; the Python program only reads its target.
 *
 * Before the measured runs each system makes an untimed one, stateless at the highest rate of the
 * runs for `warmUpRunSeconds` (0: none), so that every measured run is a warmed one whatever the
 * order; its figures are printed, not reported. Each run sends `rate` messages a second of 100
 * bytes for `warmupSeconds` (not counted) and `seconds`, waits for a batch to end past the source
 * topic's end (the Python program watches the progress reports), stops the query, and reports from
 * the target p50 / p95 / p99 of the broker's store time of each copy minus the producer's time
 * (Kafka's target topic is created with `LogAppendTime` so that its record time is the broker's
 * too), the copies counted, and what shows where the tail comes from: the pauses in the stored
 * times and the median batch-end phases of the progress reports, and the cores each process used
 * while the producer sent (the brokers, the bench's JVM with the producer, the PySpark JVM, the
 * Python program). Beside RocketMQ's rows, the connector's own latency metrics from those reports:
 * how long messages waited in their queues, how long sends took to be acknowledged. The producer
 * ([[SteadyProducer]]) waits for every send to be acknowledged (sending failed ones again), so the
 * source holds every message sent; every one must reach the target (stateless: each sequence number
 * acknowledged; count per key: the last count of every key adds up to the messages the source
 * holds, a message the producer's client retried after a timeout and the broker stored twice
 * counted twice). For copies stored twice, a line says where they came from: the rows the source
 * read, the offsets its batches spanned and read again (started before the previous batch's end),
 * the send requests the sink saw acknowledged and how far apart the copies were stored.
 */
final class RealTimeBench(results: BenchResults, python: Path, script: Path, kafkaJars: Seq[String],
    queues: Int,
    shufflePartitions: Int, keys: Int, batch: String, warmupSeconds: Int, seconds: Int,
    warmUpRunSeconds: Int) {

  private val json = new ObjectMapper()
  private val slots = queues + shufflePartitions

  private val SparkJvm = "PySpark JVM"

  /**
   * The cores a process used over a run's sending (warm-up included): CPU seconds per second, user
   * and system.
   */
  private final case class Cpu(process: String, user: Double, system: Double)

  /**
   * How long a relay may take, once the source holds every message, to have every copy
   * acknowledged.
   */
  private val RelayWaitMs = 120000L

  /**
   * One query (`stateless`, `stateful` or `relay`) of `system` at `rate` messages a second; with
   * `sinkSystem`, a query reading `system` and writing that other system (not a relay): which of
   * the two connectors a difference comes from.
   */
  final case class Run(system: BenchSystem, query: String, rate: Int,
      sinkSystem: Option[BenchSystem] = None) {
    require(sinkSystem.isEmpty || query != "relay", "a relay copies within one system")
    def sink: BenchSystem = sinkSystem.getOrElse(system)
    def name: String = s"${system.name}${sinkSystem.fold("")(s => s"-to-${s.name}")}/$query/$rate"
    /**
     * How the figures name the systems: the system, or the source and the sink when they differ.
     */
    def systems: String =
      sinkSystem.fold(system.name)(s => s"${system.name} source, ${s.name} sink")
  }

  /** Runs each of `runs` in one Python program (one Spark session) and adds its figures. */
  def measure(runs: Seq[Run], connection: BenchSystem => Map[String, String])(
      send: BenchSystem => SteadyProducer.AckedSend): Unit = {
    val program = new PythonProgram(Seq(python.toString, script.toString, "--kafka-jars",
      kafkaJars.mkString(","),
      "--slots", slots.toString, "--shuffle-partitions", shufflePartitions.toString))
    try {
      val started = json.readTree(program.await("STARTED"))
      val cores = started.get("cpuCount").asInt()
      val processes = Measure.watched ++
        Seq(SparkJvm -> started.get("jvmPid").asLong(), "Python" -> program.pid)
      println(
        s"BENCH realtime: pyspark ${started.get("pyspark").asText()}, " +
          s"${started.get("master").asText()} " +
          s"on $cores cores, Spark's Kafka connector " +
          s"${kafkaJars.map(_.split('/').last).mkString(", ")}")
      def ask(
          run: Run) = Map[String, Any]("system" -> run.system.name, "sinkSystem" -> run.sink.name,
        "query" -> run.query, "batch" -> batch, "keys" -> keys) ++ connection(run.system) ++
        connection(run.sink)
      // Each system's first run in the session paid for its warm-up (JIT, first connections, the
      // broker's own), and the run that came first paid for Spark's too: a run's p95 was ten times
      // its figure in a second run of the same session (docs/bench-real-time.md). So each system
      // first runs stateless at the highest rate of the runs, untimed (its figures printed, not
      // reported), and every measured run is a warmed one.
      if (warmUpRunSeconds > 0 && runs.nonEmpty) {
        val stateful = runs.filter(_.query == "stateful")
        val warmUps =
          runs.flatMap(r => Seq(r.system, r.sink)).distinct.map(Run(_, "stateless",
            runs.map(_.rate).max)) ++
            stateful.flatMap(r => Seq(r.system, r.sink)).distinct.map(Run(_, "stateful",
              stateful.map(_.rate).max))
        warmUps.foreach { warmUp =>
          once(program, warmUp, cores, processes, ask(warmUp), connection(warmUp.system),
            warmUpRunSeconds,
            reported = false)(send(warmUp.system))
        }
      }
      runs.foreach { run =>
        once(program, run, cores, processes, ask(run), connection(run.system), seconds,
          reported = true)(
          send(run.system))
      }
      program.finish()
    } finally program.close()
  }

  private def once(program: PythonProgram, run: Run, cores: Int, processes: Seq[(String, Long)],
      ask: Map[String, Any], connection: Map[String, String], seconds: Int, reported: Boolean)(
      send: SteadyProducer.AckedSend): Unit = {
    val (topic, target) = (s"bench-rt-${System.nanoTime()}", s"bench-rt-out-${System.nanoTime()}")
    val name =
      s"${run.systems} ${run.query} ${run.rate} msg/s${if (reported) "" else ", warm-up run"}"
    run.system.createTopic(topic, queues)
    run.sink.createStoreTimedTopic(target, queues)
    // A relay reads the source from its start: it holds every queue before the producer sends.
    val relay =
      if (run.query == "relay")
        Some(PlainClientRelay.start(run.system, connection, topic, target, queues))
      else None
    try
      measured(program, run, name, topic, target, cores, processes, ask, relay, seconds, reported)(
        send)
    finally relay.foreach(_.close())
  }

  /**
   * The rest of [[once]]: the sending, the wait for the target, the Python program's result, its
   * check.
   */
  private def measured(program: PythonProgram, run: Run, name: String, topic: String,
      target: String, cores: Int,
      processes: Seq[(String, Long)], ask: Map[String, Any], relay: Option[PlainClientRelay],
      seconds: Int,
      reported: Boolean)(send: SteadyProducer.AckedSend): Unit = {
    program.tell(
      "RUN " + json.writeValueAsString((ask ++ Map("topic" -> topic, "target" -> target)).asJava))
    program.await("READY")
    val cpuBefore = processes.map { case (_, pid) => Measure.userAndSystemSeconds(pid) }
    // The pulls a RocketMQ source's broker served (a relay's too): what the reads cost it goes by
    // requests.
    val pullRates = Some(run.system).collect {
      case r: RocketMQSystem =>
        new RocketMQBrokerPullRates(r.broker.nameServer, r.broker.brokerAddress)
    }
    val sendingFrom = System.nanoTime()
    val sent =
      try SteadyProducer.run(run.rate, warmupSeconds, seconds)((n, done) =>
          send(topic, body(n), done))
      catch { case e: Throwable => pullRates.foreach(_.close()); throw e }
    val sendingSeconds = (System.nanoTime() - sendingFrom) / 1e9
    val cpu = processes.zip(cpuBefore).map { case ((process, pid), (user, system)) =>
      val (userAfter, systemAfter) = Measure.userAndSystemSeconds(pid)
      Cpu(process, (userAfter - user) / sendingSeconds, (systemAfter - system) / sendingSeconds)
    }
    println(s"BENCH realtime $name: cores used while sending (user + system time): " +
      cpu.map(c => f"${c.process} ${c.user}%.2f + ${c.system}%.2f").mkString(", "))
    pullRates.flatMap(_.summary()).foreach { rates =>
      println(
        s"BENCH realtime $name: pulls a second the RocketMQ broker served while sending: $rates")
    }
    sent.requireAcknowledged(name)
    // Every acknowledged message is in the source topic (a send the client retried after a timeout
    // may be there twice); RocketMQ's broker acknowledges a send before it indexes the message.
    run.system.awaitReadable()
    val held = run.system.storedMessages(topic)
    require(held >= sent.acknowledged,
      s"$name: the source topic holds $held of ${sent.acknowledged} acknowledged")
    // A relay copies every message the source holds: the target is complete once as many copies are
    // acknowledged.
    relay.foreach { r =>
      require(r.awaitRelayed(held, RelayWaitMs),
        s"$name: the relay had ${r.relayed} of the $held messages of the source acknowledged in " +
          "the target " +
          s"${RelayWaitMs / 1000} s after the source held them all (${r.resent} sent again after " +
          "a failure)")
      run.system.awaitReadable()
      println(s"BENCH realtime $name: relayed ${r.relayed}, ${r.resent} sent again after a failure")
    }
    program.tell("DONE " + json.writeValueAsString(
      Map("sent" -> sent.acknowledged, "sourceHeld" -> held,
        "measuredFrom" -> sent.measuredFrom).asJava))
    val result = json.readTree(program.await("RESULT"))
    val (accounted, stored) = (result.get("accounted").asLong(), result.get("stored").asLong())
    val reads = result.get("reads")
    val queryReads = // a query's batches; a relay has none
      if (relay.nonEmpty) ""
      else
        s"; source rows read ${reads.get("inputRows")}, offsets spanned " +
          s"${reads.get("offsetsSpanned")}, read again ${reads.get("offsetsReadAgain")}; send " +
          s"requests acknowledged ${reads.get("sendsAcknowledged")}; caught up " +
          s"${result.get("caughtUp")}"
    println(s"BENCH realtime $name: sent ${sent.acknowledged}, all acknowledged (${sent.resent} " +
      "sent again after a " +
      s"failure; failures: ${sent.failureKinds}), source held $held, target stored $stored, " +
      s"accounted for $accounted, duplicates " +
      s"${result.get("duplicates")} (first to last copy p50 " +
      s"${result.get("duplicateApartMsP50")} ms, p99 ${result.get("duplicateApartMsP99")} ms)" +
      s"$queryReads; p50 / p95 / p99 ${result.get("p50")} / ${result.get("p95")} / " +
      s"${result.get("p99")} ms over ${result.get("counted")} copies")
    // Stateless and relay: each acknowledged sequence number in the target. Count per key: every
    // source row counted.
    val expected = if (run.query == "stateful") held else sent.acknowledged
    require(accounted == expected,
      s"$name: the target accounts for $accounted of the $expected messages expected " +
        s"(${sent.acknowledged} sent " +
        s"and acknowledged, $held in the source topic, $stored copies stored)")
    if (reported) report(run, cores, sent, held, result, cpu, relay.map(_.resent))
  }

  /** `<n> xxx…`: the message's sequence number, padded to 100 bytes. */
  private def body(n: Long): Array[Byte] = {
    val number = s"$n "
    (number + "x" * (100 - number.length)).getBytes(UTF_8)
  }

  private def report(run: Run, cores: Int, sent: SteadyProducer.Sent, held: Long, result: JsonNode,
      cpu: Seq[Cpu],
      relayResent: Option[Long]): Unit = {
    val query = run.query match {
      case "stateless" => "stateless"
      case "relay" => "relay, the system's own clients, no Spark"
      case _ => s"count per key ($keys keys, $shufflePartitions shuffle partitions)"
    }
    val what =
      run.sinkSystem.fold(query)(sink => s"$query, ${run.system.name} source to ${sink.name} sink")
    val where =
      if (run.query == "relay") s"${run.rate} msg/s, $queues queues, on $cores cores"
      else s"${run.rate} msg/s, $queues queues, $batch batches, local[$slots] on $cores cores"
    def add(name: String, unit: String, value: JsonNode): Unit =
      if (value != null && !value.isNull) {
        results.add(Figure("realtime", s"$what: $name ($where)", run.system.name, unit,
          Seq(value.asDouble())))
      }
    Seq("p50", "p95", "p99").foreach { p =>
      add(s"produce to stored copy $p (Kafka target: LogAppendTime)", "ms", result.get(p))
    }
    add("copies counted", "messages", result.get("counted"))
    add("copies stored more than once (at-least-once sinks)", "messages", result.get("duplicates"))
    results.add(Figure("realtime", s"$what: sent and acknowledged per second ($where)",
      run.system.name, "msg/s",
      Seq(sent.acknowledged.toDouble / (warmupSeconds + seconds))))
    results.add(Figure("realtime", s"$what: producer sends sent again after a failure ($where)",
      run.system.name,
      "sends", Seq(sent.resent.toDouble)))
    results.add(Figure("realtime",
      s"$what: source messages stored twice by the producer's client retries ($where)",
      run.system.name, "messages", Seq((held - sent.acknowledged).toDouble)))
    relayResent.foreach { resent =>
      results.add(Figure("realtime", s"$what: relay sends sent again after a failure ($where)",
        run.system.name,
        "sends", Seq(resent.toDouble)))
    }
    val reads = result.get("reads")
    if (run.query != "relay") { // a query's batches; a relay has none
      add("source offsets the batches spanned", "offsets", reads.get("offsetsSpanned"))
      add("source offsets a batch read again", "offsets", reads.get("offsetsReadAgain"))
      if (run.sink.name == "rocketmq") {
        add("send requests the sink saw acknowledged", "requests", reads.get("sendsAcknowledged"))
      }
    }
    add("stored-time pauses over 50 ms", "pauses", result.get("pauses"))
    add("longest stored-time pause", "ms", result.get("longestPauseMs"))
    cpu.foreach { c =>
      results.add(Figure("realtime", s"$what: CPU used while sending, ${c.process} ($where)",
        run.system.name,
        "% of a core", Seq(100 * (c.user + c.system))))
      results.add(Figure("realtime",
        s"$what: CPU used while sending, ${c.process}, system time ($where)",
        run.system.name, "% of a core", Seq(100 * c.system)))
    }
    if (run.query != "relay") progressFigures(result.get("progress"), add)
  }

  /**
   * What a query's progress reports tell: its batch ends, and the connector's latency metrics
   * (RocketMQ's).
   */
  private def progressFigures(progress: JsonNode, add: (String, String, JsonNode) => Unit): Unit = {
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
