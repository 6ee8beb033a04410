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

import scala.jdk.CollectionConverters._

import org.apache.rocketmq.client.consumer.PullStatus
import org.apache.rocketmq.common.message.MessageQueue

import org.apache.spark.sql.streaming.Trigger

/**
 * Compacted topics (`cleanup.policy=COMPACTION`, RocketMQ 5): the broker keeps each key's latest
 * message, so a queue has gaps that are not data loss; a message without keys would be dropped. The
 * test brokers compact every few seconds, in files of about a hundred messages
 * ([[TestBrokerConfig]]).
 */
class RocketMQCompactedTopicSuite extends RocketMQSparkSuiteBase {
  import testImplicits._

  private val Keys = 20
  private val Sent = 600

  /** Message i has key `k(i % Keys)` and body `k<key>-<i>`, at offset i of the one queue. */
  private def body(i: Int): String = s"k${i % Keys}-$i"

  /** A compacted one-queue topic holding [[Sent]] messages, once the broker compacted some away. */
  private lazy val compactedTopic: String = {
    val topic = rocketmq.newTopic("compacted")
    rocketmq.createTopic(topic, queues = 1, compacted = true)
    rocketmq.sendMessages(topic,
      (0 until Sent).map(i => TestMessage(body(i), keys = s"k${i % Keys}")), Some(0))
    val queue = new MessageQueue(topic, rocketmq.brokerName, 0)
    EmbeddedRocketMQ.awaitCondition("the broker to compact the first message away", 60000) {
      val result = rocketmq.plainClients.consumer.pull(queue, "*", 0L, 1)
      result.getPullStatus == PullStatus.FOUND &&
      result.getMsgFoundList.asScala.head.getQueueOffset > 0
    }
    topic
  }

  /** Checks `rows` (offset, body) against what was sent: each a message at its offset, in order. */
  private def assertKept(rows: Seq[(Long, String)]): Unit = {
    assert(rows.map(_._1) === rows.map(_._1).sorted.distinct, "offsets in order, each once")
    rows.foreach { case (offset, text) => assert(text === body(offset.toInt), s"offset $offset") }
    assert(rows.size < Sent, "the broker compacted messages away")
    val latest = (Sent - Keys until Sent).map(body)
    assert(latest.forall(rows.map(_._2).toSet), s"every key's latest message in $rows")
  }

  private def offsetsAndBodies(df: org.apache.spark.sql.DataFrame): Seq[(Long, String)] =
    df.selectExpr("queueOffset", "CAST(body AS STRING)").as[(Long, String)].collect().toSeq
      .sortBy(_._1)

  test(
    "a batch read of a compacted topic returns what the broker kept, without a data-loss " +
      "error: every key's latest message, the rest each once; a limit still gives its rows") {
    val rows = offsetsAndBodies(readTopic(compactedTopic))
    assertKept(rows)
    // A limit is not an offset range here: the first offsets are gone.
    assert(readTopic(compactedTopic).limit(5).collect().length === 5)
  }

  test("a stream of a compacted topic reads what the broker kept, each message once") {
    val table = s"compacted_${System.nanoTime()}"
    val q = streamTopic(compactedTopic, "startingOffsets" -> "earliest",
      "maxOffsetsPerTrigger" -> "150")
      .selectExpr("queueOffset", "CAST(body AS STRING) AS body")
      .writeStream.format("memory").queryName(table)
      .option("checkpointLocation", Files.createTempDirectory("rocketmq-compacted-").toString)
      .trigger(Trigger.AvailableNow()).start()
    try q.awaitTermination()
    finally q.stop()
    val rows = offsetsAndBodies(spark.table(table))
    assert(rows === offsetsAndBodies(readTopic(compactedTopic)))
    assertKept(rows)
  }

  test("a SQL filter on a compacted topic is refused, naming the topic: brokers do not apply it") {
    val refused = errorMessage(
      readTopic(compactedTopic, "sqlFilter" -> "TAGS = 'a'").collect())
    assert(refused.contains("ROCKETMQ_SQL_FILTER_ON_COMPACTED_TOPIC") &&
        refused.contains(s"'$compactedTopic'"), refused)
  }

  test(
    "a write without keys to a compacted topic fails naming the row and the keys column; rows " +
      "with keys are written") {
    val topic = rocketmq.newTopic("compacted-write")
    rocketmq.createTopic(topic, queues = 2, compacted = true)
    def write(df: org.apache.spark.sql.DataFrame): Unit =
      df.write.format("rocketmq").option("nameServer", rocketmq.nameServer)
        .option("topic", topic).mode("append").save()
    val noColumn = errorMessage(write(Seq("a", "b").toDF("body")))
    assert(noColumn.contains("ROCKETMQ_KEYS_REQUIRED") && noColumn.contains("'keys'") &&
        noColumn.contains(topic), noColumn)
    val oneNull = errorMessage(write(Seq(("a", "k1"), ("b", null)).toDF("body", "keys")
      .coalesce(1)))
    assert(oneNull.contains("ROCKETMQ_KEYS_REQUIRED") && oneNull.contains("Row 1 "), oneNull)
    write(Seq(("c", "k1"), ("d", "k2")).toDF("body", "keys"))
    // What the refused writes sent before their keyless row, and the keyed write.
    assert(rocketmq.readAll(topic).map(m => new String(m.getBody, "UTF-8")).sorted ===
      Seq("a", "c", "d"))
  }
}
