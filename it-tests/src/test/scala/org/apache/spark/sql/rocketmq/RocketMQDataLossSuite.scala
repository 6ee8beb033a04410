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

import org.apache.spark.sql.execution.datasources.v2.MicroBatchScanExec
import org.apache.spark.sql.execution.streaming.runtime.StreamingQueryWrapper
import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}

/** Data loss made real: a broker with tiny files whose expired commitlog files are deleted. */
class RocketMQDataLossSuite extends RocketMQSparkSuiteBase {

  override protected def newRocketMQ(): EmbeddedRocketMQ = {
    val mq =
      new EmbeddedRocketMQ(commitLogFileSize = 256 * 1024, consumeQueueFileEntries = 50).start()
    Runtime.getRuntime.addShutdownHook(new Thread(() => mq.discard()))
    mq
  }

  /** A one-queue topic whose first offsets expired; returns (topic, new min offset, max offset). */
  private def topicWithExpiredOffsets(): (String, Long, Long) = {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 1)
    val padding = "x" * 1000
    rocketmq.sendBodies(topic, (0 until 1200).map(i => f"m$i%05d-$padding"))
    val min = rocketmq.expireOldFiles(topic)
    val max = rocketmq.latestOffsets(topic).values.head
    assert(min > 0 && min < max, s"min $min max $max")
    (topic, min, max)
  }

  private def streamFromZero(topic: String, failOnDataLoss: Boolean,
      trigger: Trigger = Trigger.AvailableNow(), mode: String = "availableNow"): StreamingQuery =
    spark.readStream.format("rocketmq")
      .option("nameServer", rocketmq.nameServer).option("topic", topic)
      .option("startingOffsets", s"""{"$topic":{"${rocketmq.brokerName}":{"0":0}}}""")
      .option("failOnDataLoss", failOnDataLoss.toString)
      .load()
      .selectExpr("queueOffset")
      .writeStream.format("memory").queryName(s"loss_${failOnDataLoss}_$mode")
      .option("checkpointLocation", Files.createTempDirectory("rocketmq-loss-").toString)
      .trigger(trigger).start()

  test(
    "failOnDataLoss=true: the query fails naming topic, broker, queue, the lost range and the " +
      "opt-out") {
    val (topic, min, _) = topicWithExpiredOffsets()
    val q = streamFromZero(topic, failOnDataLoss = true)
    intercept[Exception](q.awaitTermination(120000))
    val message = q.exception.map(_.getMessage).getOrElse(fail("the query should have failed"))
    Seq("ROCKETMQ_DATA_LOSS", s"topic '$topic'", s"broker '${rocketmq.brokerName}'", "queue 0",
      s"offsets [0, $min)", "expired", "failOnDataLoss=false").foreach { part =>
      assert(message.contains(part), s"'$part' missing from: $message")
    }
  }

  test(
    "failOnDataLoss=false: the query goes on from the first available offset and counts what it " +
      "skipped") {
    val (topic, min, max) = topicWithExpiredOffsets()
    val q = streamFromZero(topic, failOnDataLoss = false)
    assert(q.awaitTermination(120000))
    assert(q.exception.isEmpty, q.exception)
    // The broker may expire more files while the query reads: every offset below max is then either
    // read exactly once or counted as lost, and at least the offsets expired before the start are
    // lost.
    val offsets = spark.table("loss_false_availableNow").collect().map(
      _.getLong(0)).sorted.toSeq
    assert(offsets.distinct.size === offsets.size, "an offset was read twice")
    assert(offsets.head >= min && offsets.last === max - 1)
    val lost =
      q.asInstanceOf[StreamingQueryWrapper].streamingQuery.lastExecution.executedPlan.collect {
        case scan: MicroBatchScanExec => scan.metrics(RocketMQCustomMetrics.LostOffsets).value
      }.sum
    assert(lost + offsets.size === max, s"lost $lost + read ${offsets.size} should cover [0, $max)")
  }

  test(
    "continuous processing: failOnDataLoss=true fails naming the lost range; false reads on from " +
      "what is left") {
    val (topic, min, _) = topicWithExpiredOffsets()
    val failing =
      streamFromZero(topic, failOnDataLoss = true, Trigger.Continuous("1 second"), "continuous")
    // Continuous processing reports a task's failure as "Data read failed", the connector's error
    // as its cause.
    val message = errorMessage(failing.awaitTermination(120000))
    assert(message.contains("ROCKETMQ_DATA_LOSS.EXPIRED") && message.contains(s"topic '$topic'") &&
        "offsets \\[0, (\\d+)\\)".r.findFirstMatchIn(message).exists(_.group(1).toLong >= min),
      message)

    val (other, otherMin, otherMax) = topicWithExpiredOffsets()
    val lenient =
      streamFromZero(other, failOnDataLoss = false, Trigger.Continuous("1 second"), "continuous")
    val table = "loss_false_continuous"
    try {
      // The memory sink shows what recorded epochs hold.
      EmbeddedRocketMQ.awaitCondition(s"offset ${otherMax - 1} read", 120000) {
        assert(lenient.exception.isEmpty, lenient.exception)
        spark.table(table).collect().exists(_.getLong(0) == otherMax - 1)
      }
    } finally lenient.stop()
    val offsets = spark.table(table).collect().map(_.getLong(0)).sorted.toSeq
    assert(offsets.head >= otherMin && offsets.distinct === offsets, offsets.take(5))
  }

  test(
    "a send larger than the broker's maxMessageSize fails at once naming sendBatchBytes, alone " +
      "or in a batch, and is not resent for retryTimeoutMs") {
    // This suite's broker keeps messages of at most 128 KiB (half its 256 KiB commit-log files).
    def write(rows: Int, body: String, options: (String, String)*): (String, String) = {
      val topic = rocketmq.newTopic("too-large")
      rocketmq.createTopic(topic, queues = 1)
      topic -> errorMessage(spark.range(0, rows, 1, 1).selectExpr(s"$body AS body")
        .write.format("rocketmq").option("nameServer", rocketmq.nameServer).option("topic", topic)
        .options(options.toMap).save())
    }
    // Alone: 400,000 characters of distinct hashes, over the compression threshold, so sent alone
    // and compressed, to about 200 KB. In a batch: messages of 40,000 bytes under a raised
    // compression threshold, batched up to sendBatchBytes (256 KiB; batches sent before it fills,
    // under the broker's limit, are stored).
    val hashes =
      "concat_ws('', transform(sequence(1, 6250), i -> sha2(CAST(i + id AS STRING), 256)))"
    Seq(write(1, hashes) -> 1,
      write(20, "repeat('x', 40000)",
        "compressionThreshold" -> "1048576") -> 20).foreach { case ((topic, message), rows) =>
      Seq("ROCKETMQ_SEND_FAILED.TOO_LARGE", "sendBatchBytes", "maxMessageSize").foreach { part =>
        assert(message.contains(part), s"'$part' missing from: $message")
      }
      assert(rocketmq.latestOffsets(topic).values.sum < rows)
    }
  }

  test("a batch query always fails on lost data, failOnDataLoss=false or not (the spec's rule)") {
    val (topic, min, _) = topicWithExpiredOffsets()
    val fromZero = "startingOffsets" -> s"""{"$topic":{"${rocketmq.brokerName}":{"0":0}}}"""
    for (lenient <- Seq(Nil, Seq("failOnDataLoss" -> "false"))) {
      val message = errorMessage(readTopic(topic, fromZero +: lenient: _*).collect())
      // (the lost range ends at the oldest offset still stored, which only grows)
      val lostUntil = "offsets \\[0, (\\d+)\\)".r.findFirstMatchIn(message).map(_.group(1).toLong)
      assert(message.contains("ROCKETMQ_DATA_LOSS.EXPIRED") && lostUntil.exists(_ >= min), message)
      assert(message.contains("Batch queries always fail on lost data"), message)
    }
  }

}
