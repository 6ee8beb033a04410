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
import java.util.Optional
import java.util.concurrent.ConcurrentHashMap

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{ForeachWriter, Row}
import org.apache.spark.sql.connector.read.streaming.ReadLimit
import org.apache.spark.sql.rocketmq.options.RocketMQOptions
import org.apache.spark.sql.streaming.{StreamingQuery, StreamingQueryException, Trigger}
import org.apache.spark.sql.rocketmq.producer.RocketMQMessageSender

/**
 * Real-time mode (Trigger.RealTime, Spark 4.1 and later): the source, and the sink where Spark lets
 * it run.
 */
class RocketMQRealTimeSuite extends RocketMQSparkSuiteBase {

  private def newDir(): String = Files.createTempDirectory("rocketmq-realtime-").toString

  /**
   * `topic` from its earliest offsets into the foreach sink `sink`, in real-time batches of
   * `batch`.
   */
  private def toForeach(topic: String, sink: String, checkpoint: String, batch: String)
      : StreamingQuery =
    streamTopic(topic, "startingOffsets" -> "earliest")
      .selectExpr("CAST(body AS STRING) AS body", "queueId", "queueOffset")
      .writeStream.outputMode("update").foreach(new EpochOutput(sink))
      .option("checkpointLocation", checkpoint).trigger(Trigger.RealTime(batch)).start()

  private def awaitRows(sink: String, count: Int): Unit =
    EmbeddedRocketMQ.awaitCondition(s"$count rows in the foreach sink", 120000) {
      EpochOutput.rows(sink).map(_._1).distinct.size >= count
    }

  private def inputRows(q: StreamingQuery): Long = q.recentProgress.map(_.numInputRows).sum

  test("a real-time batch hands each message to the sink while it runs, not when it ends") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 2)
    val sink = rocketmq.newTopic("sink")
    // One batch of 10 minutes: the rows can only be in the sink before its end.
    val q = toForeach(topic, sink, newDir(), "10 minutes")
    try {
      rocketmq.sendBodies(topic, (0 until 10).map(i => s"m$i"))
      awaitRows(sink, 10)
      assert(q.lastProgress == null, "a batch ended before its 10 minutes")
      assert(EpochOutput.rows(sink).map(_._1).sorted === (0 until 10).map(i => s"m$i").sorted)
    } finally q.stop()
  }

  test(
    "restarted from its checkpoint, a real-time query into a foreach sink loses and repeats " +
      "nothing") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 2)
    val (sink, checkpoint) = (rocketmq.newTopic("sink"), newDir())
    def send(prefix: String): Unit = rocketmq.sendBodies(topic, (0 until 10).map(i => s"$prefix$i"))
    send("a")
    val first = toForeach(topic, sink, checkpoint, "5 seconds")
    try {
      awaitRows(sink, 10)
      send("b")
      awaitRows(sink, 20)
      // One batch ended with all 20 in it: the restart goes on from its end.
      EmbeddedRocketMQ.awaitCondition("a batch holding all 20 rows to end", 120000)(
        inputRows(first) >= 20)
      send("c") // read by the batch the stop interrupts, or by none: read again after the restart
    } finally first.stop()
    send("d")
    val second = toForeach(topic, sink, checkpoint, "5 seconds")
    try {
      awaitRows(sink, 40)
      send("e")
      awaitRows(sink, 50)
    } finally second.stop()
    val rows = EpochOutput.rows(sink)
    assert(rows.map(_._1).sorted === Seq("a", "b", "c", "d", "e").flatMap(p =>
      (0 until 10).map(i => s"$p$i")).sorted)
    val positions = rows.map(r => (r._2, r._3))
    assert(positions.distinct.size === positions.size, "a (queue, offset) came out twice")
    assert(positions.groupBy(_._1).values.map(_.map(_._2).sorted).forall(o =>
      o == o.indices.map(_.toLong)))
  }

  test(
    "a real-time query into RocketMQ (allowlist check off): a restart after a batch ended loses " +
      "and repeats nothing") {
    val (source, target) = (rocketmq.newTopic(), rocketmq.newTopic())
    rocketmq.createTopic(source, queues = 2)
    rocketmq.createTopic(target, queues = 2)
    val checkpoint = newDir()
    def start(): StreamingQuery =
      streamTopic(source, "startingOffsets" -> "earliest").selectExpr("body", "'copied' AS tags")
        .writeStream.outputMode("update").format("rocketmq").option("nameServer",
          rocketmq.nameServer)
        .option("topic", target).option("checkpointLocation", checkpoint).trigger(
          Trigger.RealTime("5 seconds"))
        .start()
    def copied: Seq[String] =
      rocketmq.readAll(target).map(m => new String(m.getBody, StandardCharsets.UTF_8))
    spark.conf.set("spark.sql.streaming.realTimeMode.allowlistCheck", "false")
    try {
      rocketmq.sendBodies(source, (0 until 20).map(i => s"x$i"))
      val first = start()
      try {
        EmbeddedRocketMQ.awaitCondition("20 messages copied", 120000)(copied.size >= 20)
        EmbeddedRocketMQ.awaitCondition("a batch holding the 20 to end", 120000)(
          inputRows(first) >= 20)
        // Each batch that read rows reports their queue waits, and the acknowledgements of the
        // requests that carried them: a request per row while fewer than 4 of a task's await
        // theirs, rows that come meanwhile together. So a task's first 4 rows go alone and the rest
        // in at least one more request: over the batch at least min(rows, 5) requests, at most one
        // per row.
        val withRows = first.recentProgress.filter(_.numInputRows > 0)
        assert(withRows.nonEmpty)
        withRows.foreach { p =>
          val (waits, acks) = (p.sources.head.metrics.asScala, p.sink.metrics.asScala)
          assert(waits("queueWaitCount") === p.numInputRows.toString, waits)
          assert(waits("queueWaitMsP50").toLong <= waits("queueWaitMsMax").toLong, waits)
          val fewest = math.min(p.numInputRows, RocketMQMessageSender.EachAtOnceRequests + 1L)
          assert(acks("sendAckCount").toLong >= fewest &&
              acks("sendAckCount").toLong <= p.numInputRows, acks)
          assert(acks("sendAckMsP99").toLong <= acks("sendAckMsMax").toLong, acks)
        }
      } finally first.stop()
      rocketmq.sendBodies(source, (20 until 30).map(i => s"x$i"))
      val second = start()
      try EmbeddedRocketMQ.awaitCondition("30 messages copied", 120000)(copied.size >= 30)
      finally second.stop()
      assert(copied.sorted === (0 until 30).map(i => s"x$i").sorted)
    } finally spark.conf.unset("spark.sql.streaming.realTimeMode.allowlistCheck")
  }

  test(
    "into RocketMQ, each row is sent as it arrives, not when the batch ends (no sink setting " +
      "needed); exactly-once is refused before anything is sent") {
    val (source, target) = (rocketmq.newTopic(), rocketmq.newTopic())
    rocketmq.createTopic(source, queues = 2)
    rocketmq.createTopic(target, queues = 2)
    spark.conf.set("spark.sql.streaming.realTimeMode.allowlistCheck", "false")
    try {
      rocketmq.sendBodies(source, Seq("early"))
      val exactlyOnce = streamTopic(source, "startingOffsets" -> "earliest").selectExpr("body")
        .writeStream.outputMode("update").format("rocketmq").option("nameServer",
          rocketmq.nameServer)
        .option("topic", target).option("deliveryGuarantee", "exactly_once")
        .option("checkpointLocation", newDir()).trigger(Trigger.RealTime("10 minutes")).start()
      val e = intercept[StreamingQueryException](exactlyOnce.awaitTermination(120000))
      val text = Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(
        _.getMessage).mkString("\n")
      assert(text.contains("ROCKETMQ_OPTION_NOT_ALLOWED.REAL_TIME_EXACTLY_ONCE") &&
          text.contains("'deliveryGuarantee'"), text)
      assert(rocketmq.readAll(target).isEmpty,
        "an exactly-once real-time query sent rows before it was refused")
      // One batch of 10 minutes: the messages can only be in the target before its end.
      val q = streamTopic(source, "startingOffsets" -> "earliest").selectExpr("body")
        .writeStream.outputMode("update").format("rocketmq").option("nameServer",
          rocketmq.nameServer)
        .option("topic", target).option("checkpointLocation", newDir())
        .trigger(Trigger.RealTime("10 minutes")).start()
      try {
        rocketmq.sendBodies(source, (0 until 10).map(i => s"y$i"))
        EmbeddedRocketMQ.awaitCondition("11 messages copied", 120000)(
          rocketmq.readAll(target).size >= 11)
        assert(q.lastProgress == null, "a batch ended before its 10 minutes")
        assert(rocketmq.readAll(target).map(m =>
          new String(m.getBody, StandardCharsets.UTF_8)).sorted ===
          ("early" +: (0 until 10).map(i => s"y$i")).sorted)
      } finally q.stop()
    } finally spark.conf.unset("spark.sql.streaming.realTimeMode.allowlistCheck")
  }

  test(
    "in real-time mode a tag filter skips what it does not match, and progress reports no " +
      "offsets behind") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 2)
    val sink = rocketmq.newTopic("sink")
    def send(prefix: String): Unit = rocketmq.sendMessages(topic,
      (0 until 10).map(i => TestMessage(s"$prefix$i", tags = if (i % 2 == 0) "keep" else "drop")))
    send("a")
    val q = streamTopic(topic, "startingOffsets" -> "earliest", "subExpression" -> "keep")
      .selectExpr("CAST(body AS STRING) AS body", "queueId", "queueOffset")
      .writeStream.outputMode("update").foreach(new EpochOutput(sink))
      .option("checkpointLocation", newDir()).trigger(Trigger.RealTime("5 seconds")).start()
    def behind: Option[String] =
      Option(q.lastProgress).flatMap(p =>
        Option(p.sources.head.metrics.get("maxOffsetsBehindLatest")))
    try {
      awaitRows(sink, 5)
      send("b")
      awaitRows(sink, 10)
      // Batches end every 5 s; one ends once the tasks have also skipped the last non-matching
      // messages.
      EmbeddedRocketMQ.awaitCondition(
        "a batch end with all 10 matching rows read and no offsets behind", 120000) {
        inputRows(q) >= 10 && behind.contains("0")
      }
      assert(inputRows(q) === 10, "rows the filter skipped were counted as input")
    } finally q.stop()
    val rows = EpochOutput.rows(sink)
    assert(rows.map(_._1).sorted === Seq("a", "b").flatMap(p =>
      (0 until 10 by 2).map(i => s"$p$i")).sorted)
    assert(
      rows.map(r => (r._2, r._3)).distinct.size === rows.size, "a (queue, offset) came out twice")
  }

  test("options that bound or split a batch are refused in real-time mode, naming the option") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 1)
    for ((option, value) <- Seq("maxOffsetsPerTrigger" -> "10", "minPartitions" -> "4")) {
      val q = streamTopic(topic, option -> value).selectExpr("CAST(body AS STRING) AS body")
        .writeStream.outputMode("update").foreach(new EpochOutput(rocketmq.newTopic("sink")))
        .option("checkpointLocation", newDir()).trigger(Trigger.RealTime("5 seconds")).start()
      val e = intercept[StreamingQueryException](q.awaitTermination(120000))
      val text = Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(
        _.getMessage).mkString("\n")
      assert(text.contains("ROCKETMQ_OPTION_NOT_ALLOWED.REAL_TIME") && text.contains(s"'$option'"),
        text)
    }
  }

  test(
    "more source queues than task slots fail the query before its tasks run, naming queues and " +
      "slots") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 3)
    rocketmq.sendBodies(topic, Seq("m0"))
    val sink = rocketmq.newTopic("sink")
    val q = toForeach(topic, sink, newDir(), "10 minutes") // local[2]: 2 slots for 3 queues
    val e = intercept[StreamingQueryException](q.awaitTermination(120000))
    val text = Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(
      _.getMessage).mkString("\n")
    assert(text.contains("ROCKETMQ_REAL_TIME_INSUFFICIENT_SLOTS"), text)
    assert(text.contains("needs 3 task slots") && text.contains("has 2") &&
        text.contains("3 queues"), text)
    for (i <- 0 until 3) assert(text.contains(s"$topic/${rocketmq.brokerName}/$i"), text)
    assert(EpochOutput.rows(sink).isEmpty, "a task ran although the check failed")
  }

  test(
    "between two real-time batches the brokers are asked for the queues' ends once, and each " +
      "batch planned once") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 2)
    rocketmq.sendBodies(topic, (0 until 4).map(i => s"m$i"))
    val options = new RocketMQOptions(Map("nameServer" -> rocketmq.nameServer, "topic" -> topic,
      "startingOffsets" -> "earliest"))
    val stream = new RocketMQRealTimeMicroBatchStream(options, newDir())
    def requests: Long = stream.planner.reader.requestCount
    try {
      stream.prepareForRealTimeMode()
      val start = stream.initialOffset()
      var before = requests
      stream.latestOffset(start, ReadLimit.allAvailable())
      // Each look at the ends: a route lookup on the name server and one stats request to the
      // broker.
      assert(requests - before === 2)
      // Spark plans a batch's partitions more than once: the second plan is the first, with nothing
      // asked again.
      before = requests
      val first = stream.planInputPartitions(start)
      assert(first.length === 2)
      assert(stream.planInputPartitions(start) eq first, "the same batch was planned twice")
      assert(requests === before)
      // The batch ends: its progress asks for the ends, and the next batch's start takes them as
      // they are.
      val reached = RocketMQSourceOffset(stream.planner.latestRanges.map { case (q, r) =>
        q -> r.max
      })
      before = requests
      assert(stream.metrics(Optional.of(reached)).get("maxOffsetsBehindLatest") === "0")
      assert(requests - before === 2)
      stream.latestOffset(reached, ReadLimit.allAvailable())
      assert(requests - before === 2, "the next batch's start asked for the ends again")
      assert(!(stream.planInputPartitions(reached) eq first), "a new start was not planned anew")
      // Only once: a later start asks again.
      stream.latestOffset(reached, ReadLimit.allAvailable())
      assert(requests - before === 4)
    } finally stream.stop()
  }

  test(
    "the tasks a real-time batch needs past the source: the stage after a stateful operator or a " +
      "repartition") {
    import org.apache.spark.sql.catalyst.expressions.AttributeReference
    import org.apache.spark.sql.catalyst.plans.logical.{
      Deduplicate, LocalRelation, Project, Repartition
    }
    import org.apache.spark.sql.types.StringType
    val body = AttributeReference("body", StringType)()
    val stream = LocalRelation(Seq(body), Nil, isStreaming = true)
    val static = LocalRelation(Seq(body), Nil, isStreaming = false)
    def tasks(plan: org.apache.spark.sql.catalyst.plans.logical.LogicalPlan): Option[Int] =
      RocketMQRealTimeSlots.shuffleOf(plan, shufflePartitions = 5).map(_.tasks)
    assert(tasks(Project(Seq(body), stream)) === None)
    assert(tasks(Deduplicate(Seq(body), stream)) === Some(5))
    assert(RocketMQRealTimeSlots.shuffleOf(Deduplicate(Seq(body), stream), 5).get.cause.contains(
      "Deduplicate"))
    assert(tasks(Repartition(7, shuffle = true, stream)) === Some(7))
    assert(tasks(Repartition(7, shuffle = false, stream)) === None) // coalesce: no shuffle
    assert(tasks(Deduplicate(Seq(body), static)) ===
      None) // a static side's stages run in jobs of their own
  }
}

/**
 * A foreach sink keeping the rows of each (partition, epoch) apart, a rerun of one replacing what
 * it wrote before: the idempotent output Spark's foreach documentation describes, exactly once from
 * an at-least-once stream.
 */
private final class EpochOutput(sink: String) extends ForeachWriter[Row] {
  private var rows: java.util.List[(String, Int, Long)] = _

  override def open(partitionId: Long, epochId: Long): Boolean = {
    rows = java.util.Collections.synchronizedList(new java.util.ArrayList[(String, Int, Long)]())
    EpochOutput.parts.put((sink, partitionId, epochId), rows)
    true
  }

  override def process(row: Row): Unit =
    rows.add((row.getString(0), if (row.length > 1) row.getInt(1) else -1,
      if (row.length > 2) row.getLong(2) else -1L))

  override def close(errorOrNull: Throwable): Unit = ()
}

private object EpochOutput {
  val parts = new ConcurrentHashMap[(String, Long, Long), java.util.List[(String, Int, Long)]]()

  /** What sink `sink` holds now: (body, queueId, queueOffset). */
  def rows(sink: String): Seq[(String, Int, Long)] = parts.asScala.toSeq.collect {
    case ((s, _, _), list) if s == sink => list.synchronized(list.asScala.toList)
  }.flatten
}
