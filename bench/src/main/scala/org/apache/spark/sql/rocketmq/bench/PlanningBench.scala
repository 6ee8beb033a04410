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

/**
 * Driver-side planning of a read, per topic size: from `load()` to the input partitions built (for both
 * connectors this fetches every queue's offsets). Topics are empty: no data moves, only planning is timed.
 */
final class PlanningBench(spark: SparkSession, results: BenchResults, queueCounts: Seq[Int], runs: Int) {

  def measure(system: BenchSystem): Unit = {
    val medians = queueCounts.map { queues =>
      val topic = s"bench-plan-$queues-${System.nanoTime()}"
      system.createTopic(topic, queues)
      def plan(): Int = spark.read.format(system.format).options(system.sourceOptions(topic)).load()
        .queryExecution.toRdd.getNumPartitions
      val figure = results.add(Figure("planning", s"plan a read of $queues queues", system.name, "ms",
        Measure.seconds(runs)(_ => () => plan()).map(_ * 1000)))
      queues -> figure.median
    }
    results.add(Figure("planning", s"planning ${queueCounts.max} ÷ ${queueCounts.min} queues", system.name, "×",
      Seq(medians.last._2 / medians.head._2)))
  }
}
