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

import java.lang.management.ManagementFactory
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Path, Paths}
import java.time.Instant

import scala.collection.mutable.ArrayBuffer
import scala.jdk.CollectionConverters._
import scala.util.Try

import com.fasterxml.jackson.databind.ObjectMapper
import com.fasterxml.jackson.databind.SerializationFeature

/**
 * One measured figure: `section` groups it (read, write, latency, planning, heap), `system` says
 * whose path it measures, `runs` holds every run's value in `unit`; the figure reported is their
 * median.
 */
final case class Figure(section: String, name: String, system: String, unit: String,
    runs: Seq[Double]) {
  require(runs.nonEmpty, s"$name has no runs")
  private val sorted = runs.sorted
  def median: Double =
    if (sorted.size % 2 == 1) sorted(sorted.size / 2)
    else (sorted(sorted.size / 2 - 1) + sorted(sorted.size / 2)) / 2
  def min: Double = sorted.head
  def max: Double = sorted.last
}

/** The figures of one bench run, printed as they come and written at the end as one JSON file. */
final class BenchResults(settings: Map[String, Any]) {
  private val figures = ArrayBuffer.empty[Figure]

  def add(figure: Figure): Figure = synchronized {
    figures += figure
    val spread =
      if (figure.runs.size > 1) f"  (runs ${figure.runs.map(format).mkString(", ")})" else ""
    println(
      f"BENCH ${figure.section}%-9s ${figure.system}%-9s ${figure.name}%-52s " +
        f"${format(figure.median)}%10s ${figure.unit}$spread")
    figure
  }

  /**
   * The CPU the runs just measured for `label` used ([[Measure.lastCores]]): `system`'s broker, and
   * the bench's own JVM, where Spark's tasks (or the plain clients) run. Together they show how
   * near the run came to the machine.
   */
  def addCpu(label: String, system: String): Unit =
    Seq(s"$system broker" -> "the broker", Bench.OwnJvm -> "the Spark / client JVM").foreach {
      case (process, shown) =>
        Measure.lastCores.get(process).foreach { cores =>
          add(Figure("cpu", s"$label: CPU cores used by $shown", system, "cores", cores))
        }
    }

  def all: Seq[Figure] = synchronized(figures.toList)

  /**
   * Writes the machine, the versions, the settings and every figure (median, min, max, runs) to
   * `path`.
   */
  def write(path: Path): Unit = {
    val doc = Map(
      "finished" -> Instant.now().toString,
      "machine" -> BenchResults.machine,
      "versions" -> BenchResults.versions,
      "settings" -> settings.asJava,
      "figures" -> all.map { f =>
        Map("section" -> f.section, "name" -> f.name, "system" -> f.system, "unit" -> f.unit,
          "median" -> f.median, "min" -> f.min, "max" -> f.max, "runs" -> f.runs.asJava).asJava
      }.asJava
    ).asJava
    Option(path.getParent).foreach(Files.createDirectories(_))
    new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(path.toFile, doc)
    println(s"BENCH results written to $path")
  }

  private def format(v: Double): String = if (v >= 100) f"$v%.0f" else f"$v%.1f"
}

object BenchResults {

  /** What the figures were measured on: CPU model, cores, memory, OS, JVM. */
  def machine: java.util.Map[String, Any] = {
    val cpu = Try(Files.readAllLines(Paths.get("/proc/cpuinfo"), UTF_8).asScala
      .find(_.startsWith("model name")).map(_.split(":", 2)(1).trim).getOrElse(
        "unknown")).getOrElse("unknown")
    val memory = ManagementFactory.getOperatingSystemMXBean match {
      case os: com.sun.management.OperatingSystemMXBean => os.getTotalMemorySize
      case _ => -1L
    }
    Map[String, Any](
      "cpu" -> cpu,
      "cores" -> Runtime.getRuntime.availableProcessors(),
      "memoryBytes" -> memory,
      "os" -> s"${System.getProperty("os.name")} ${System.getProperty("os.version")}",
      "java" ->
        s"${System.getProperty("java.vm.name")} ${System.getProperty("java.runtime.version")}"
    ).asJava
  }

  /** Spark, RocketMQ client and Kafka client versions, read from the classes on the classpath. */
  def versions: java.util.Map[String, Any] = Map[String, Any](
    "spark" -> org.apache.spark.SPARK_VERSION,
    "rocketmq" -> org.apache.rocketmq.common.MQVersion.getVersionDesc(
      org.apache.rocketmq.common.MQVersion.CURRENT_VERSION),
    "kafkaClients" -> org.apache.kafka.common.utils.AppInfoParser.getVersion,
    "scala" -> scala.util.Properties.versionNumberString
  ).asJava
}
