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

import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.rocketmq.common.RocketMQQueue
import org.apache.spark.sql.rocketmq.options.RocketMQOptions
import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}

/** The streaming source, as scripts of actions (send, start, stop, restart) and checks. */
class RocketMQStreamingSourceSuite extends RocketMQSparkSuiteBase {

  private def newDir(): String = Files.createTempDirectory("rocketmq-stream-").toString

  /** Starts `df` into an in-memory table named `name`, checkpointing at `checkpoint`. */
  private def toMemory(df: DataFrame, name: String, checkpoint: String,
      trigger: Trigger = Trigger.ProcessingTime(0))
      : StreamingQuery =
    df.selectExpr("CAST(body AS STRING) AS body", "brokerName", "queueId", "queueOffset")
      .writeStream.format("memory").queryName(name)
      .option("checkpointLocation", checkpoint).trigger(trigger).start()

  private def memoryBodies(name: String): Seq[String] =
    spark.table(name).collect().map(_.getString(0)).toSeq

  private def withQuery[T](query: StreamingQuery)(body: StreamingQuery => T): T =
    try body(query)
    finally query.stop()

  private var tableCount = 0
  private def tableName(): String = { tableCount += 1; s"rocketmq_out_$tableCount" }

  test("starts at latest by default: only messages sent after the start are read") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 2)
    rocketmq.sendBodies(topic, (0 until 5).map(i => s"before-$i"))
    val name = tableName()
    withQuery(toMemory(streamTopic(topic), name, newDir())) { q =>
      q.processAllAvailable()
      assert(memoryBodies(name).isEmpty)
      rocketmq.sendBodies(topic, (0 until 10).map(i => s"after-$i"))
      q.processAllAvailable()
      assert(memoryBodies(name).sorted === (0 until 10).map(i => s"after-$i").sorted)
    }
  }

  /** Runs `df` into JSON files at `output` until all available data is processed, then stops. */
  private def runToFiles(df: DataFrame, output: String, checkpoint: String): Unit = {
    val q = df.selectExpr("CAST(body AS STRING) AS body", "brokerName", "queueId", "queueOffset")
      .writeStream.format("json").option("path", output).option("checkpointLocation",
        checkpoint).start()
    try q.processAllAvailable()
    finally q.stop()
  }

  private def fileRows(output: String): Seq[Row] =
    spark.read.schema("body STRING, brokerName STRING, queueId INT, queueOffset BIGINT").json(
      output).collect().toSeq

  test("earliest, then a restart resumes from the checkpoint and ignores the start options") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 3)
    rocketmq.sendBodies(topic, (0 until 30).map(i => s"a$i"))
    val (checkpoint, output) = (newDir(), newDir())
    runToFiles(streamTopic(topic, "startingOffsets" -> "earliest"), output, checkpoint)
    assert(fileRows(output).size === 30)
    rocketmq.sendBodies(topic, (0 until 12).map(i => s"b$i"))
    runToFiles(streamTopic(topic, "startingOffsets" -> "earliest"), output, checkpoint)
    assert(fileRows(output).map(_.getString(0)).sorted ===
      ((0 until 30).map(i => s"a$i") ++ (0 until 12).map(i => s"b$i")).sorted)
  }

  test("restart mid-stream into a file sink: every message present exactly once") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 4)
    rocketmq.sendBodies(topic, (0 until 200).map(i => s"m$i"))
    val (checkpoint, output) = (newDir(), newDir())
    def run(): Unit = {
      val q = streamTopic(topic, "startingOffsets" -> "earliest", "maxOffsetsPerTrigger" -> "37")
        .selectExpr("CAST(body AS STRING) AS body", "brokerName", "queueId", "queueOffset")
        .writeStream.format("json").option("path", output).option("checkpointLocation", checkpoint)
        .trigger(Trigger.AvailableNow()).start()
      q.awaitTermination(120000)
      assert(!q.isActive, "the AvailableNow query should have finished")
      assert(q.exception.isEmpty, q.exception)
    }
    run()
    rocketmq.sendBodies(topic, (200 until 300).map(i => s"m$i"))
    run()
    val rows = fileRows(output)
    val byPosition = rows.groupBy(r => (r.getString(1), r.getInt(2), r.getLong(3))).map {
      case (k, v) => k -> v.length
    }
    assert(byPosition.values.forall(_ == 1), byPosition.filter(_._2 > 1))
    assert(rows.map(_.getString(0)).sorted.toSeq === (0 until 300).map(i => s"m$i").sorted)
  }

  test(
    "maxOffsetsPerTrigger caps each batch; AvailableNow reads what existed at start, then stops") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 4)
    rocketmq.sendBodies(topic, (0 until 100).map(i => s"m$i"))
    val name = tableName()
    val q =
      toMemory(streamTopic(topic, "startingOffsets" -> "earliest", "maxOffsetsPerTrigger" -> "30"),
        name, newDir(),
        Trigger.AvailableNow())
    assert(q.awaitTermination(120000), "AvailableNow did not stop")
    assert(memoryBodies(name).sorted === (0 until 100).map(i => s"m$i").sorted)
    val sizes = q.recentProgress.map(_.numInputRows).filter(_ > 0).toSeq
    assert(sizes === Seq(30L, 30L, 30L, 10L), sizes)
  }

  test("minOffsetsPerTrigger holds a batch until enough data, or until maxTriggerDelay") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 1)
    val name = tableName()
    // The delay counts from the stream's start (no batch before it), which comes after this.
    val started = System.currentTimeMillis()
    withQuery(toMemory(streamTopic(topic, "minOffsetsPerTrigger" -> "20",
      "maxTriggerDelay" -> "3s"), name, newDir(),
      Trigger.ProcessingTime(100))) { q =>
      q.processAllAvailable()
      rocketmq.sendBodies(topic, (0 until 5).map(i => s"few$i"))
      q.processAllAvailable()
      val early = memoryBodies(name)
      if (System.currentTimeMillis() - started < 3000)
        assert(early.isEmpty, "5 < minOffsetsPerTrigger: wait")
      // (Its progress is recorded after its rows reach the sink: both are waited for.)
      EmbeddedRocketMQ.awaitCondition("the delayed batch after maxTriggerDelay, and its progress",
        60000) {
        memoryBodies(name).size == 5 && q.recentProgress.exists(_.numInputRows > 0)
      }
      // Whatever the machine's pace: the batch with the 5 rows was decided no sooner than 3 s after
      // the start.
      val delayed = q.recentProgress.find(_.numInputRows > 0).get
      val decidedBy = java.time.Instant.parse(delayed.timestamp).toEpochMilli +
        delayed.durationMs.get("triggerExecution").longValue()
      assert(delayed.numInputRows === 5 && decidedBy >= started + 3000, delayed.json)
      rocketmq.sendBodies(topic, (0 until 25).map(i => s"many$i"))
      EmbeddedRocketMQ.awaitCondition("a batch once minOffsetsPerTrigger is reached", 60000) {
        memoryBodies(name).size == 30
      }
    }
  }

  test("several topics in one query; a queue added mid-stream is read from its earliest offset") {
    val (t1, t2) = (rocketmq.newTopic(), rocketmq.newTopic())
    rocketmq.createTopic(t1, queues = 2)
    rocketmq.createTopic(t2, queues = 1)
    val name = tableName()
    withQuery(toMemory(streamTopic(s"$t1,$t2", "startingOffsets" -> "earliest"), name, newDir())) {
      q =>
        rocketmq.sendBodies(t1, Seq("x1", "x2"))
        rocketmq.sendBodies(t2, Seq("y1"))
        q.processAllAvailable()
        assert(memoryBodies(name).sorted === Seq("x1", "x2", "y1"))
        rocketmq.createTopic(t1, queues = 4) // scale out
        rocketmq.sendMessages(t1, Seq(TestMessage("new-queue-1"), TestMessage("new-queue-2")),
          queueId = Some(3))
        q.processAllAvailable()
        val rows = spark.table(name).collect()
        assert(rows.map(_.getString(0)).sorted.toSeq === Seq("new-queue-1", "new-queue-2", "x1",
          "x2", "y1"))
        assert(rows.filter(_.getInt(2) == 3).map(_.getLong(3)).sorted.toSeq === Seq(0L, 1L))
    }
  }

  test("metrics report how far behind the latest offsets the query is") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 1)
    rocketmq.sendBodies(topic, (0 until 100).map(i => s"m$i"))
    val q =
      toMemory(streamTopic(topic, "startingOffsets" -> "earliest", "maxOffsetsPerTrigger" -> "40"),
        tableName(),
        newDir(), Trigger.AvailableNow())
    assert(q.awaitTermination(120000))
    val behind = q.recentProgress.filter(_.numInputRows > 0)
      .map(p => p.sources.head.metrics.asScala.toMap)
    assert(behind.map(_("maxOffsetsBehindLatest")).toSeq === Seq("60", "20", "0"), behind)
    assert(behind.map(_("minOffsetsBehindLatest")).toSeq === Seq("60", "20", "0"))
    assert(behind.head("avgOffsetsBehindLatest").toDouble === 60.0)
  }

  test("tag and SQL92 filters, and the extra columns") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 1)
    rocketmq.sendMessages(topic,
      (0 until 30).map { i =>
        TestMessage(s"m$i", tags = if (i % 2 == 0) "even" else "odd", keys = s"k$i extra$i",
          properties = Map("n" -> i.toString))
      })
    def read(options: (String, String)*): Seq[Row] = {
      val name = tableName()
      val q = streamTopic(topic, ("startingOffsets" -> "earliest") +: options: _*)
        .selectExpr("CAST(body AS STRING) AS body", "*").drop("topic", "flag", "properties")
        .writeStream.format("memory").queryName(name).option("checkpointLocation", newDir())
        .trigger(Trigger.AvailableNow()).start()
      assert(q.awaitTermination(120000))
      spark.table(name).collect().toSeq
    }
    assert(read("subExpression" -> "even").map(_.getString(0)).toSet === (0 until 30 by 2).map(i =>
      s"m$i").toSet)
    assert(read("sqlFilter" -> "n >= 25 AND TAGS = 'odd'").map(_.getString(0)).toSet === Set("m25",
      "m27", "m29"))
    val extra = read("includeExtraColumns" -> "true", "sqlFilter" -> "n = 7").head
    assert(extra.getAs[String]("tags") === "odd")
    assert(extra.getAs[Seq[String]]("keys") === Seq("k7", "extra7"))
    assert(extra.getAs[String]("msgId").nonEmpty)
  }

  test(
    "startingTimestamp and startingOffsetsByTimestamp start at the first message stored at or " +
      "after it") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 2)
    rocketmq.sendBodies(topic, (0 until 40).map(i => s"m$i"))
    val stored =
      readTopic(topic).selectExpr("CAST(body AS STRING)", "queueId", "storeTimestamp").collect()
        .map(r => (r.getString(0), r.getInt(1), r.getTimestamp(2).getTime))
    val cut = stored.map(_._3).sorted.apply(20)
    val expected = stored.filter(_._3 >= cut).map(_._1).toSet
    val name = tableName()
    val q = toMemory(streamTopic(topic, "startingTimestamp" -> cut.toString), name, newDir(),
      Trigger.AvailableNow())
    assert(q.awaitTermination(120000))
    assert(memoryBodies(name).toSet === expected)

    val b = rocketmq.brokerName
    val name2 = tableName()
    val q2 = toMemory(streamTopic(topic,
      "startingOffsetsByTimestamp" -> s"""{"$topic":{"$b":{"0":$cut}}}"""), name2,
      newDir(), Trigger.AvailableNow())
    assert(q2.awaitTermination(120000))
    assert(
      memoryBodies(name2).toSet === stored.filter(s => s._2 == 1 || s._3 >= cut).map(_._1).toSet)

    // A batch query can end by time as well, for all queues or per queue.
    val before = readTopic(topic, "endingTimestamp" -> cut.toString)
    assert(bodies(before).toSet === stored.filter(_._3 < cut).map(_._1).toSet)
    val beforeOnQueue0 =
      readTopic(topic, "endingOffsetsByTimestamp" -> s"""{"$topic":{"$b":{"0":$cut}}}""")
    assert(
      bodies(beforeOnQueue0).toSet === stored.filter(s => s._2 == 1 || s._3 < cut).map(_._1).toSet)
  }

  test(
    "consumerGroup commits each batch's offsets to the broker; without it nothing is committed") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 2)
    rocketmq.sendBodies(topic, (0 until 20).map(i => s"m$i"))
    val group = s"spark-it-group-${topic.takeRight(8)}"
    val q =
      toMemory(streamTopic(topic, "startingOffsets" -> "earliest", "consumerGroup" -> group),
        tableName(), newDir(),
        Trigger.AvailableNow())
    assert(q.awaitTermination(120000))
    val latest = rocketmq.latestOffsets(topic)
    EmbeddedRocketMQ.awaitCondition("the group's committed offsets", 30000) {
      latest.forall { case (queue, max) => rocketmq.committedOffset(group, queue) == max }
    }
    val q2 =
      toMemory(streamTopic(topic, "startingOffsets" -> "earliest"), tableName(), newDir(),
        Trigger.AvailableNow())
    assert(q2.awaitTermination(120000))
    val readerGroup = consumer.RocketMQConsumerPool.readerGroup(spark.sparkContext.applicationId)
    latest.keys.foreach(queue => assert(rocketmq.committedOffset(readerGroup, queue) === -1L))
  }

  test("consumerGroup: a query stopped after a batch leaves that batch's end committed") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 2)
    rocketmq.sendBodies(topic, (0 until 20).map(i => s"m$i"))
    val latest = rocketmq.latestOffsets(topic)
    val group = s"spark-it-stop-${topic.takeRight(8)}"
    // The next trigger is an hour away: after the first batch only the stop can commit its end.
    val q = toMemory(streamTopic(topic, "startingOffsets" -> "earliest", "consumerGroup" -> group),
      tableName(), newDir(), Trigger.ProcessingTime("1 hour"))
    try {
      EmbeddedRocketMQ.awaitCondition("the first batch to be committed", 60000) {
        q.exception.foreach(e => throw e)
        Option(q.lastProgress).exists(_.numInputRows == 20)
      }
    } finally q.stop()
    latest.foreach { case (queue, end) =>
      assert(rocketmq.committedOffset(group, queue) === end, queue)
    }
  }

  test(
    "a checkpoint written by this version (fixture in test resources) restarts where it stopped") {
    // The fixture (see CheckpointFixtureWriter) read offsets 0 to 4 of topic checkpoint-fixture.
    val topic = CheckpointFixtureWriter.Topic
    rocketmq.createTopic(topic, queues = 1)
    val stored = rocketmq.latestOffsets(topic).values.sum.toInt
    rocketmq.sendBodies(topic, (stored until 8).map(i => s"m$i"))
    val checkpoint = Files.createTempDirectory("rocketmq-fixture-")
    val fixture =
      java.nio.file.Paths.get(getClass.getResource(CheckpointFixtureWriter.FixtureResource).toURI)
    CheckpointFixtureWriter.copyTree(fixture, checkpoint)
    val output = newDir()
    val q = CheckpointFixtureWriter.query(spark, rocketmq.nameServer).writeStream.format("json")
      .option("path", output).option("checkpointLocation", checkpoint.toString)
      .trigger(Trigger.AvailableNow()).start()
    assert(q.awaitTermination(120000))
    // (by glob: the sink log of this fresh output directory starts at the resumed batch 1)
    val offsets =
      spark.read.schema("body STRING, queueOffset BIGINT").json(s"$output/part-*").collect().map(
        _.getLong(1))
    assert(offsets.sorted.toSeq === Seq(5L, 6L, 7L))
  }

  test("a topic deleted and recreated: offsets went back; fail, or go on from its first offset") {
    for (failOnDataLoss <- Seq(true, false)) {
      val topic = rocketmq.newTopic()
      rocketmq.createTopic(topic, queues = 1)
      rocketmq.sendBodies(topic, (0 until 10).map(i => s"old$i"))
      val (checkpoint, output) = (newDir(), newDir())
      val q = streamTopic(topic, "startingOffsets" -> "earliest",
        "failOnDataLoss" -> failOnDataLoss.toString)
        .selectExpr("CAST(body AS STRING) AS body").writeStream.format("json")
        .option("path", output).option("checkpointLocation", checkpoint).start()
      try {
        q.processAllAvailable()
        rocketmq.deleteTopic(topic)
        rocketmq.createTopic(topic, queues = 1)
        rocketmq.sendBodies(topic, (0 until 3).map(i => s"new$i"))
        if (failOnDataLoss) {
          val e = intercept[Exception](q.processAllAvailable())
          // The query sees either the topic gone (the name server no longer routes it, or the
          // broker answers that it does not have it), or its offsets gone back (to 0-3: the
          // recreated queue may not hold all three new messages yet), depending on when its trigger
          // falls; both are loss.
          val m = e.getMessage
          assert(m.contains("failOnDataLoss=false"), m)
          assert(m.contains("[ROCKETMQ_DATA_LOSS_QUEUE_GONE]") ||
              "\\[ROCKETMQ_DATA_LOSS.OFFSETS_WENT_BACK\\].*offsets \\[[0-3], 10\\)".r.findFirstIn(
                m).isDefined, m)
        } else {
          q.processAllAvailable()
          val got =
            spark.read.schema("body STRING").json(output).collect().map(_.getString(0)).sorted.toSeq
          assert(got === ((0 until 10).map(i => s"old$i") ++ (0 until 3).map(i => s"new$i")).sorted)
        }
      } finally q.stop()
    }
  }

  test("minPartitions splits a large queue range into pieces read once each") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 1)
    rocketmq.sendBodies(topic, (0 until 100).map(i => s"m$i"))
    val df = readTopic(topic, "minPartitions" -> "8")
    assert(df.rdd.getNumPartitions === 8)
    assert(df.select("queueOffset").collect().map(_.getLong(0)).sorted.toSeq === (0L until 100L))
  }

  test(
    "an open plan (real-time, continuous) whose start names a queue its last look-up lacks looks " +
      "again") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 2)
    val planner = new RocketMQStreamPlanner(
      new RocketMQOptions(Map("nameServer" -> rocketmq.nameServer, "topic" -> topic)), newDir())
    try {
      planner.fetchLatest(Set.empty)
      // The topic scales out after the planner's last look-up; the start (Spark's) already names
      // the new queues.
      rocketmq.createTopic(topic, queues = 4)
      val start = (0 until 4).map(q => RocketMQQueue(topic, rocketmq.brokerName, q) -> 0L).toMap
      val plan = planner.planOpen(RocketMQSourceOffset(start), refetch = false)
      assert(plan.queues.toSet === start.keySet)
    } finally planner.close()
  }
}
