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

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.rocketmq.RocketMQPlainClients

/**
 * Driver-side planning of a read, per topic size: from `load()` to the input partitions built (for
 * both connectors this fetches every queue's offsets). Topics are empty: no data moves, only
 * planning is timed.
 *
 * The sizes are planned in turns, round after round, after untimed warm-up rounds. Planning the
 * same read 200 times in a row showed the driver's JIT still speeding it up after 150 plans (an
 * 8-queue plan from 77 ms to 15 ms), so a figure measured size after size compared a warm JVM on
 * the first sizes with code the last size alone runs (its per-queue decoding) still cold: the
 * 1024-queue figure came out at twice what it is once warm. In turns, every size sees the same JVM.
 */
final class PlanningBench(
    spark: SparkSession,
    results: BenchResults,
    queueCounts: Seq[Int],
    rounds: Int,
    warmupRounds: Int) {

  def measure(system: BenchSystem): Unit = {
    val topics = queueCounts.map { queues =>
      val topic = s"bench-plan-$queues-${System.nanoTime()}"
      system.createTopic(topic, queues)
      topic
    }
    def planMs(topic: String): Double = {
      val start = System.nanoTime()
      spark.read.format(system.format).options(system.sourceOptions(topic)).load()
        .queryExecution.toRdd.getNumPartitions
      (System.nanoTime() - start) / 1e6
    }
    (1 to warmupRounds).foreach(_ => topics.foreach(planMs))
    val timed = (1 to rounds).map(_ => topics.map(planMs))
    val medians = queueCounts.indices.map { i =>
      results.add(Figure("planning", s"plan a read of ${queueCounts(i)} queues", system.name, "ms",
        timed.map(_(i)))).median
    }
    results.add(Figure("planning", s"planning ${queueCounts.max} ÷ ${queueCounts.min} queues",
      system.name, "×",
      Seq(medians.last / medians.head)))
  }
}

object PlanningBench {
  /** The sizes the section plans unless `--planning-queues` names others. */
  val DefaultQueues: Seq[Int] = Seq(8, 64, 256, 1024)

  /** `topics` topics of `queues` queues each, planned as one read. */
  final case class Size(topics: Int, queues: Int) {
    def total: Int = topics * queues
    def label: String =
      if (topics == 1) s"$total queues" else s"$total queues ($topics topics of $queues)"
  }

  /** `--planning-queues 1024,4096,16x1024`: a queue count is one topic; `TxQ`, T topics of Q. */
  def parseSizes(spec: String): Seq[Size] = spec.split(",").toSeq.map(_.trim).map { size =>
    size.split("x") match {
      case Array(q) if q.toIntOption.exists(_ > 0) => Size(1, q.toInt)
      case Array(t, q) if Seq(t, q).forall(_.toIntOption.exists(_ > 0)) => Size(t.toInt, q.toInt)
      case _ => throw new IllegalArgumentException(
          s"--planning-queues: '$size' is not a queue count (1024) or topics x queues (16x1024)")
    }
  }

  /**
   * The planning section: the default sizes on both systems, empty topics; or the sizes `spec`
   * names, RocketMQ alone (a single-node Kafka made to hold 16,384 partitions measures Kafka, not
   * planning), with a message in every queue so that every queue becomes a Spark partition.
   */
  def run(spark: SparkSession, results: BenchResults, spec: Option[String], rounds: Int,
      quick: Boolean, rocketmq: RocketMQSystem, kafka: BenchSystem,
      plain: RocketMQPlainClients): Unit = {
    val warmupRounds = if (quick) 0 else 20
    spec match {
      case None =>
        val planning = new PlanningBench(spark, results, DefaultQueues, rounds, warmupRounds)
        planning.measure(rocketmq)
        planning.measure(kafka)
      case Some(sizes) =>
        new PlanningAtScale(spark, results, parseSizes(sizes), rounds, warmupRounds)
          .measure(rocketmq, plain)
    }
  }
}
