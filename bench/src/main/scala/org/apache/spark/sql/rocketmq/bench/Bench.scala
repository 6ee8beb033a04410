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

import java.nio.file.{Files, Paths}

import scala.util.control.NonFatal

import org.apache.rocketmq.common.message.Message

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.rocketmq.{EmbeddedRocketMQ, RocketMQBrokerProcess, RocketMQPlainClients}

/**
 * The side-by-side bench: RocketMQ through this connector and its plain clients, Kafka through
 * Spark's Kafka connector and its plain clients, on single-node brokers of their own (each its own
 * JVM with the same heap, default settings), the same Spark session (`local[2]`), messages, body
 * size and queue count. Prints every figure as it comes and writes them all to one JSON file.
 *
 * Usage: Bench --kafka-classpath <file> --out <results.json> [--quick] [--sections read,plain,...]
 * [--logs <dir>] [--realtime-seconds <seconds of each realtime run>] [--realtime-runs
 * <system>/<query>/<rate>,...] [--planning-queues 1024,16x1024 (see PlanningBench)]
 * [--distant-messages N] [--distant-runs N] [--distant-systems rocketmq,python,kafka
 * (see DistantBench)]
 * The sections
 * `pulls` (batch reads with 4, 8, 16 and 32 pulls under way, taken in turns) and `realtime`
 * (real-time queries topic to topic from pyspark 4.3, and beside them each system's own clients
 * relaying topic to topic with no Spark, runs `<system>/relay/<rate>`; about 65 minutes, the four
 * relay runs 5 minutes each), `tiered` (a read from RocketMQ 5's tiered storage beside a local
 * one, see [[TieredBench]]) and `distant` (reads across a slow network, see [[DistantBench]]) run
 * only when named. `--quick` runs every section on small sizes, one
 * run each: it checks the bench works, not the speed.
 */
object Bench {
  /**
   * The name of the bench's own JVM (Spark in local mode, the plain clients) among the processes it
   * watches.
   */
  val OwnJvm = "bench JVM"

  private val AllSections =
    Seq("read", "plain", "latency", "python", "planning", "pushdown", "proxy", "write",
      "readafterwrite", "heap")

  final case class Sizes(messages: Int, runs: Int, latencySeconds: Int, latencyRuns: Int,
      planningRounds: Int,
      heapBacklogBytes: Long)

  private val Full =
    Sizes(messages = 500000, runs = 3, latencySeconds = 20, latencyRuns = 3, planningRounds = 20,
      heapBacklogBytes = 20L * 512 * 1024 * 1024)
  private val Quick =
    Sizes(messages = 4000, runs = 1, latencySeconds = 3, latencyRuns = 1, planningRounds = 1,
      heapBacklogBytes = 64L * 1024 * 1024)

  private val Queues = 8
  private val BodyBytes = 1024
  private val Threads = 2
  private val BrokerHeap =
    Seq("-Xmx1g", "-XX:+UseG1GC") // Kafka's start script's heap, for both brokers
  private val LatencyRate = 200
  /**
   * The batch durations of the real-time latency runs, in seconds: Spark's minimum, whose batch
   * ends (a pause of Spark's checkpoint writes each) hold up a few percent of the messages, and one
   * whose ends hold up under 1%.
   */
  private val RealTimeBatchSeconds = Seq(5, 30)
  /**
   * Continuous processing records its progress this often (Spark's own default interval is 1
   * second).
   */
  private val ContinuousEpochSeconds = 1
  private val HeapReaderMiB = 512

  /**
   * Runs the bench and ends the JVM with status 0 if every section ran and everything it started
   * closed, else 1.
   */
  def main(args: Array[String]): Unit = {
    val ok =
      try run(parse(args.toList))
      catch { case e: Throwable => e.printStackTrace(); false }
    exit(if (ok) 0 else 1)
  }

  /**
   * Runs the sections `options` name; whether everything the bench started then closed without an
   * error.
   */
  private def run(options: Map[String, String]): Boolean = {
    val quick = options.contains("quick")
    val sizes = if (quick) Quick else Full
    Measure.warmupRuns = if (quick) 0 else 1
    // The quick mode checks every section works, those run only when named included.
    val sections = options.get("sections").map(_.split(",").toSeq)
      .getOrElse(
        if (quick) AllSections ++ Seq("pulls", "realtime", "tiered", "distant") else AllSections)
    // Quick: 20 s runs of 5-second batches (Spark's minimum), so that batches end within them.
    val realTimeSeconds =
      options.get("realtime-seconds").map(_.toInt).getOrElse(if (quick) 20 else 300)
    val realTimeBatch = if (quick) "5 seconds" else RealTimeSection.Batch
    val out = Paths.get(options.getOrElse("out", sys.error("--out <results.json> is required")))
    val kafkaClasspath = KafkaProcess.classpathFrom(
      Paths.get(options.getOrElse("kafka-classpath",
        sys.error("--kafka-classpath <file> is required"))))
    val settings = Map[String, Any]("quick" -> quick, "messages" -> sizes.messages,
      "runs" -> sizes.runs,
      "warmupRuns" -> Measure.warmupRuns,
      "bodyBytes" -> BodyBytes, "queues" -> Queues, "sparkMaster" -> s"local[$Threads]",
      "brokerJvm" -> BrokerHeap.mkString(" "),
      "kafkaBroker" -> sys.props.getOrElse("bench.kafkaVersion", "?"),
      "latencyRatePerSecond" -> LatencyRate, "latencySecondsPerRun" -> sizes.latencySeconds,
      "heapReaderXmxMiB" -> HeapReaderMiB, "heapBacklogBytes" -> sizes.heapBacklogBytes,
      "realTimeRatesPerSecond" -> RealTimeSection.Rates.mkString(","),
      "realTimeSecondsPerRun" -> realTimeSeconds,
      "realTimeBatch" -> realTimeBatch, "realTimeQueues" -> Queues,
      "realTimeShufflePartitions" -> RealTimeSection.ShufflePartitions,
      "realTimeSparkMaster" -> s"local[${Queues + RealTimeSection.ShufflePartitions}]",
      "realTimePyspark" -> sys.props.getOrElse("bench.realTimeSparkVersion", "?"))
    val results = new BenchResults(settings)
    val scratch = Files.createTempDirectory("rocketmq-spark-bench-")

    val spark = SparkSession.builder().master(s"local[$Threads]").appName("rocketmq-spark-bench")
      .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
      .config("spark.sql.shuffle.partitions", Threads.toString).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    val rocketmqBroker =
      new RocketMQBrokerProcess(commitLogFileSize = 1024 * 1024 * 1024, BrokerHeap).start()
    val logs = Files.createDirectories(Paths.get(options.getOrElse("logs", "bench/target/logs")))
    val kafkaBroker =
      new KafkaProcess(kafkaClasspath, BrokerHeap,
        logs.resolve(s"kafka-${System.currentTimeMillis()}.log"))
        .start()
    Measure.watched =
      Seq("rocketmq broker" -> rocketmqBroker.brokerPid, "kafka broker" -> kafkaBroker.pid,
        OwnJvm -> ProcessHandle.current().pid())
    val rocketmq = new RocketMQSystem(rocketmqBroker)
    val kafka = new KafkaSystem(kafkaBroker)
    val plainRocketMQ = new RocketMQPlainClients(rocketmqBroker.nameServer)
    var closed = false
    try {
      val connectors = new ConnectorThroughput(spark, results, scratch, sizes.messages, BodyBytes,
        Queues, sizes.runs)
      val plain =
        new PlainClientThroughput(results, sizes.messages, BodyBytes, Queues, sizes.runs, Threads)
      lazy val rocketmqTopic = connectors.filledTopic(rocketmq)
      lazy val kafkaTopic = connectors.filledTopic(kafka)
      // The sections that leave the most data in the brokers come last: the writes (gigabytes in
      // RocketMQ's commit log, exactly-once's half and op messages included) and the heap's backlog
      // (10 GB). RocketMQ maps its commit log into memory. With the writes first (2026-11-24), 19
      // GB of the machine's 24 GB were mapped by the time of the reads, the kernel paged the files
      // in and out (40% system CPU), and the reads of both connectors ran at about half the speed
      // they have on brokers holding only their topics.
      if (sections.contains("read")) {
        connectors.warmUpReads(rocketmq, rocketmqTopic, most = if (quick) 1 else 12)
        connectors.warmUpReads(kafka, kafkaTopic, most = if (quick) 1 else 12)
        connectors.batchRead(rocketmq, rocketmqTopic)
        connectors.batchRead(rocketmq, rocketmqTopic, "batch read, pullsInFlight=1",
          Map("pullsInFlight" -> "1"))
        connectors.batchRead(rocketmq, rocketmqTopic,
          "batch read, pullsInFlight=4 (the earlier default)",
          Map("pullsInFlight" -> "4"))
        // What raising the broker's pull limits buys (the only figure not on default broker
        // settings).
        rocketmq.setPullLimits(plainRocketMQ, RocketMQSystem.RaisedPullLimits)
        try connectors.batchRead(rocketmq, rocketmqTopic,
            "batch read, broker pull limits 1024 / 4 MiB")
        finally rocketmq.setPullLimits(plainRocketMQ, RocketMQSystem.DefaultPullLimits)
        connectors.batchRead(kafka, kafkaTopic)
        connectors.streamingRead(rocketmq, rocketmqTopic)
        connectors.streamingRead(kafka, kafkaTopic)
      }
      // Only when asked for: how many pulls under way pay (about 4 minutes).
      if (sections.contains("pulls")) {
        connectors.warmUpReads(rocketmq, rocketmqTopic, most = if (quick) 1 else 12)
        (1 to 3).foreach { round =>
          Seq("4", "8", "16", "32").foreach { pulls =>
            connectors.batchRead(rocketmq, rocketmqTopic,
              s"batch read, pullsInFlight=$pulls, round $round",
              Map("pullsInFlight" -> pulls))
          }
        }
      }
      if (sections.contains("plain")) {
        plain.rocketmqWrite(rocketmq, plainRocketMQ, batch = 1)
        plain.rocketmqWrite(rocketmq, plainRocketMQ, batch = 128)
        plain.kafkaWrite(kafka)
        plain.rocketmqRead(rocketmq, plainRocketMQ, rocketmqTopic, synchronous = true)
        plain.rocketmqRead(rocketmq, plainRocketMQ, rocketmqTopic, synchronous = false)
        plain.kafkaRead(kafka, kafkaTopic)
      }
      if (sections.contains("latency")) {
        val latency =
          new LatencyBench(spark, results, scratch, Queues, LatencyRate, warmupSeconds = 2,
            sizes.latencySeconds, sizes.latencyRuns)
        val sendToRocketMQ: (String, Array[Byte]) => Unit =
          (topic, body) => plainRocketMQ.producer.sendOneway(new Message(topic, body))
        latency.measureSparkFloor()
        latency.measure(rocketmq)(sendToRocketMQ)
        // A full run spans three batch ends at least, as many as a user's query would meet in that
        // time.
        def realTimeRunSeconds(batchSeconds: Int): Int =
          if (quick) sizes.latencySeconds else math.max(sizes.latencySeconds, 3 * batchSeconds)
        RealTimeBatchSeconds.foreach { batchSeconds =>
          latency.measureRealTime(rocketmq, batchSeconds, realTimeRunSeconds(batchSeconds))(
            sendToRocketMQ)
        }
        latency.measureContinuous(rocketmq, ContinuousEpochSeconds)(sendToRocketMQ)
        val producer = KafkaProcess.producer(kafkaBroker.bootstrapServers)
        try {
          val sendToKafka: (String, Array[Byte]) => Unit =
            (topic, body) =>
              producer.send(new org.apache.kafka.clients.producer.ProducerRecord(topic, body))
          latency.measure(kafka)(sendToKafka)
          // The same three with checkpoint files written without Spark's default manager's chmod
          // processes.
          val fileSystem = Some(LatencyBench.FileSystemCheckpoints)
          latency.measureSparkFloor(fileSystem)
          latency.measure(rocketmq, fileSystem)(sendToRocketMQ)
          latency.measure(kafka, fileSystem)(sendToKafka)
          RealTimeBatchSeconds.foreach { batchSeconds =>
            latency.measureRealTime(kafka, batchSeconds, realTimeRunSeconds(batchSeconds))(
              sendToKafka)
          }
          latency.measureContinuous(kafka, ContinuousEpochSeconds)(sendToKafka)
        } finally producer.close()
      }
      if (sections.contains("python")) {
        val python = new PythonLatencyBench(results, PythonLatencyBench.venvPython(Paths.get("")),
          Paths.get("bench/python_latency.py"), PythonLatencyBench.kafkaJars(), LatencyRate,
          warmupSeconds = 2)
        val producer = KafkaProcess.producer(kafkaBroker.bootstrapServers)
        try {
          val runs = Seq(rocketmq, kafka).flatMap { system =>
            if (quick) Seq("foreach", "sink").map(path =>
              python.Run(system, path, 5, sizes.latencySeconds)) :+
              python.Run(system, "sink", 1, sizes.latencySeconds, continuous = true)
            else Seq(python.Run(system, "foreach", 30, 60), python.Run(system, "sink", 30, 90),
              python.Run(system, "sink", 5, 30),
              python.Run(system, "sink", 5, 30, Some(LatencyBench.FileSystemCheckpoints)),
              python.Run(system, "sink", 1, 30, continuous = true))
          }
          python.measure(runs,
            {
              case `rocketmq` => Map("nameServer" -> rocketmqBroker.nameServer)
              case _ => Map("bootstrapServers" -> kafkaBroker.bootstrapServers)
            }) {
            case `rocketmq` => SteadyProducer.toRocketMQ(plainRocketMQ.producer)
            case _ => SteadyProducer.toKafka(producer)
          }
        } finally producer.close()
      }
      if (sections.contains("realtime")) {
        RealTimeSection.run(results, rocketmq, kafka, rocketmqBroker, kafkaBroker, Queues, quick,
          realTimeBatch, realTimeSeconds, options.get("realtime-runs"))
      }
      if (sections.contains("planning")) {
        PlanningBench.run(spark, results, options.get("planning-queues"), sizes.planningRounds,
          quick, rocketmq, kafka, plainRocketMQ)
      }
      if (sections.contains("pushdown")) {
        val pushdown = new PushdownBench(spark, results, sizes.messages, BodyBytes, Queues,
          windows = 12, sizes.runs)
        pushdown.measure(rocketmq, "storeTimestamp")
        pushdown.measure(kafka, "timestamp")
      }
      if (sections.contains("write")) {
        Seq(rocketmq, kafka).foreach { system =>
          connectors.batchWrite(system)
          connectors.streamingWrite(system)
        }
        // What exactly-once costs: half messages, one request per row, committed by the driver;
        // beside it, the most RocketMQ's transactions give a plain client on this machine, in the
        // same run.
        connectors.exactlyOnceBatchWrite(rocketmq)
        connectors.streamingWrite(rocketmq, "streaming write (AvailableNow), exactly_once",
          Map("deliveryGuarantee" -> "exactly_once"))
        plain.rocketmqTransactionalWrite(rocketmq, plainRocketMQ)
      }
      if (sections.contains("proxy")) {
        new ProxyBench(spark, results, sizes.messages, BodyBytes, Queues, sizes.runs,
          planningRounds = math.max(sizes.planningRounds / 4, 1),
          PythonLatencyBench.venvPython(Paths.get(""))).measure(rocketmq, rocketmqTopic,
          plain)
      }
      if (sections.contains("readafterwrite")) {
        new ReadAfterWriteBench(spark, results, rocketmq, plainRocketMQ, sizes.messages, BodyBytes,
          Queues,
          rounds = if (quick) 1 else 10).measure()
      }
      if (sections.contains("tiered")) {
        new TieredBench(spark, results, sizes.messages, BodyBytes, Queues, sizes.runs).measure()
      }
      if (sections.contains("distant")) {
        val messages = options.get("distant-messages").map(_.toInt)
          .getOrElse(sizes.messages)
        new DistantBench(spark, results, kafkaClasspath, BrokerHeap,
          logs.resolve(s"kafka-distant-${System.currentTimeMillis()}.log"), messages, BodyBytes,
          Queues, options.get("distant-runs").map(_.toInt).getOrElse(sizes.runs), delayMs = 200,
          options.get("distant-systems").map(_.split(",").toSeq).getOrElse(Seq("rocketmq",
            "python", "kafka")),
          PythonLatencyBench.venvPython(Paths.get(""))).measure()
      }
      if (sections.contains("heap")) {
        new HeapBench(spark, results, rocketmq, HeapReaderMiB, sizes.heapBacklogBytes, BodyBytes,
          Queues).measure()
      }
      results.write(out)
    } finally {
      // The clients first, the brokers last: a client closed after its broker is gone may wait on
      // connects.
      closed = closeAll("the plain RocketMQ clients" -> (() => plainRocketMQ.close()),
        "the bench's Spark session" -> (() => spark.stop()),
        "the Kafka broker" -> (() => kafkaBroker.close()),
        "the RocketMQ broker" -> (() => rocketmqBroker.close()),
        "the scratch directory" -> (() => EmbeddedRocketMQ.deleteRecursively(scratch.toFile)))
    }
    closed
  }

  /** Runs every close whatever the others did, printing those that fail: whether all succeeded. */
  private def closeAll(closes: (String, () => Unit)*): Boolean = closes.map { case (what, close) =>
    try { close(); true }
    catch { case NonFatal(e) => System.err.println(s"BENCH: closing $what failed: $e"); false }
  }.forall(identity)

  /**
   * Ends the JVM with `status` once the results are out: a thread of a client library that outlived
   * its close (a RocketMQ client's Netty connect to a broker already stopped, seen here) would
   * otherwise keep it running. Should the shutdown hooks (the broker process's, Spark's) not end it
   * within a minute, it halts.
   */
  private def exit(status: Int): Nothing = {
    System.out.flush()
    System.err.flush()
    val watchdog = new Thread(() => {
      Thread.sleep(60000) // a deadline for the shutdown hooks, not a wait for a condition
      System.err.println(
        s"BENCH: the shutdown hooks did not end the JVM within 60 s: halting with status $status")
      Runtime.getRuntime.halt(status)
    })
    watchdog.setDaemon(true)
    watchdog.start()
    sys.exit(status)
  }

  private def parse(args: List[String]): Map[String, String] = args match {
    case Nil => Map.empty
    case "--quick" :: rest => parse(rest) + ("quick" -> "true")
    case flag :: value :: rest if flag.startsWith("--") =>
      parse(rest) + (flag.stripPrefix("--") -> value)
    case other => sys.error(s"unknown arguments: ${other.mkString(" ")}")
  }
}
