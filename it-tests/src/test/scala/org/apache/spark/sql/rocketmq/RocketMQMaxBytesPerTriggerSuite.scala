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

import java.nio.file.Files

import org.apache.spark.sql.streaming.Trigger

/** `maxBytesPerTrigger`: a micro-batch reads at most about that many bytes of message bodies. */
class RocketMQMaxBytesPerTriggerSuite extends RocketMQSparkSuiteBase {

  /** A body of exactly `size` bytes that names message `i`. */
  private def body(i: Int, size: Int): String = {
    val name = s"m-$i-"
    name + "x" * (size - name.length)
  }

  /**
   * Copies `topic` whole with AvailableNow and the given options into a memory sink; what it read,
   * and each batch's row count in order.
   */
  private def readInBatches(topic: String, options: (String, String)*): (Seq[String], Seq[Long]) = {
    val table = s"bytes_${topic.replace('-', '_')}_${options.size}"
    val q = streamTopic(topic, Seq("startingOffsets" -> "earliest") ++ options: _*)
      .selectExpr("CAST(body AS STRING) AS body")
      .writeStream.format("memory").queryName(table)
      .option("checkpointLocation", Files.createTempDirectory("rocketmq-bytes-").toString)
      .trigger(Trigger.AvailableNow()).start()
    try {
      q.awaitTermination()
      q.exception.foreach(e => throw e)
      val batches = q.recentProgress.map(_.numInputRows).filter(_ > 0).toSeq
      (spark.table(table).collect().map(_.getString(0)).toSeq, batches)
    } finally q.stop()
  }

  test(
    "each micro-batch reads at most maxBytesPerTrigger bytes of bodies, and as many as fit; " +
      "every message once; with maxOffsetsPerTrigger the tighter of the two holds") {
    val topic = rocketmq.newTopic("bytes")
    rocketmq.createTopic(topic, queues = 4)
    val sent = (0 until 600).map(body(_, 1000))
    rocketmq.sendSpread(topic, sent.map(TestMessage(_)))

    val (read, batches) = readInBatches(topic, "maxBytesPerTrigger" -> "100000")
    assert(read.sorted === sent.sorted)
    // Bodies of 1,000 bytes: 100 a batch, the first batch's estimate from its sample included.
    assert(batches === Seq.fill(6)(100L), batches)

    val (again, tighter) =
      readInBatches(topic, "maxBytesPerTrigger" -> "100000", "maxOffsetsPerTrigger" -> "300")
    assert(again.sorted === sent.sorted)
    assert(tighter === Seq.fill(6)(100L), tighter)
    val (third, byOffsets) =
      readInBatches(topic, "maxBytesPerTrigger" -> "1000000", "maxOffsetsPerTrigger" -> "200")
    assert(third.sorted === sent.sorted)
    assert(byOffsets === Seq.fill(3)(200L), byOffsets)
  }

  test(
    "a message larger than maxBytesPerTrigger goes in a batch alone; when the bodies grow, one " +
      "batch planned from the smaller ones goes over, and the next ones hold to the limit again") {
    val big = rocketmq.newTopic("bytes-big")
    rocketmq.createTopic(big, queues = 1)
    val large = (0 until 3).map(body(_, 5000))
    rocketmq.sendBodies(big, large)
    val (read, batches) = readInBatches(big, "maxBytesPerTrigger" -> "1000")
    assert(read === large)
    assert(batches === Seq(1L, 1L, 1L))

    // One queue: 300 bodies of 100 bytes, then 300 of 1,000. The batch planned from the small
    // ones' size takes 100 large ones; from then on the estimate is theirs.
    val growing = rocketmq.newTopic("bytes-growing")
    rocketmq.createTopic(growing, queues = 1)
    val sizes = Seq.fill(300)(100) ++ Seq.fill(300)(1000)
    val bodies = sizes.zipWithIndex.map { case (size, i) => body(i, size) }
    rocketmq.sendBodies(growing, bodies)
    val (all, counts) = readInBatches(growing, "maxBytesPerTrigger" -> "10000")
    assert(all === bodies)
    val ends = counts.scanLeft(0L)(_ + _)
    val bytes = ends.zip(ends.tail).map { case (from, until) =>
      sizes.slice(from.toInt, until.toInt).sum
    }
    assert(bytes === Seq.fill(3)(10000) ++ Seq(100000) ++ Seq.fill(20)(10000), bytes)
  }
}
