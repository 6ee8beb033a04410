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

import java.nio.file.Files

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.rocketmq.{EmbeddedRocketMQ, TieredStorage}
import org.apache.spark.sql.rocketmq.bench.TieredBench.OnePull

/**
 * A batch read of a topic whose messages RocketMQ 5's tiered storage offloaded (its file-system
 * backend, on this machine's disk) and whose local files were then deleted, beside the same read
 * while the messages were local: one broker of its own (in this JVM, default settings but the
 * plug-in), the same topic, in the same run. The tier is read one pull at a time per queue
 * (docs/reading.md#tiered-storage), the local files both so and on the defaults. Each read's first
 * run is reported on its own, beside the median of the runs after it.
 */
/** One pull at a time per queue: concurrent reads of the file-system tier read wrong bytes. */
private object TieredBench {
  val OnePull: Map[String, String] = Map("pullsInFlight" -> "1")
}

final class TieredBench(spark: SparkSession, results: BenchResults, messages: Int, bodyBytes: Int,
    queues: Int, runs: Int) {

  def measure(): Unit = {
    val dir = Files.createTempDirectory("rocketmq-bench-tier-")
    val broker = new EmbeddedRocketMQ(brokerProperties = TieredStorage.plugIn(dir)).start()
    try {
      val topic = broker.newTopic("bench-tiered")
      broker.createTopic(topic, queues)
      spark.range(0, messages.toLong, 1, queues).selectExpr(s"repeat('x', $bodyBytes) AS body")
        .write.format("rocketmq").option("nameServer", broker.nameServer).option("topic", topic)
        .save()
      require(broker.latestOffsets(topic).values.sum == messages)
      readRuns(broker, topic, "batch read, local files")
      readRuns(broker, topic, "batch read, local files, pullsInFlight=1", OnePull)
      TieredStorage.offloadAndDeleteLocally(broker, topic, queues)
      readRuns(broker, topic, "batch read, from the tier, pullsInFlight=1", OnePull)
    } finally {
      broker.stop()
      org.apache.commons.io.FileUtils.deleteQuietly(dir.toFile)
    }
  }

  private def readRuns(broker: EmbeddedRocketMQ, topic: String, name: String,
      options: Map[String, String] = Map.empty): Unit = {
    def read() = spark.read.format("rocketmq").option("nameServer", broker.nameServer)
      .option("topic", topic).options(options).load()
    val values = (0 to runs).map { _ =>
      val start = System.nanoTime()
      read().write.format("noop").mode("overwrite").save()
      messages / ((System.nanoTime() - start) / 1e9)
    }
    val bytes = read().selectExpr("sum(length(body))").head().getLong(0)
    require(bytes == messages.toLong * bodyBytes, s"$name read $bytes bytes of bodies")
    results.add(Figure("tiered", s"$name, first run", "rocketmq", "msg/s", values.take(1)))
    results.add(Figure("tiered", name, "rocketmq", "msg/s", values.drop(1)))
  }
}
