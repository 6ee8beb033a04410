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
import java.util.UUID

import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}

/** `topicPattern`: the topics of the cluster whose names match, in batch reads and streams. */
class RocketMQTopicPatternSuite extends RocketMQSparkSuiteBase {

  /** A prefix no other test's topic has: the shared broker holds every suite's topics. */
  private def newApp(): String = s"app${UUID.randomUUID().toString.take(8)}"

  private def bodiesOf(prefix: String, count: Int): Seq[String] = (0 until count).map(i =>
    s"$prefix-$i")

  test("a batch read of a pattern reads every matching topic once, and no other") {
    val app = newApp()
    val (orders, refunds, other) = (s"$app-orders", s"$app-refunds", s"x$app-orders")
    Seq(orders, refunds, other).foreach(rocketmq.createTopic(_, queues = 2))
    rocketmq.sendBodies(orders, bodiesOf("o", 10))
    rocketmq.sendBodies(refunds, bodiesOf("r", 5))
    rocketmq.sendBodies(other, bodiesOf("x", 3))
    val df = spark.read.format("rocketmq").option("nameServer", rocketmq.nameServer)
      .option("topicPattern", s"$app-.*").load()
    val rows = df.selectExpr("topic", "CAST(body AS STRING)").collect()
      .map(r => (r.getString(0), r.getString(1))).toSeq
    assert(rows.sorted ===
      (bodiesOf("o", 10).map(orders -> _) ++
        bodiesOf("r", 5).map(refunds -> _)).sorted)
    // A pattern matching nothing reads nothing; with topic too it is refused.
    assert(spark.read.format("rocketmq").option("nameServer", rocketmq.nameServer)
      .option("topicPattern", s"$app-none-.*").load().count() === 0)
    val both = errorMessage(spark.read.format("rocketmq").option("nameServer", rocketmq.nameServer)
      .option("topic", orders).option("topicPattern", s"$app-.*").load().collect())
    assert(both.contains("ROCKETMQ_CONFLICTING_OPTIONS") && both.contains("'topicPattern'"), both)
  }

  test(
    "a stream of a pattern reads the topics that match at its start, then each topic created " +
      "while it runs from its first message: every message of each once") {
    val app = newApp()
    val first = s"$app-a"
    rocketmq.createTopic(first, queues = 2)
    rocketmq.sendBodies(first, bodiesOf("a", 6))
    val table = s"pattern_${app}"
    val q: StreamingQuery = spark.readStream.format("rocketmq")
      .option("nameServer", rocketmq.nameServer).option("topicPattern", s"$app-.*")
      .option("startingOffsets", "earliest").load()
      .selectExpr("topic", "CAST(body AS STRING) AS body")
      .writeStream.format("memory").queryName(table)
      .option("checkpointLocation", Files.createTempDirectory("rocketmq-pattern-").toString)
      .trigger(Trigger.ProcessingTime("200 milliseconds")).start()
    def rows: Seq[(String, String)] =
      spark.table(table).collect().map(r => (r.getString(0), r.getString(1))).toSeq
    def awaitRows(count: Int): Unit =
      EmbeddedRocketMQ.awaitCondition(s"$count rows in $table", 120000) {
        q.exception.foreach(e => throw e)
        rows.size >= count
      }
    try {
      awaitRows(6)
      // Two topics begin to match while the query runs, each with messages sent before the
      // stream saw it: they are read from their first offset.
      val (second, third) = (s"$app-b", s"$app-c")
      rocketmq.createTopic(second, queues = 3)
      rocketmq.sendBodies(second, bodiesOf("b", 9))
      rocketmq.createTopic(third, queues = 1)
      rocketmq.sendBodies(third, bodiesOf("c", 4))
      awaitRows(19)
      rocketmq.sendBodies(first, bodiesOf("a2", 3))
      rocketmq.sendBodies(third, bodiesOf("c2", 2))
      awaitRows(24)
      q.processAllAvailable()
      assert(rows.sorted ===
        (bodiesOf("a", 6).map(first -> _) ++
          bodiesOf("a2", 3).map(first -> _) ++ bodiesOf("b", 9).map(second -> _) ++
          bodiesOf("c", 4).map(third -> _) ++ bodiesOf("c2", 2).map(third -> _)).sorted)
    } finally q.stop()
  }

  test("a topic of a stream's pattern deleted while it runs is a deleted topic: the query fails " +
    "naming its queue, as failOnDataLoss says") {
    val app = newApp()
    val (kept, deleted) = (s"$app-kept", s"$app-deleted")
    Seq(kept, deleted).foreach(rocketmq.createTopic(_, queues = 1))
    Seq(kept, deleted).foreach(t => rocketmq.sendBodies(t, bodiesOf(t, 2)))
    val table = s"pattern_gone_$app"
    val q = spark.readStream.format("rocketmq").option("nameServer", rocketmq.nameServer)
      .option("topicPattern", s"$app-.*").option("startingOffsets", "earliest").load()
      .selectExpr("CAST(body AS STRING)").writeStream.format("memory").queryName(table)
      .option("checkpointLocation", Files.createTempDirectory("rocketmq-pattern-").toString)
      .trigger(Trigger.ProcessingTime("200 milliseconds")).start()
    try {
      EmbeddedRocketMQ.awaitCondition("4 rows", 120000)(spark.table(table).count() >= 4)
      rocketmq.deleteTopic(deleted)
      rocketmq.sendBodies(kept, bodiesOf("later", 1))
      val text = errorMessage(q.awaitTermination(120000))
      assert(text.contains("ROCKETMQ_DATA_LOSS_QUEUE_GONE") && text.contains(deleted), text)
    } finally q.stop()
  }
}
