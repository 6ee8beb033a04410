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

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.functions.col
import org.apache.spark.sql.rocketmq.transaction.RocketMQTransactionCoordinator
import org.apache.spark.sql.streaming.Trigger

/**
 * Throughput of the Spark connectors, the same queries for each system: batch and streaming
 * (`Trigger.AvailableNow`) writes of `messages` rows of `bodyBytes` into a fresh topic of `queues`
 * queues, and batch and streaming reads of such a topic into Spark's `noop` sink. Streaming writes
 * read their rows from Parquet files, the same for both systems.
 */
final class ConnectorThroughput(
    spark: SparkSession,
    results: BenchResults,
    scratch: Path,
    messages: Int,
    bodyBytes: Int,
    queues: Int,
    runs: Int) {

  private lazy val rows: DataFrame = {
    val df = spark.range(0, messages.toLong, 1, queues).selectExpr(
      s"repeat('x', $bodyBytes) AS body").cache()
    require(df.count() == messages)
    df
  }

  private lazy val parquetRows: Path = {
    val dir = scratch.resolve("rows-parquet")
    rows.write.parquet(dir.toString)
    dir
  }

  def batchWrite(system: BenchSystem, label: String = "batch write",
      options: Map[String, String] = Map.empty,
      afterRun: () => Unit = () => ()): Unit = {
    results.add(Figure("write", label, system.name, "msg/s",
      Measure.rates(messages, runs) { _ =>
        val topic = freshTopic(system, "bw")
        () => {
          rows.select(col("body").as(system.bodyColumn)).write.format(system.format)
            .options(system.sinkOptions(topic)).options(options).save()
          afterRun()
        }
      }))
    if (options.isEmpty) results.addCpu(label, system.name)
  }

  /**
   * A batch write with deliveryGuarantee=exactly_once, and, as a figure of its own, how long the
   * driver took to commit the write's one epoch in each run (all its half messages).
   */
  def exactlyOnceBatchWrite(system: RocketMQSystem): Unit = {
    val commitSeconds = scala.collection.mutable.ArrayBuffer[Double]()
    batchWrite(system, "batch write, exactly_once", Map("deliveryGuarantee" -> "exactly_once"),
      afterRun = () => {
        val epoch = RocketMQTransactionCoordinator.lastInThisDriver
        require(epoch.messages == messages && epoch.leftToBroker == 0,
          s"the epoch committed was $epoch")
        commitSeconds += epoch.commitMs / 1000.0
      })
    results.add(Figure("write", f"exactly_once: the driver's commit of $messages%,d half messages",
      system.name, "s",
      commitSeconds.takeRight(runs).toSeq))
  }

  def streamingWrite(system: BenchSystem, label: String = "streaming write (AvailableNow)",
      options: Map[String, String] = Map.empty): Unit = {
    val files = parquetRows
    results.add(Figure("write", label, system.name, "msg/s",
      Measure.rates(messages, runs) { _ =>
        val topic = freshTopic(system, "sw")
        val checkpoint = Files.createTempDirectory(scratch, "checkpoint-")
        () =>
          spark.readStream.schema(rows.schema).parquet(files.toString)
            .select(col("body").as(system.bodyColumn))
            .writeStream.format(system.format).options(system.sinkOptions(topic)).options(options)
            .option("checkpointLocation", checkpoint.toString).trigger(
              Trigger.AvailableNow()).start()
            .awaitTermination()
      }))
    if (options.isEmpty) results.addCpu(label, system.name)
  }

  /**
   * A topic holding the bench's `messages` rows, checked by counting them through the connector.
   */
  def filledTopic(system: BenchSystem): String = {
    val topic = freshTopic(system, "r")
    rows.select(col("body").as(system.bodyColumn)).write.format(system.format)
      .options(system.sinkOptions(topic)).save()
    system.awaitReadable()
    val counted =
      spark.read.format(system.format).options(system.sourceOptions(topic)).load().count()
    require(counted == messages,
      s"${system.name} topic $topic holds $counted messages, not $messages")
    topic
  }

  /**
   * Untimed batch reads of `topic` until the read rate stops rising (at most `most`): both JVMs
   * compile the read path as they go, over minutes, so without this the first read figures of a
   * bench came out lower than the same reads measured later (a third in one run), whatever they
   * measured.
   */
  def warmUpReads(system: BenchSystem, topic: String, most: Int): Unit = {
    var best = 0.0
    var rounds = 0
    var rising = true
    while (rising && rounds < most) {
      val start = System.nanoTime()
      readIntoNoop(system, topic)
      val rate = messages / ((System.nanoTime() - start) / 1e9)
      rounds += 1
      rising = rate > best * 1.05
      best = math.max(best, rate)
    }
    println(
      f"BENCH warm-up: ${system.name} read $rounds times untimed, best ${best / 1000}%.1fk msg/s")
  }

  /** A batch read into `noop`; with no `options` (the plain read), also the CPU it used. */
  def batchRead(system: BenchSystem, topic: String, label: String = "batch read",
      options: Map[String, String] = Map.empty): Unit = {
    results.add(Figure("read", label, system.name, "msg/s",
      Measure.rates(messages, runs) { _ => () => readIntoNoop(system, topic, options) }))
    if (options.isEmpty) results.addCpu(label, system.name)
  }

  /** One batch read of the whole `topic` into Spark's `noop` sink. */
  private def readIntoNoop(system: BenchSystem, topic: String,
      options: Map[String, String] = Map.empty): Unit =
    spark.read.format(system.format).options(system.sourceOptions(topic)).options(options).load()
      .write.format("noop").mode("overwrite").save()

  def streamingRead(system: BenchSystem, topic: String): Unit = {
    val label = "streaming read (AvailableNow)"
    results.add(Figure("read", label, system.name, "msg/s",
      Measure.rates(messages, runs) { _ =>
        val checkpoint = Files.createTempDirectory(scratch, "checkpoint-")
        () =>
          spark.readStream.format(system.format).options(system.sourceOptions(topic))
            .option("startingOffsets", "earliest").load()
            .writeStream.format("noop").option("checkpointLocation", checkpoint.toString)
            .trigger(Trigger.AvailableNow()).start().awaitTermination()
      }))
    results.addCpu(label, system.name)
  }

  private def freshTopic(system: BenchSystem, prefix: String): String = {
    val topic = s"bench-$prefix-${System.nanoTime()}"
    system.createTopic(topic, queues)
    topic
  }
}
