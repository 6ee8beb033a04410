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

import java.sql.Timestamp

import com.fasterxml.jackson.databind.ObjectMapper

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.execution.FilterExec
import org.apache.spark.sql.execution.datasources.v2.BatchScanExec
import org.apache.spark.sql.functions.col

class RocketMQBatchReadSuite extends RocketMQSparkSuiteBase {

  test("short name and class name both read every message of a topic, one partition per queue") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 4)
    val sent = (0 until 40).map(i => s"m$i")
    rocketmq.sendBodies(topic, sent)

    assert(bodies(readTopic(topic)).sorted === sent.sorted)
    val byClassName = spark.read.format("org.apache.spark.sql.rocketmq.RocketMQSourceProvider")
      .option("nameServer", rocketmq.nameServer).option("topic", topic).load()
    assert(bodies(byClassName).sorted === sent.sorted)
    assert(readTopic(topic).rdd.getNumPartitions === 4)
  }

  test("schema and every column hold the message's fields") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 1)
    val before = System.currentTimeMillis()
    val result = rocketmq.sendMessages(topic,
      Seq(TestMessage("hello", tags = "tagA", keys = "k1",
        properties = Map("color" -> "red", "q\"uote" -> "a\nb"))))
    val df = readTopic(topic)
    assert(df.schema === RocketMQSourceSchema.schema)
    assert(df.columns.toSeq === Seq("topic", "flag", "body", "properties", "brokerName", "queueId",
      "queueOffset",
      "bornTimestamp", "storeTimestamp"))

    val rows = df.collect()
    assert(rows.length === 1)
    val row = rows.head
    assert(row.getAs[String]("topic") === topic)
    assert(row.getAs[Int]("flag") === 0)
    assert(new String(row.getAs[Array[Byte]]("body"), "UTF-8") === "hello")
    assert(row.getAs[String]("brokerName") === rocketmq.brokerName)
    assert(row.getAs[Int]("queueId") === 0)
    assert(row.getAs[Long]("queueOffset") === result.head.getQueueOffset)
    val born = row.getAs[Timestamp]("bornTimestamp").getTime
    val stored = row.getAs[Timestamp]("storeTimestamp").getTime
    assert(born >= before - 1000 && born <= System.currentTimeMillis())
    assert(stored >= born - 1000 && stored <= System.currentTimeMillis())

    val properties = new ObjectMapper().readTree(row.getAs[String]("properties"))
    assert(properties.get("color").asText() === "red")
    assert(properties.get("q\"uote").asText() === "a\nb")
    assert(properties.get("TAGS").asText() === "tagA")
    assert(properties.get("KEYS").asText() === "k1")
    assert(!properties.has("MIN_OFFSET") && !properties.has("MAX_OFFSET"), properties.toString)
  }

  test(
    "JSON starting and ending offsets read exactly [start, end) of each queue; -2 and -1 resolve") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 2)
    rocketmq.sendMessages(topic, (0 until 10).map(i => TestMessage(s"a$i")), queueId = Some(0))
    rocketmq.sendMessages(topic, (0 until 10).map(i => TestMessage(s"b$i")), queueId = Some(1))
    val b = rocketmq.brokerName
    val df = readTopic(topic,
      "startingOffsets" -> s"""{"$topic":{"$b":{"0":3,"1":-2}}}""",
      "endingOffsets" -> s"""{"$topic":{"$b":{"0":7,"1":-1}}}""")
    val rows =
      df.select("queueId", "queueOffset").collect().map(r => (r.getInt(0), r.getLong(1))).toSet
    assert(rows === ((3L until 7L).map(o => (0, o)) ++ (0L until 10L).map(o => (1, o))).toSet)
    assert(
      bodies(df).toSet === ((3 until 7).map(i => s"a$i") ++ (0 until 10).map(i => s"b$i")).toSet)
  }

  test("queues missing from JSON offsets default to earliest / latest") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 2)
    rocketmq.sendMessages(topic, (0 until 5).map(i => TestMessage(s"a$i")), queueId = Some(0))
    rocketmq.sendMessages(topic, (0 until 5).map(i => TestMessage(s"b$i")), queueId = Some(1))
    val df =
      readTopic(topic, "startingOffsets" -> s"""{"$topic":{"${rocketmq.brokerName}":{"0":4}}}""")
    assert(bodies(df).toSet === Set("a4", "b0", "b1", "b2", "b3", "b4"))
  }

  test("a batch reads what existed when it was planned, not what arrives while it runs") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 1)
    rocketmq.sendBodies(topic, Seq("x0", "x1"))
    val b = rocketmq.brokerName
    val df = readTopic(topic, "endingOffsets" -> s"""{"$topic":{"$b":{"0":1}}}""")
    rocketmq.sendBodies(topic, Seq("x2"))
    assert(bodies(df) === Seq("x0"))
  }

  test("a tag filter yields only matching messages and is not mistaken for data loss") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 1)
    val messages = (0 until 300).map(i =>
      TestMessage(s"m$i", tags = if (i % 3 == 0) "keep" else "drop"))
    rocketmq.sendMessages(topic, messages)
    rocketmq.sendMessages(topic, (0 until 50).map(i => TestMessage(s"tail$i", tags = "drop")))
    val expected = (0 until 300).filter(_ % 3 == 0).map(i => s"m$i")
    assert(bodies(readTopic(topic, "subExpression" -> "keep", "pullBatchSize" -> "7")).sorted ===
      expected.sorted)
    assert(bodies(readTopic(topic, "subExpression" -> "keep || other")).sorted === expected.sorted)
    assert(readTopic(topic, "subExpression" -> "none").count() === 0)
  }

  test("several topics in one read, and a pull batch smaller than the range") {
    val (t1, t2) = (rocketmq.newTopic(), rocketmq.newTopic())
    rocketmq.createTopic(t1, queues = 3)
    rocketmq.createTopic(t2, queues = 1)
    rocketmq.sendBodies(t1, (0 until 100).map(i => s"one$i"))
    rocketmq.sendBodies(t2, (0 until 10).map(i => s"two$i"))
    val df = readTopic(s"$t1,$t2", "pullBatchSize" -> "3")
    assert(bodies(df).sorted ===
      ((0 until 100).map(i => s"one$i") ++ (0 until 10).map(i => s"two$i")).sorted)
    assert(df.select("topic").distinct().collect().map(_.getString(0)).toSet === Set(t1, t2))
  }

  test("an empty topic reads as an empty DataFrame") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 2)
    assert(readTopic(topic).count() === 0)
  }

  test("an SQL92 filter selects by property; one RocketMQ cannot compile is refused, not ignored") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 2)
    rocketmq.sendMessages(topic,
      (0 until 100).map(i => TestMessage(s"m$i", properties = Map("seq" -> i.toString))))
    assert(bodies(readTopic(topic, "sqlFilter" -> "seq >= 60")).sorted === (60 until 100).map(i =>
      s"m$i").sorted)
    // The broker itself answers such a filter with every message (it cannot compile it, and a
    // filter it has not compiled matches all): the connector refuses it before any pull.
    for (bad <- Seq("seq >>> 5", "seq >= 'x'")) {
      val m = errorMessage(readTopic(topic, "sqlFilter" -> bad).collect())
      assert(m.contains("ROCKETMQ_INVALID_OPTION_VALUE.SQL92") && m.contains("'sqlFilter'") &&
          m.contains(s"'$bad'"), m)
    }
  }

  test(
    "reads pull as a consumer group of this Spark application, not one every application shares") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 1)
    rocketmq.sendMessages(topic, Seq(TestMessage("a", properties = Map("n" -> "1"))))
    // A filtered read makes the pulling client report its group to the broker at once.
    assert(bodies(readTopic(topic, "sqlFilter" -> "n = 1")) === Seq("a"))
    val group = consumer.RocketMQConsumerPool.readerGroup(spark.sparkContext.applicationId)
    assert(group === s"spark-rocketmq-reader-${spark.sparkContext.applicationId}")
    val consumers = rocketmq.brokerController.getConsumerManager
    assert(consumers.getConsumerGroupInfo(group) != null, s"$group is not registered")
    assert(consumers.getConsumerGroupInfo("spark-rocketmq-reader") == null)
  }

  /**
   * The scan Spark planned for `df`: its description, the partitions it reads, and whether a filter
   * is left above.
   */
  private def plannedScan(df: DataFrame): (String, Seq[RocketMQInputPartition], Boolean) = {
    val plan = df.queryExecution.sparkPlan
    val scan = plan.collect { case b: BatchScanExec => b.scan }.head
    val partitions =
      scan.toBatch.planInputPartitions().toSeq.map(_.asInstanceOf[RocketMQInputPartition])
    (scan.description(), partitions, plan.collect { case f: FilterExec => f }.nonEmpty)
  }

  test(
    "a store-time window is read by offsets: only its messages, filters reported pushed, the " +
      "size estimated") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 2)
    def storeTimes() =
      readTopic(topic).select("storeTimestamp").collect().map(_.getTimestamp(0).getTime)
    def sendAfter(prefix: String, afterMs: Long): Long = {
      EmbeddedRocketMQ.awaitCondition(s"the clock past $afterMs", 5000)(
        System.currentTimeMillis() > afterMs)
      rocketmq.sendBodies(topic, (0 until 20).map(i => s"$prefix$i"))
      storeTimes().max
    }
    val early = sendAfter("early-", 0L)
    val middle = sendAfter("middle-", early)
    sendAfter("late-", middle)
    val (from, until) = (new Timestamp(early + 1), new Timestamp(middle + 1))

    val window =
      readTopic(topic).where(col("storeTimestamp") >= from && col("storeTimestamp") < until)
    assert(bodies(window).sorted === (0 until 20).map(i => s"middle-$i").sorted)
    val (description, partitions, filterLeft) = plannedScan(window)
    assert(!filterLeft, window.queryExecution.sparkPlan)
    assert(description.contains("pushedFilters=[") && description.contains("storeTimestamp >= "),
      description)
    assert(partitions.map(p => p.untilOffset - p.fromOffset).sum === 20, partitions)
    assert(window.queryExecution.optimizedPlan.stats.rowCount === Some(BigInt(20)))
    assert(readTopic(topic).queryExecution.optimizedPlan.stats.rowCount === Some(BigInt(60)))

    val upTo = readTopic(topic).where(col("storeTimestamp") <= new Timestamp(early))
    assert(bodies(upTo).sorted === (0 until 20).map(i => s"early-$i").sorted)
    assert(readTopic(topic).where(
      col("storeTimestamp") > new Timestamp(System.currentTimeMillis() + 60000)).count()
      === 0)
    // A producer whose clock runs a minute ahead: its message is stored before it was "born".
    // Unless the user allows for that skew (producerClockSkewMs), a born time does not narrow the
    // read: the message is there.
    val ahead = rocketmq.sendBornAt(topic, "ahead", System.currentTimeMillis() + 60000)
    val bornAfter = new Timestamp(System.currentTimeMillis() + 30000)
    val aheadRead = readTopic(topic).where(col("bornTimestamp") >= bornAfter)
    assert(bodies(aheadRead) === Seq("ahead"), ahead)
    val (plainDescription, _, plainFilterLeft) = plannedScan(aheadRead)
    assert(plainFilterLeft && !plainDescription.contains("from bornTimestamp"), plainDescription)
    val skewed =
      spark.read.format("rocketmq").option("nameServer", rocketmq.nameServer).option("topic", topic)
        .option("producerClockSkewMs", "120000").load()
    assert(bodies(skewed.where(col("bornTimestamp") >= bornAfter)) === Seq("ahead"))
    // With a skew allowed, a born time narrows (Spark checks it again, and the answer is the same).
    val born = skewed.where(col("bornTimestamp") >= from)
    assert(bodies(born).count(_.startsWith("early-")) === 0 && bodies(born).size === 41)
    val (bornDescription, _, bornFilterLeft) = plannedScan(born)
    assert(
      bornFilterLeft && bornDescription.contains("(from bornTimestamp, less producerClockSkewMs)"),
      bornDescription)
  }

  test(
    "filters on topic, brokerName, queueId, queueOffset and tags prune queues and ranges; LIMIT " +
      "caps each task") {
    val (a, b) = (rocketmq.newTopic(), rocketmq.newTopic())
    rocketmq.createTopic(a, queues = 4)
    rocketmq.createTopic(b, queues = 2)
    for (q <- 0 until 4) {
      rocketmq.sendMessages(a,
        (0 until 10).map(i => TestMessage(s"a$q-$i", tags = Seq("paid", "shipped", "lost")(i % 3))),
        queueId = Some(q))
    }
    rocketmq.sendMessages(b, (0 until 10).map(i => TestMessage(s"b$i")), queueId = Some(0))
    val both = readTopic(s"$a,$b", "includeExtraColumns" -> "true")

    val pruned =
      both.where(col("topic") === a && col("queueId").isin(1, 3) && col("queueOffset") >= 2 &&
        col("queueOffset") < 5 && col("brokerName") === rocketmq.brokerName)
    assert(bodies(pruned).sorted === (for (q <- Seq(1, 3); i <- 2 until 5) yield s"a$q-$i").sorted)
    val (_, prunedPartitions, prunedFilterLeft) = plannedScan(pruned)
    assert(!prunedFilterLeft)
    assert(prunedPartitions.map(p => (p.queue.queueId, p.fromOffset, p.untilOffset)).sorted ===
      Seq((1, 2L, 5L), (3, 2L, 5L)))
    assert(both.where(col("brokerName") === "no-such-broker").count() === 0)
    assert(plannedScan(both.where(col("topic") === "no-such-topic"))._2.isEmpty)

    val tagged = both.where(col("tags").isin("paid", "lost"))
    assert(bodies(tagged).sorted ===
      (for (q <- 0 until 4; i <- 0 until 10 if i % 3 != 1) yield s"a$q-$i").sorted)
    val (tagDescription, tagPartitions, tagFilterLeft) = plannedScan(tagged)
    assert(!tagFilterLeft && tagDescription.contains("tags IN (lost, paid)"), tagDescription)
    assert(tagPartitions.map(_.settings.subExpression).distinct === Seq("lost || paid"))
    assert(readTopic(a, "includeExtraColumns" -> "true", "subExpression" -> "shipped").where(
      col("tags") === "paid")
      .count() === 0)

    val limited = both.limit(3)
    assert(limited.collect().length === 3)
    val (limitDescription, limitPartitions, _) = plannedScan(limited)
    assert(limitDescription.contains("limit 3"), limitDescription)
    assert(limitPartitions.forall(p => p.untilOffset - p.fromOffset <= 3 && p.maxRows == 3),
      limitPartitions)
  }
}
