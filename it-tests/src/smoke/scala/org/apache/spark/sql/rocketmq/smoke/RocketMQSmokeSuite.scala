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

package org.apache.spark.sql.rocketmq.smoke

import java.nio.file.Files

import scala.util.control.NonFatal

import org.apache.spark.sql.{DataFrame, ForeachWriter, Row, SparkSession}
import org.apache.spark.sql.functions.{col, concat, lit}
import org.apache.spark.sql.streaming.Trigger

/**
 * The Scala smoke suite of the compatibility matrix: batch and streaming reads and writes,
 * AvailableNow, a restart from a checkpoint and the error paths, through the public DataFrame API
 * only, so that one build runs on every Spark of a line (it is compiled against Spark 4.2 and run
 * on 4.0, 4.1 and 4.3; the Scala 2.12 and 2.13 builds against Spark 3.5.0 run on the Spark 3.5 they
 * are given). python/tests/test_scala_smoke.py submits it with the connector jar the Python package
 * chooses for that Spark, against topics it created.
 *
 * Arguments: name server, then three existing topics (source, copy, stream) and, for Spark 4.3's
 * stateful real-time checks, four more of one queue each (a source and a target for dropDuplicates,
 * then for transformWithState: the Spark 4 build's [[RocketMQSmokeTransformWithState]], loaded by
 * name). Prints one line per check (`ok - name (time)` or `FAILED - name: why`), then `smoke: Spark
 * <version>, Scala <version>: N passed, M failed`, and exits with 1 when any check failed.
 */
object RocketMQSmokeSuite {
  private val Rows = 200
  private val MoreRows = 50

  /**
   * `Trigger.RealTime("10 minutes")` where Spark has real-time mode (4.1 and later); by reflection,
   * as 3.5 lacks it.
   */
  private def realTimeTrigger: Option[Trigger] =
    try Some(classOf[Trigger].getMethod("RealTime", classOf[String]).invoke(null,
        "10 minutes").asInstanceOf[Trigger])
    catch { case _: NoSuchMethodException => None }

  /** Spark 4.3 and later run stateful operators (aggregations, deduplication) in real-time mode. */
  private def statefulRealTime(sparkVersion: String): Boolean = {
    val Array(major, minor) = sparkVersion.split("[.-]").take(2).map(_.toInt)
    major > 4 || (major == 4 && minor >= 3)
  }

  def main(args: Array[String]): Unit = {
    require(args.length == 4 || args.length == 8,
      "usage: RocketMQSmokeSuite NAME_SERVER SOURCE_TOPIC COPY_TOPIC STREAM_TOPIC " +
        "[DEDUP_SOURCE DEDUP_TARGET STATE_SOURCE STATE_TARGET]")
    val Array(nameServer, source, copy, stream) = args.take(4)
    val spark = SparkSession.builder().appName("rocketmq-smoke").getOrCreate()
    val suite = new RocketMQSmokeSuite(spark, nameServer)
    val checks = Seq[(String, () => Unit)](
      "batch write, then batch read: every row once with its body, tags, keys and queue" ->
        (() => suite.batchWriteAndRead(source)),
      "AvailableNow from one topic into another: every row once, then only what came after the " +
        "checkpoint" ->
        (() => suite.availableNowCopyAndRestart(source, copy)),
      "a streaming query into a memory sink sees rows written while it runs" ->
        (() => suite.continuousRead(stream)),
      "a missing nameServer fails naming the option" -> (() => suite.missingNameServer(source)),
      "a bad startingOffsets fails naming the option, the value and what is allowed" ->
        (() => suite.badStartingOffsets(source)),
      "a write without a body column fails naming the column" ->
        (() => suite.writeWithoutBody(source))
    ) ++ RocketMQSmokeSuite.realTimeTrigger.toSeq.map { trigger =>
      "real time (Spark 4.1+): rows reach a foreach sink while the batch runs" ->
        (() => suite.realTime(stream, trigger))
    } ++
      RocketMQSmokeSuite.realTimeTrigger.filter(_ =>
        statefulRealTime(spark.version) && args.length == 8).toSeq
        .flatMap { trigger =>
          Seq(
            "stateful real time (Spark 4.3+): dropDuplicates into RocketMQ, each body once, sent " +
              "while the batch runs" ->
              (() => suite.dropDuplicatesInRealTime(args(4), args(5), trigger)),
            "stateful real time (Spark 4.3+): transformWithState counts per key into RocketMQ " +
              "while the batch runs" ->
              (() => suite.transformWithStateInRealTime(args(6), args(7), trigger)))
        }
    val results = checks.map { case (name, check) =>
      val started = System.nanoTime()
      val failure =
        try { check(); None }
        catch { case NonFatal(e) => Some(e) }
      failure match {
        case None => println(s"ok - $name (${(System.nanoTime() - started) / 1000000} ms)")
        case Some(e) =>
          println(s"FAILED - $name: $e")
          e.printStackTrace(System.out)
      }
      failure.isEmpty
    }
    val failed = results.count(!_)
    println(s"smoke: Spark ${spark.version}, Scala ${scala.util.Properties.versionNumberString}: " +
      s"${results.size - failed} passed, $failed failed")
    spark.stop()
    if (failed > 0) sys.exit(1)
  }
}

private final class RocketMQSmokeSuite(spark: SparkSession, nameServer: String) {
  import spark.implicits._

  private def check(condition: Boolean, what: => String): Unit =
    if (!condition) throw new AssertionError(what)

  private def rows(from: Int, until: Int): DataFrame =
    spark.range(from, until).select(concat(lit("smoke-"), col("id").cast("string")).as("body"),
      (col("id") % 2).cast("string").as("tags"), col("id").cast("string").as("keys"))

  private def readAll(topic: String): DataFrame =
    spark.read.format("rocketmq").option("nameServer", nameServer).option("topic", topic)
      .option("includeExtraColumns", "true").load()

  private def bodies(topic: String): Seq[String] =
    readAll(topic).selectExpr("CAST(body AS STRING)").as[String].collect().toSeq

  def batchWriteAndRead(topic: String): Unit = {
    rows(0, RocketMQSmokeSuite.Rows).write.format("rocketmq").option("nameServer", nameServer)
      .option("topic", topic).save()
    val read = readAll(topic).selectExpr("CAST(body AS STRING) AS body", "tags", "keys", "queueId",
      "queueOffset")
      .as[(String, String, Seq[String], Int, Long)].collect().toSeq
    check(read.size == RocketMQSmokeSuite.Rows,
      s"read ${read.size} rows, wrote ${RocketMQSmokeSuite.Rows}")
    val expected = (0 until RocketMQSmokeSuite.Rows).map(i =>
      (s"smoke-$i", (i % 2).toString, Seq(i.toString)))
    val got = read.map { case (body, tags, keys, _, _) => (body, tags, keys) }
    check(got.sortBy(_._1) == expected.sortBy(_._1), s"rows differ: ${got.sortBy(_._1).take(5)}")
    val offsets = read.groupBy(_._4).values.map(_.map(_._5).sorted)
    check(offsets.forall(o => o == o.indices.map(_.toLong)),
      s"offsets per queue are not 0..n-1: $offsets")
  }

  def availableNowCopyAndRestart(source: String, copy: String): Unit = {
    val checkpoint = Files.createTempDirectory("rocketmq-smoke-checkpoint").toString
    def runOnce(): Unit = {
      val query = spark.readStream.format("rocketmq").option("nameServer", nameServer).option(
        "topic", source)
        .option("startingOffsets", "earliest").option("includeExtraColumns", "true").load()
        .selectExpr("body", "tags")
        .writeStream.format("rocketmq").option("nameServer", nameServer).option("topic", copy)
        .option("checkpointLocation", checkpoint).trigger(Trigger.AvailableNow()).start()
      query.awaitTermination()
      query.exception.foreach(e => throw e)
    }
    runOnce()
    val first = bodies(copy)
    check(first.sorted == (0 until RocketMQSmokeSuite.Rows).map(i => s"smoke-$i").sorted,
      s"the copy holds ${first.size} rows (${first.distinct.size} distinct), not the " +
        s"${RocketMQSmokeSuite.Rows}")
    val all = RocketMQSmokeSuite.Rows + RocketMQSmokeSuite.MoreRows
    rows(RocketMQSmokeSuite.Rows, all).write.format("rocketmq").option("nameServer", nameServer)
      .option("topic", source).save()
    runOnce()
    val second = bodies(copy)
    check(second.sorted == (0 until all).map(i => s"smoke-$i").sorted,
      s"after the restart the copy holds ${second.size} rows (${second.distinct.size} distinct), " +
        s"not $all")
  }

  def continuousRead(topic: String): Unit = {
    val query =
      spark.readStream.format("rocketmq").option("nameServer", nameServer).option("topic", topic)
        .option("startingOffsets", "earliest").load().selectExpr("CAST(body AS STRING) AS body")
        .writeStream.format("memory").queryName("rocketmq_smoke_stream").start()
    try {
      query.processAllAvailable()
      rows(0, 30).write.format("rocketmq").option("nameServer", nameServer).option("topic",
        topic).save()
      query.processAllAvailable()
      val got = spark.table("rocketmq_smoke_stream").as[String].collect().toSeq.sorted
      check(got == (0 until 30).map(i => s"smoke-$i").sorted,
        s"the memory sink holds ${got.size} rows: $got")
      val inputRows = query.recentProgress.map(_.numInputRows).sum
      check(inputRows == 30, s"progress counts $inputRows input rows, not 30")
    } finally query.stop()
  }

  /**
   * Rows sent while a real-time batch of 10 minutes runs reach a foreach sink before it ends. The
   * batch holds a core per queue of `topic` (two) for all its 10 minutes: the batch write that
   * sends the rows needs a third.
   */
  def realTime(topic: String, trigger: Trigger): Unit = {
    val slots = spark.sparkContext.defaultParallelism
    check(slots >= 3,
      s"the real-time check needs 3 task slots (2 held by the batch, 1 for the write), not $slots")
    val query =
      spark.readStream.format("rocketmq").option("nameServer", nameServer).option("topic", topic)
        .option("startingOffsets", "earliest").load()
        .selectExpr("CAST(body AS STRING) AS body").writeStream.outputMode("update")
        .foreach(new RocketMQSmokeSink).trigger(trigger).start()
    try {
      // The topic holds smoke-0 to smoke-29 already (continuousRead); these come while the batch
      // runs.
      rows(100, 110).write.format("rocketmq").option("nameServer", nameServer).option("topic",
        topic).save()
      if (!RocketMQSmokeSink.awaitAtLeast(40, timeoutMs = 120000))
        query.exception.foreach(e => throw e)
      val got = RocketMQSmokeSink.bodies.sorted
      val expected = ((0 until 30) ++ (100 until 110)).map(i => s"smoke-$i").sorted
      check(got == expected, s"the foreach sink holds ${got.size} rows: $got")
      check(query.lastProgress == null, "a batch ended before its 10 minutes")
    } finally query.stop()
  }

  /**
   * Spark 4.3's stateful real-time mode: a query that drops duplicate bodies writes into RocketMQ
   * after its shuffle, in a task that reads nothing from RocketMQ. Each body (sent twice, in order,
   * into a one-queue topic) reaches the target once, while the batch of 10 minutes runs: the sink
   * sends each row as it comes under that trigger.
   */
  def dropDuplicatesInRealTime(source: String, target: String, trigger: Trigger): Unit = {
    val sent = (0 until 20).flatMap(i => Seq(s"dup-$i", s"dup-$i")) ++ Seq("dup-end", "dup-end")
    val got =
      statefulCopy(source, target, trigger, _.dropDuplicates("body"), sent, "dup-end").sorted
    check(got == ((0 until 20).map(i => s"dup-$i") :+ "dup-end").sorted,
      s"the target holds ${got.size} rows: $got")
  }

  /**
   * transformWithState (a processor of the Spark 4 build keeping a count per body in a value state,
   * on RocksDB) in Spark 4.3's real-time mode: each count goes out as it changes; the last count
   * per key is the number sent.
   */
  def transformWithStateInRealTime(source: String, target: String, trigger: Trigger): Unit = {
    val transform =
      Class.forName("org.apache.spark.sql.rocketmq.smoke.RocketMQSmokeTransformWithState")
        .getDeclaredConstructor().newInstance().asInstanceOf[DataFrame => DataFrame]
    val sent = Seq.fill(5)("k-a") ++ Seq.fill(3)("k-b") ++ Seq("k-c", "k-end")
    val stateStore = "spark.sql.streaming.stateStore.providerClass" ->
      "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
    val got = statefulCopy(source, target, trigger, transform, sent, "k-end:1", Seq(stateStore))
    val last = got.map(_.split(":")).groupBy(_(0)).map { case (key, counts) =>
      key -> counts.map(_(1).toInt).max
    }
    check(last == Map("k-a" -> 5, "k-b" -> 3, "k-c" -> 1, "k-end" -> 1),
      s"the last counts are $last (of $got)")
  }

  /**
   * Runs `transform` of the bodies of `source` into `target` under the real-time `trigger`, on one
   * shuffle partition, sends `sent` into `source` in order and returns what `target` holds once it
   * holds `marker`, while the batch of 10 minutes still runs (rows that waited for its end would
   * fail). The batch holds two cores (the source's one queue, the one shuffle partition) while the
   * batch write that sends the rows needs a third.
   */
  private def statefulCopy(source: String, target: String, trigger: Trigger,
      transform: DataFrame => DataFrame,
      sent: Seq[String], marker: String, extraSettings: Seq[(String, String)] = Nil)
      : Seq[String] = {
    val settings = Seq("spark.sql.streaming.realTimeMode.allowlistCheck" -> "false",
      "spark.sql.shuffle.partitions" -> "1") ++ extraSettings
    val before = settings.map { case (key, _) => key -> spark.conf.getOption(key) }
    settings.foreach { case (key, value) => spark.conf.set(key, value) }
    val query =
      try {
        transform(spark.readStream.format("rocketmq").option("nameServer", nameServer).option(
          "topic", source)
          .option("startingOffsets", "earliest").load().selectExpr("CAST(body AS STRING) AS body"))
          .writeStream.outputMode("update").format("rocketmq").option("nameServer", nameServer)
          .option("topic", target).option("asyncProgressTrackingEnabled", "false")
          .option("checkpointLocation",
            Files.createTempDirectory("rocketmq-smoke-stateful").toString)
          .trigger(trigger).start()
      } finally before.foreach { case (key, value) =>
          value.fold(spark.conf.unset(key))(spark.conf.set(key, _))
        }
    try {
      sent.toDF("body").coalesce(1).write.format("rocketmq").option("nameServer", nameServer)
        .option("topic", source).save()
      // One queue, read in order, one shuffle partition: once the marker is stored, every row
      // before it is.
      waitUntil(120000L)(bodies(target).contains(marker) || !query.isActive)
      query.exception.foreach(e => throw e)
      check(query.lastProgress == null,
        "a batch ended before its 10 minutes: rows may have waited for its end")
      bodies(target)
    } finally query.stop()
  }

  /**
   * Polls `condition` until it holds or `timeoutMs` passes (the caller's checks then say what is
   * missing).
   */
  private def waitUntil(timeoutMs: Long)(condition: => Boolean): Unit = {
    val deadline = System.nanoTime() + timeoutMs * 1000000L
    while (!condition && System.nanoTime() < deadline) {
      java.util.concurrent.locks.LockSupport.parkNanos(200L * 1000 * 1000) // poll interval
    }
  }

  /** The error `action` fails with: its message and those of its causes. */
  private def failureText(action: => Unit): String = {
    val error =
      try { action; None }
      catch { case NonFatal(e) => Some(e) }
    check(error.isDefined, "no error")
    Iterator.iterate[Throwable](error.get)(_.getCause).takeWhile(_ != null).map(e =>
      s"$e").mkString("\n")
  }

  def missingNameServer(topic: String): Unit = {
    val text = failureText(spark.read.format("rocketmq").option("topic", topic).load().collect())
    check(text.contains("ROCKETMQ_MISSING_OPTION") && text.contains("nameServer"), text)
  }

  def badStartingOffsets(topic: String): Unit = {
    val text = failureText(spark.read.format("rocketmq").option("nameServer", nameServer).option(
      "topic", topic)
      .option("startingOffsets", "sideways").load().collect())
    check(text.contains("ROCKETMQ_INVALID_OPTION_VALUE") && text.contains("startingOffsets") &&
        text.contains("sideways") && text.contains("earliest"), text)
  }

  def writeWithoutBody(topic: String): Unit = {
    val text =
      failureText(spark.range(3).selectExpr("CAST(id AS STRING) AS tags").write.format("rocketmq")
        .option("nameServer", nameServer).option("topic", topic).save())
    check(text.contains("ROCKETMQ_MISSING_COLUMN") && text.contains("body"), text)
  }
}

/**
 * A foreach sink collecting bodies in the driver's JVM (the smoke suite runs on a local master).
 */
private final class RocketMQSmokeSink extends ForeachWriter[Row] {
  override def open(partitionId: Long, epochId: Long): Boolean = true
  override def process(row: Row): Unit = RocketMQSmokeSink.add(row.getString(0))
  override def close(errorOrNull: Throwable): Unit = ()
}

private object RocketMQSmokeSink {
  private val received = scala.collection.mutable.ArrayBuffer.empty[String]

  def add(body: String): Unit = synchronized { received += body; notifyAll() }

  def bodies: Seq[String] = synchronized(received.toList)

  /**
   * Waits, woken by each row, until the sink holds `count` rows; false if `timeoutMs` passes first.
   */
  def awaitAtLeast(count: Int, timeoutMs: Long): Boolean = synchronized {
    val deadline = System.nanoTime() + timeoutMs * 1000000L
    while (received.size < count && deadline - System.nanoTime() > 0) {
      wait(math.max(1L, (deadline - System.nanoTime()) / 1000000L))
    }
    received.size >= count
  }
}
