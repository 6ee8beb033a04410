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

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.functions.{col, lit, rpad, udf}
import org.apache.spark.sql.streaming.Trigger

/**
 * maxMessagesPerSecond and maxBytesPerSecond hold a whole read or write to its rate, shared by its
 * tasks (local[2]: two at once), measured where the messages move: when each row is read, when the
 * broker stored each message.
 */
class RocketMQRateCapSuite extends RocketMQSparkSuiteBase {
  private val Messages = 16000
  private val Cap = 4000L // messages a second: a quarter of what this machine reads and writes

  /** When each row passed, in milliseconds: a per-row clock, evaluated as the task reads it. */
  private val now = udf(() => System.currentTimeMillis()).asNondeterministic()

  /**
   * Rows a second from `times` (one per row), held through the run: between its 10th and 90th
   * percentile rows (the first and last tasks start and end a moment apart).
   */
  private def rate(times: Seq[Long]): Double = {
    val sorted = times.sorted.toIndexedSeq
    val (from, until) = (sorted.size / 10, sorted.size * 9 / 10)
    (until - from) * 1000.0 / (sorted(until) - sorted(from))
  }

  private def assertHeld(measured: Double, cap: Double, what: String): Unit = {
    info(f"$what: $measured%.0f a second against a cap of $cap%.0f")
    assert(measured >= cap * 0.9 && measured <= cap * 1.1,
      f"$what ran at $measured%.0f a second, not within 10%% of the cap $cap%.0f")
  }

  /** A topic of 4 queues holding `Messages` messages, each body 100 bytes. */
  private def filledTopic(): String = {
    val topic = rocketmq.newTopic("rate")
    rocketmq.createTopic(topic, queues = 4)
    rocketmq.sendSpread(topic, (0 until Messages).map(i => TestMessage(f"$i%0100d")))
    topic
  }

  private def times(df: DataFrame): Seq[Long] =
    df.select(now().as("at")).collect().map(_.getLong(0)).toSeq

  test("a batch read holds maxMessagesPerSecond: 4 queues, 2 at once, each at half the cap") {
    val topic = filledTopic()
    val read = readTopic(topic, "maxMessagesPerSecond" -> Cap.toString)
    assertHeld(rate(times(read)), Cap, "the batch read")
    // Without the cap the same read is far faster (the cap is what held it).
    val uncapped = rate(times(readTopic(topic)))
    info(f"the same read without a cap: $uncapped%.0f a second")
    assert(uncapped > Cap * 2)
  }

  test("a stream holds maxBytesPerSecond (bodies of 100 bytes)") {
    val topic = filledTopic()
    val table = "rate_stream"
    val q = streamTopic(topic, "startingOffsets" -> "earliest",
      "maxBytesPerSecond" -> (Cap * 100).toString)
      .select(now().as("at")).writeStream.format("memory").queryName(table)
      .option("checkpointLocation", Files.createTempDirectory("rocketmq-rate-").toString)
      .trigger(Trigger.AvailableNow()).start()
    try q.awaitTermination()
    finally q.stop()
    val seen = spark.table(table).collect().map(_.getLong(0)).toSeq
    assert(seen.size === Messages)
    assertHeld(rate(seen), Cap, "the stream")
  }

  test("a batch write holds maxMessagesPerSecond, as the broker's store times show") {
    val topic = rocketmq.newTopic("rate-out")
    rocketmq.createTopic(topic, queues = 4)
    spark.range(Messages).select(rpad(col("id").cast("string"), 100, "x").as("body"),
      lit("rate").as("tags"))
      .write.format("rocketmq").option("nameServer", rocketmq.nameServer).option("topic", topic)
      .option("maxMessagesPerSecond", Cap.toString).save()
    val stored = rocketmq.readAll(topic).map(_.getStoreTimestamp)
    assert(stored.size === Messages)
    assertHeld(rate(stored), Cap, "the batch write")
  }
}
