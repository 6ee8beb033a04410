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

import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper

/**
 * Real-time latency from PySpark (`bench/python_latency.py` in the `.venv` that `dev/build-python`
 * makes): the brokers and the producer are this JVM's, the query is a Python program's, as a
 * PySpark user would write it.
 *
 * Two paths, each for both systems: `foreach`, where a Python function notes each row (Spark hands
 * rows to Python workers in pickled batches that grow to about a megabyte, so at a low rate a row
 * waits for the rows after it), and `sink`, where the system's own sink (a JVM one) writes each row
 * to a target topic, started with this package's `write_rocketmq_stream(real_time=...)` for
 * RocketMQ and `trigger(realTime=...)` on Spark's Kafka sink. The producer sends `rate` small
 * messages a second for `warmupSeconds` (not counted) and then `seconds`, each acknowledged by the
 * broker ([[SteadyProducer]]); every sent message must arrive. The `sink` path also runs under
 * continuous processing (a task per queue, `write_rocketmq_stream(continuous=...)`, and
 * `trigger(continuous=...)` on Kafka's sink).
 */
final class PythonLatencyBench(results: BenchResults, python: Path, script: Path,
    kafkaJars: Seq[String],
    rate: Int, warmupSeconds: Int) {

  private val json = new ObjectMapper()
  private val body = Array.fill[Byte](100)('x')

  /**
   * One run of `path` for `system`, with real-time batches of `batchSeconds`, measured for
   * `seconds`; its query's checkpoint files written through `checkpoints`' manager, if given.
   */
  final case class Run(system: BenchSystem, path: String, batchSeconds: Int, seconds: Int,
      checkpoints: Option[LatencyBench.CheckpointFiles] = None, continuous: Boolean = false) {
    /** How the query runs, for the figure's name. */
    def mode: String =
      if (continuous) s"continuous, $batchSeconds second epochs, one queue"
      else s"real-time, $batchSeconds seconds batches"
  }

  /**
   * Runs each of `runs` in one Python process (one Spark session) and adds p50, p95 and p99 of
   * each.
   */
  def measure(runs: Seq[Run], connection: BenchSystem => Map[String, String])(
      send: BenchSystem => SteadyProducer.AckedSend): Unit = {
    val program = new PythonProgram(Seq(python.toString, script.toString, "--kafka-jars",
      kafkaJars.mkString(",")))
    try {
      println(s"BENCH python: pyspark ${program.await("STARTED")}")
      runs.foreach { run =>
        val (topic, target) =
          (s"bench-pylat-${System.nanoTime()}", s"bench-pylat-out-${System.nanoTime()}")
        // A continuous query holds a task slot per queue for as long as it runs, and the Python
        // program reads the target with a batch job while it does: its source has one queue,
        // leaving local[2] a slot for the read.
        run.system.createTopic(topic, if (run.continuous) 1 else LatencyBench.RealTimeQueues)
        if (run.path == "sink") run.system.createTopic(target, LatencyBench.RealTimeQueues)
        val ask =
          Map[String, Any]("system" -> run.system.name, "path" -> run.path, "topic" -> topic,
            "target" -> target, "batch" -> s"${run.batchSeconds} seconds",
            "continuous" -> run.continuous) ++
            connection(run.system) ++
            run.checkpoints.map(c => "checkpointFileManager" -> c.className)
        program.tell("RUN " + json.writeValueAsString(ask.asJava))
        program.await("READY")
        val sendOne = send(run.system)
        val sent = SteadyProducer.run(rate, warmupSeconds, run.seconds)((_, done) =>
          sendOne(topic, body, done))
        sent.requireAcknowledged(s"python ${run.system.name} ${run.path} ${run.mode}")
        program.tell("DONE " + json.writeValueAsString(
          Map("sent" -> sent.acknowledged, "measuredFrom" -> sent.measuredFrom).asJava))
        val latencies =
          json.readTree(program.await("RESULT")).get("latenciesMs").elements().asScala.map(
            _.asDouble).toSeq
        val arrival = if (run.path == "foreach") "a Python foreach function" else "the sink's topic"
        val how = run.checkpoints.map(c => s", ${c.label}").getOrElse("")
        Seq(50.0, 95.0, 99.0).foreach { p =>
          results.add(Figure("python",
            s"from Python: produce to $arrival p${p.toInt} " +
              s"(${run.mode}, $rate msg/s$how)", run.system.name, "ms",
            Seq(Measure.percentile(latencies, p))))
        }
      }
      program.finish()
    } finally program.close()
  }
}

object PythonLatencyBench {

  /**
   * The jars of Spark's Kafka connector on this JVM's classpath, for the Python program's
   * `spark.jars`.
   */
  def kafkaJars(): Seq[String] = System.getProperty("java.class.path").split(
    java.io.File.pathSeparator).toSeq
    .filter { jar =>
      val name = java.nio.file.Paths.get(jar).getFileName.toString
      Seq("spark-sql-kafka-0-10", "spark-token-provider-kafka-0-10", "kafka-clients",
        "commons-pool2")
        .exists(name.startsWith)
    }

  /**
   * The Python of `virtualenv` (by default `.venv`, which `dev/build-python` makes), with the wheel
   * installed (dev/bench installs it in each one it uses).
   */
  def venvPython(root: Path, virtualenv: String = ".venv"): Path = {
    val python = root.resolve(s"$virtualenv/bin/python")
    require(Files.isExecutable(python), s"no $python: run dev/bench, which makes it")
    python
  }
}
