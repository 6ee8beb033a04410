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
import java.nio.file.Paths

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper

import org.apache.spark.sql.SparkSession

/**
 * Executor heap while reading a backlog many times larger than the heap: the backlog is written
 * through the connector, then read by a Spark application of its own (a [[HeapReader]] JVM with
 * `heapMiB` of heap, `local[2]`, driver and executor in one), which reports its live heap (what the
 * collector left) as it goes. Flat means the late part of the read keeps no more than the early
 * part.
 */
final class HeapBench(spark: SparkSession, results: BenchResults, system: RocketMQSystem,
    heapMiB: Int,
    backlogBytes: Long, bodyBytes: Int, queues: Int) {

  def measure(): Unit = {
    val messages = backlogBytes / bodyBytes
    val topic = s"bench-heap-${System.nanoTime()}"
    system.createTopic(topic, queues)
    val writeStart = System.nanoTime()
    spark.range(0, messages, 1, queues).selectExpr(s"repeat('x', $bodyBytes) AS body").write
      .format(system.format).options(system.sinkOptions(topic)).save()
    system.broker.awaitIndexed()
    println(f"BENCH heap: backlog of $messages messages written in ${(System.nanoTime() -
        writeStart) / 1e9}%.0f s")

    val report = runReader(system.broker.nameServer, topic, messages)
    val samples = report.get("liveAfterGc").elements().asScala.map(s =>
      (s.get(0).asDouble(), s.get(1).asDouble()))
      .toSeq
    val seconds = report.get("seconds").asDouble()
    def peakMiB(from: Double, until: Double): Double = {
      val inWindow =
        samples.collect { case (t, bytes) if t >= from * seconds && t <= until * seconds => bytes }
      if (inWindow.isEmpty) Double.NaN else inWindow.max / 1048576
    }
    val ratio = backlogBytes.toDouble / (heapMiB * 1048576L)
    val label = f"backlog ${ratio}%.1f× the heap (-Xmx${heapMiB}m)"
    results.add(Figure("heap", s"live heap after GC, peak over the read; $label", system.name,
      "MiB",
      Seq(peakMiB(0, 1))))
    results.add(Figure("heap", "live heap after GC, peak in the first fifth of the read",
      system.name, "MiB",
      Seq(peakMiB(0, 0.2))))
    results.add(Figure("heap", "live heap after GC, peak in the last fifth of the read",
      system.name, "MiB",
      Seq(peakMiB(0.8, 1))))
    results.add(Figure("heap", s"read rate of the backlog; $label", system.name, "msg/s",
      Seq(messages / seconds)))
  }

  /** Runs the reader JVM; returns its report (it fails unless it read exactly `messages`). */
  private def runReader(nameServer: String, topic: String, messages: Long) = {
    val java = Paths.get(System.getProperty("java.home"), "bin", "java").toString
    val moduleFlags =
      ManagementFactory.getRuntimeMXBean.getInputArguments.asScala.filter(_.startsWith("--add-"))
    val cmd = Seq(java, s"-Xmx${heapMiB}m") ++ moduleFlags ++
      Seq("-cp", System.getProperty("java.class.path"),
        HeapReader.getClass.getName.stripSuffix("$"), nameServer, topic, messages.toString)
    val process = new ProcessBuilder(cmd: _*).redirectError(ProcessBuilder.Redirect.INHERIT).start()
    val lines =
      scala.io.Source.fromInputStream(process.getInputStream, UTF_8.name()).getLines().toList
    val exit = process.waitFor()
    val report = lines.find(_.startsWith(HeapReader.ReportPrefix))
    require(exit == 0 && report.isDefined,
      s"the heap reader failed (exit $exit): ${lines.takeRight(20).mkString("\n")}")
    new ObjectMapper().readTree(report.get.stripPrefix(HeapReader.ReportPrefix))
  }
}
