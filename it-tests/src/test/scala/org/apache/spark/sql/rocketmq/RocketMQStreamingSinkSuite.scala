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

import java.nio.charset.StandardCharsets
import java.nio.file.Files
import java.util.UUID

import scala.jdk.CollectionConverters._

import org.apache.rocketmq.common.message.MessageExt

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.connector.write.LogicalWriteInfo
import org.apache.spark.sql.execution.datasources.v2.{MicroBatchScanExec, WriteToDataSourceV2Exec}
import org.apache.spark.sql.execution.streaming.runtime.StreamingQueryWrapper
import org.apache.spark.sql.rocketmq.options.RocketMQOptions
import org.apache.spark.sql.streaming.{OutputMode, StreamingQuery, Trigger}
import org.apache.spark.sql.types.{StringType, StructType}
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/** The sink, batch and streaming: what an independent consumer finds in the topic afterwards. */
class RocketMQStreamingSinkSuite extends RocketMQSparkSuiteBase {
  import testImplicits._

  private def newDir(): String = Files.createTempDirectory("rocketmq-sink-").toString

  private def body(m: MessageExt): String = new String(m.getBody, StandardCharsets.UTF_8)

  private def source(topic: String, options: (String, String)*): DataFrame =
    streamTopic(topic, ("startingOffsets" -> "earliest") +: options: _*)

  private def toTopic(df: DataFrame, topic: String, mode: OutputMode = OutputMode.Append(),
      trigger: Trigger = Trigger.AvailableNow()): StreamingQuery =
    df.writeStream.format("rocketmq").option("nameServer", rocketmq.nameServer).option("topic",
      topic)
      .option("checkpointLocation", newDir()).outputMode(mode).trigger(trigger).start()

  test("every column reaches the message: tags, keys as string or array, properties") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 4)
    val rows = (0 until 200).map(i =>
      (s"b$i", s"t${i % 3}", Seq(s"k$i", s"extra$i"), Map("n" -> i.toString, "p" -> "q")))
    rows.toDF("body", "tags", "keys", "properties").repartition(4).write.format("rocketmq")
      .option("nameServer", rocketmq.nameServer).option("topic", topic).save()
    val stored = rocketmq.readAll(topic)
    assert(stored.map(body).sorted === rows.map(_._1).sorted)
    stored.foreach { m =>
      val i = body(m).drop(1).toInt
      assert(m.getTags === s"t${i % 3}")
      assert(m.getKeys === s"k$i extra$i")
      assert(m.getUserProperty("n") === i.toString && m.getUserProperty("p") === "q")
    }
    Seq(("x", "k1 k2")).toDF("body", "keys").write.format("rocketmq")
      .option("nameServer", rocketmq.nameServer).option("topic", topic).save()
    assert(rocketmq.readAll(topic).find(m => body(m) == "x").get.getKeys === "k1 k2")
  }

  test("rows sharing a shardingKey land on one queue, in their original order") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 8)
    val rows = (0 until 300).map(i => (f"$i%04d", s"key-${i % 7}"))
    rows.toDF("body", "shardingKey").coalesce(1).write.format("rocketmq")
      .option("nameServer", rocketmq.nameServer).option("topic", topic).save()
    val stored = rocketmq.readAll(topic)
    val byKey = rows.groupBy(_._2).map { case (k, rs) => k -> rs.map(_._1) }
    val storedByBody = stored.map(m => body(m) -> m).toMap
    byKey.foreach { case (key, bodies) =>
      val messages = bodies.map(storedByBody)
      assert(messages.map(_.getQueueId).distinct.size === 1, s"$key spread over queues")
      assert(messages.map(_.getQueueOffset) === messages.map(_.getQueueOffset).sorted,
        s"$key out of order")
    }
    assert(stored.map(_.getQueueId).distinct.size > 1, "different keys should use different queues")
  }

  test(
    "source -> transform -> sink -> another topic: counts equal, and the write metrics count " +
      "them") {
    val (in, out) = (rocketmq.newTopic(), rocketmq.newTopic())
    rocketmq.createTopic(in, queues = 4)
    rocketmq.createTopic(out, queues = 2)
    rocketmq.sendBodies(in, (0 until 500).map(i => s"m$i"))
    val q = toTopic(source(in, "maxOffsetsPerTrigger" -> "200")
        .selectExpr("concat('out-', CAST(body AS STRING)) AS body", "'copied' AS tags",
        "array(concat('k-', CAST(queueOffset AS STRING)), 'all') AS keys",
        "map('from', CAST(queueId AS STRING)) AS properties"), out)
    assert(q.awaitTermination(120000))
    assert(q.exception.isEmpty, q.exception)
    val stored = rocketmq.readAll(out)
    assert(stored.map(body).sorted === (0 until 500).map(i => s"out-m$i").sorted)
    assert(stored.forall(_.getTags == "copied"))
    assert(stored.forall(m => m.getKeys.startsWith("k-") && m.getKeys.endsWith(" all")))
    assert(stored.map(_.getUserProperty("from")).toSet === Set("0", "1", "2", "3"))
    val metrics =
      q.asInstanceOf[StreamingQueryWrapper].streamingQuery.lastExecution.executedPlan.collect {
        case w: WriteToDataSourceV2Exec => w.metrics.map { case (k, v) => k -> v.value }
      }.head
    val lastBatchRows = q.recentProgress.filter(_.numInputRows > 0).last.numInputRows
    assert(metrics(RocketMQCustomMetrics.MessagesSent) === lastBatchRows, metrics)
    assert(metrics(RocketMQCustomMetrics.BytesSent) > 0)
    assert(metrics(RocketMQCustomMetrics.FailedSends) === 0)
    assert(metrics(RocketMQCustomMetrics.PossibleDuplicates) === 0)
    assert(metrics.contains(RocketMQCustomMetrics.SendRetries))
  }

  test(
    "progress and SQL metrics: how long messages waited in RocketMQ, and how long sends took to " +
      "be acknowledged") {
    val (in, out) = (rocketmq.newTopic(), rocketmq.newTopic())
    rocketmq.createTopic(in, queues = 1) // one task: its SQL metrics are the task's own values
    rocketmq.createTopic(out, queues = 2)
    val sendStart = System.currentTimeMillis()
    rocketmq.sendBodies(in, (0 until 50).map(i => s"w$i"))
    val stored = System.currentTimeMillis() // every message acknowledged, so stored, by now
    // The wait being measured: nothing reads the topic for 1.5 s.
    val pauseMs = 1500L
    while (System.currentTimeMillis() - stored < pauseMs)
      Thread.sleep(pauseMs - (System.currentTimeMillis() - stored))
    val q = toTopic(source(in).selectExpr("body"), out)
    assert(q.awaitTermination(120000))
    assert(q.exception.isEmpty, q.exception)
    val ended = System.currentTimeMillis()
    val batches = q.recentProgress.filter(_.numInputRows > 0)
    assert(batches.length === 1 && batches.head.numInputRows === 50)
    val waits = batches.head.sources.head.metrics.asScala.toMap
    assert(waits("queueWaitCount") === "50", waits)
    val (p50, p99, max) =
      (waits("queueWaitMsP50").toLong, waits("queueWaitMsP99").toLong,
        waits("queueWaitMsMax").toLong)
    // Read after the pause, stored after `sendStart`, read before the query ended.
    assert(p50 >= pauseMs && p50 <= p99 && p99 <= max && max <= ended - sendStart, waits)
    assert(waits.contains("maxOffsetsBehindLatest"), "the lag metrics are still there")
    val acks = batches.head.sink.metrics.asScala.toMap
    val ackCount = acks("sendAckCount").toLong
    val (ackP50, ackP99, ackMax) =
      (acks("sendAckMsP50").toLong, acks("sendAckMsP99").toLong, acks("sendAckMsMax").toLong)
    assert(ackCount > 0 && ackCount <= 50 && ackP50 >= 0 && ackP50 <= ackP99 && ackP99 <= ackMax &&
        ackMax < 30000,
      acks)
    // The read's SQL metrics (its one task's values). The write's show only the acknowledgements in
    // before the task's commit, where Spark reads them: a batch of 50 goes out at the commit.
    val plan = q.asInstanceOf[StreamingQueryWrapper].streamingQuery.lastExecution.executedPlan
    val read = plan.collect { case s: MicroBatchScanExec =>
      s.metrics.map { case (k, v) => k -> v.value }
    }.head
    assert(read(RocketMQCustomMetrics.QueueWaitMsMax) === max, read)
    assert(read(RocketMQCustomMetrics.QueueWaitMsP50) >= pauseMs, read)
  }

  test("a streaming aggregation publishes its results in complete and update modes") {
    val (in, out) = (rocketmq.newTopic(), rocketmq.newTopic())
    rocketmq.createTopic(in, queues = 2)
    rocketmq.createTopic(out, queues = 2)
    rocketmq.sendBodies(in, Seq("a", "b", "a", "c", "a"))
    val counts = source(in).selectExpr("CAST(body AS STRING) AS word").groupBy("word").count()
      .selectExpr("word AS shardingKey", "concat(word, '=', CAST(count AS STRING)) AS body")
    for (mode <- Seq(OutputMode.Complete(), OutputMode.Update())) {
      val q = toTopic(counts, out, mode)
      assert(q.awaitTermination(120000))
      assert(q.exception.isEmpty, q.exception)
    }
    // Each mode emitted the three counts once (one batch each).
    assert(rocketmq.readAll(out).map(body).sorted === Seq("a=3", "a=3", "b=1", "b=1", "c=1", "c=1"))
  }

  test("deliveryDelayMs holds a message back until it is due") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 1)
    val sentAt = System.currentTimeMillis()
    Seq("later").toDF("body").write.format("rocketmq").option("nameServer", rocketmq.nameServer)
      .option("topic", topic).option("deliveryDelayMs", "3000").save()
    assert(rocketmq.readAll(topic).isEmpty, "delivered before it was due")
    EmbeddedRocketMQ.awaitCondition("the delayed message", 60000)(rocketmq.readAll(topic).nonEmpty)
    val delivered = rocketmq.readAll(topic).head
    assert(body(delivered) === "later")
    assert(delivered.getStoreTimestamp >= sentAt + 2000,
      "stored in the topic before its delivery time")
  }

  test(
    "clear errors: a message over the size limit, a bad property name, a topic that does not " +
      "exist") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 1)
    def write(df: DataFrame, options: (String, String)*): String = errorMessage(
      df.write.format("rocketmq")
        .option("nameServer", rocketmq.nameServer).option("topic", topic).options(
          options.toMap).save())
    val huge = write(Seq("x" * (5 * 1024 * 1024)).toDF("body"),
      "compressionThreshold" -> Int.MaxValue.toString)
    assert(huge.contains("ROCKETMQ_SEND_FAILED") && huge.toLowerCase.contains("size"), huge)
    val reserved = write(Seq(("x", Map("TAGS" -> "sneaky"))).toDF("body", "properties"))
    assert(reserved.contains("ROCKETMQ_INVALID_PROPERTY_NAME") && reserved.contains("'TAGS'") &&
        reserved.contains("'properties'") && reserved.contains("reserves"), reserved)
    val typed = write(Seq(("x", 5)).toDF("body", "shardingKey"))
    assert(typed.contains("ROCKETMQ_INVALID_COLUMN_TYPE") && typed.contains("'shardingKey'"), typed)
    val missing = errorMessage {
      val q = toTopic(source(topic).selectExpr("body"), "no-such-sink-topic")
      q.awaitTermination(60000)
    }
    assert(missing.contains("ROCKETMQ_TOPIC_NOT_FOUND") && missing.contains("'no-such-sink-topic'"),
      missing)
  }

  test(
    "a stream's sink table asks whether its topic exists at the query's first plan, not at every " +
      "micro-batch's") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 1)
    val options = new RocketMQOptions(Map("nameServer" -> rocketmq.nameServer, "topic" -> topic))
    val info = new LogicalWriteInfo {
      private val id = UUID.randomUUID().toString
      override def queryId(): String = id
      override def schema(): StructType = new StructType().add("body", StringType)
      override def options(): CaseInsensitiveStringMap = CaseInsensitiveStringMap.empty()
    }
    // Spark makes one sink table per streaming query and plans its write anew for every
    // micro-batch.
    val table = new RocketMQTable(options)
    table.newWriteBuilder(info).build()
    rocketmq.deleteTopic(topic)
    // The next micro-batch's plan does not ask the name server again.
    assert(table.newWriteBuilder(info).build().asInstanceOf[RocketMQWrite].settings.topic ===
      Some(topic))
    // The next query's table (or a restart's), and a batch write, still learn that the topic is
    // gone before they send.
    val next = errorMessage(new RocketMQTable(options).newWriteBuilder(info).build())
    val batch = errorMessage(RocketMQWrite.plan(options, info.schema(), info.queryId(),
      checkpointLocation = None))
    for (missing <- Seq(next, batch)) {
      assert(missing.contains("ROCKETMQ_TOPIC_NOT_FOUND") && missing.contains(s"'$topic'"), missing)
    }
  }
}
