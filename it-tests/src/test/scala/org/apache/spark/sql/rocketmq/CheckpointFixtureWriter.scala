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

package org.apache.spark.sql.rocketmq

import java.nio.file.{Files, Path, Paths, StandardCopyOption}

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.streaming.Trigger

/**
 * Writes the checkpoint fixture `it-tests/src/test/resources/checkpoint-v1/`: a streaming query of
 * topic `checkpoint-fixture` (one queue, broker `broker-a`) that has read offsets 0 to 4. Run it
 * when the offset format changes (and bump the version):
 * `build/sbt "itTests/Test/runMain org.apache.spark.sql.rocketmq.CheckpointFixtureWriter"`.
 */
object CheckpointFixtureWriter {
  val Topic = "checkpoint-fixture"
  val FixtureResource = "/checkpoint-v1"

  /** The query the fixture comes from, and the one its test restarts. */
  def query(spark: SparkSession, nameServer: String): DataFrame =
    spark.readStream.format("rocketmq").option("nameServer", nameServer).option("topic", Topic)
      .option("startingOffsets", "earliest").load()
      .selectExpr("CAST(body AS STRING) AS body", "queueOffset")

  def main(args: Array[String]): Unit = {
    val mq = EmbeddedRocketMQ.shared
    val spark =
      SparkSession.builder().master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
    mq.createTopic(Topic, queues = 1)
    mq.sendBodies(Topic, (0 until 5).map(i => s"m$i"))
    val checkpoint = Files.createTempDirectory("fixture-")
    val q = query(spark, mq.nameServer).writeStream.format("json")
      .option("path", Files.createTempDirectory("fixture-out-").toString)
      .option("checkpointLocation", checkpoint.toString).trigger(Trigger.AvailableNow()).start()
    q.awaitTermination()
    val target = Paths.get("src/test/resources/checkpoint-v1")
    copyTree(checkpoint, target)
    println(s"fixture written to ${target.toAbsolutePath}")
    spark.stop()
    System.exit(0)
  }

  /** Copies a checkpoint, leaving out Hadoop's .crc side files. */
  def copyTree(from: Path, to: Path): Unit = {
    Files.walk(from).iterator().asScala.filterNot(_.getFileName.toString.endsWith(".crc")).foreach {
      p =>
        val dest = to.resolve(from.relativize(p).toString)
        if (Files.isDirectory(p)) Files.createDirectories(dest)
        else Files.copy(p, dest, StandardCopyOption.REPLACE_EXISTING)
    }
  }
}
