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

import java.io.File
import java.nio.charset.StandardCharsets
import java.nio.file.Files
import java.util.UUID
import java.util.concurrent.{CountDownLatch, Executors, ExecutorService}

import scala.jdk.CollectionConverters._

import org.apache.rocketmq.client.producer.{LocalTransactionState, TransactionListener}
import org.apache.rocketmq.common.message.{Message, MessageExt}
import org.apache.rocketmq.remoting.netty.NettyRemotingClient

import org.apache.spark.TaskContext
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.functions.udf
import org.apache.spark.sql.rocketmq.common.RocketMQConnection
import org.apache.spark.sql.rocketmq.transaction.RocketMQTransactionRuns
import org.apache.spark.sql.streaming.Trigger

/**
 * deliveryGuarantee=exactly_once against the real broker: what an independent consumer (the plain
 * pull client, which sees committed messages only) finds after jobs that succeed, fail half-way, or
 * that Spark runs again after a restart. Each case also runs at-least-once where that shows the
 * difference, so the test fails if the option stops doing anything.
 */
class RocketMQExactlyOnceSuite extends RocketMQSparkSuiteBase {
  import testImplicits._

  private def body(m: MessageExt): String = new String(m.getBody, StandardCharsets.UTF_8)

  private def newDir(): String = Files.createTempDirectory("rocketmq-eo-").toString

  private def write(df: DataFrame, topic: String, guarantee: String): Unit =
    df.write.format("rocketmq").option("nameServer", rocketmq.nameServer).option("topic", topic)
      .option("deliveryGuarantee", guarantee).save()

  test("a batch write: every row once, and keyed rows in order on their queue") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 4)
    val rows = (0 until 400).map(i => (f"$i%04d", s"key-${i % 5}"))
    write(rows.toDF("body", "shardingKey").repartition(3), topic, "exactly_once")
    val stored = rocketmq.readAll(topic)
    assert(stored.map(body).sorted === rows.map(_._1).sorted)
    // Each committed message still says which run, epoch, partition and attempt sent it.
    assert(stored.forall(m =>
      Option(m.getProperty("spark.rocketmq.txn")).exists(_.split('/').length == 5)))
    val keyed = Seq.tabulate(200)(i => (f"$i%04d", s"key-${i % 7}"))
    val orderTopic = rocketmq.newTopic()
    rocketmq.createTopic(orderTopic, queues = 8)
    write(keyed.toDF("body", "shardingKey").coalesce(1), orderTopic, "exactly_once")
    val byBody = rocketmq.readAll(orderTopic).map(m => body(m) -> m).toMap
    assert(byBody.size === keyed.size)
    keyed.groupBy(_._2).foreach { case (key, rs) =>
      val messages = rs.map(r => byBody(r._1))
      assert(messages.map(_.getQueueId).distinct.size === 1, s"$key spread over queues")
      assert(messages.map(_.getQueueOffset) === messages.map(_.getQueueOffset).sorted,
        s"$key out of order")
    }
  }

  test(
    "a batch job that fails after some tasks succeeded leaves nothing visible (at-least-once " +
      "leaves them)") {
    val failLastPartition = udf { (s: String) =>
      if (TaskContext.getPartitionId() == 3)
        throw new IllegalStateException("task 3 fails on purpose")
      s
    }
    def failingJob(topic: String, guarantee: String): String = {
      rocketmq.createTopic(topic, queues = 2)
      // Partitions 0-2 succeed and send everything; 3 fails once it has waited for them (one task
      // at a time).
      val df = (0 until 400).toDF("i").repartition(4, $"i")
        .selectExpr("CAST(i AS STRING) AS body").select(failLastPartition($"body").as("body"))
      errorMessage(spark.createDataFrame(df.rdd.coalesce(4, shuffle = false),
        df.schema).sortWithinPartitions("body")
        .write.format("rocketmq").option("nameServer", rocketmq.nameServer).option("topic", topic)
        .option("deliveryGuarantee", guarantee).save())
    }
    val (once, atLeast) = (rocketmq.newTopic(), rocketmq.newTopic())
    assert(failingJob(atLeast, "at_least_once").contains("task 3 fails on purpose"))
    assert(rocketmq.readAll(atLeast).nonEmpty,
      "the control write should have left its successful tasks' rows")
    assert(failingJob(once, "exactly_once").contains("task 3 fails on purpose"))
    assert(rocketmq.readAll(once).isEmpty)
  }

  test(
    "a micro-batch that Spark runs again after a restart is not committed twice (at-least-once " +
      "duplicates)") {
    var lastRuns = Set.empty[String]
    def writeTwice(guarantee: String): Seq[String] = {
      val (in, out) = (rocketmq.newTopic(), rocketmq.newTopic())
      rocketmq.createTopic(in, queues = 2)
      rocketmq.createTopic(out, queues = 2)
      rocketmq.sendBodies(in, (0 until 300).map(i => s"m$i"))
      val checkpoint = newDir()
      /**
       * Runs the query to the end of its input: the micro-batches with rows, and the sink's last
       * metrics.
       */
      def run(): (Int, Map[String, String]) = {
        val q = streamTopic(in, "startingOffsets" -> "earliest", "maxOffsetsPerTrigger" -> "100")
          .selectExpr("body").writeStream.format("rocketmq").option("nameServer",
            rocketmq.nameServer)
          .option("topic", out).option("deliveryGuarantee", guarantee).option("checkpointLocation",
            checkpoint)
          .trigger(Trigger.AvailableNow()).start()
        assert(q.awaitTermination(120000))
        assert(q.exception.isEmpty, q.exception)
        // One transaction run per query run, however many micro-batches; gone when the query ends.
        EmbeddedRocketMQ.awaitCondition("the query run's transaction state to be closed", 30000)(
          RocketMQTransactionRuns.size == 0)
        val batches = q.recentProgress.filter(_.numInputRows > 0)
        (batches.length, batches.last.sink.metrics.asScala.toMap)
      }
      val (batches, metrics) = run()
      assert(batches === 3)
      if (guarantee == "exactly_once") {
        // The progress tells how the sink committed the batch: all by the driver, none left to the
        // broker.
        assert(metrics("epochHalfMessages") === "100" && metrics("epochLeftToCheckBack") === "0",
          metrics)
        assert(metrics("epochsLeftByEarlierRuns") === "0", metrics)
        // The embedded broker says how it checks back (the harness's user may ask).
        assert(metrics("brokerChecks").startsWith("asked: "), metrics)
      }
      // As if the driver died after the sink's decision and before Spark's commit, before it saw
      // its own commits confirmed: Spark runs the last batch again, and the next run finds the
      // earlier run's epoch unconfirmed.
      val commits = new File(checkpoint, "commits").listFiles().filter(_.getName.forall(_.isDigit))
      val last = commits.maxBy(_.getName.toLong)
      assert(last.delete())
      new File(last.getParentFile, s".${last.getName}.crc").delete()
      new File(checkpoint, s"rocketmq-sink/decisions/${last.getName}.committed").delete()
      val (again, metricsAgain) = run()
      assert(again === 1)
      if (guarantee == "exactly_once")
        assert(metricsAgain("epochsLeftByEarlierRuns") === "1", metricsAgain)
      val stored = rocketmq.readAll(out)
      lastRuns =
        stored.flatMap(m => Option(m.getProperty("spark.rocketmq.txn"))).map(_.split('/')(0)).toSet
      stored.map(body)
    }
    val atLeastOnce = writeTwice("at_least_once")
    assert(atLeastOnce.size > atLeastOnce.distinct.size,
      "the control run should have duplicated the last batch")
    val exactlyOnce = writeTwice("exactly_once")
    assert(exactlyOnce.sorted === (0 until 300).map(i => s"m$i").sorted)
    // Every message of the stream's run carries the same run id.
    assert(lastRuns.size === 1, lastRuns)
  }

  for (sink <- Seq("start()", "toTable")) {
    test(
      "a stream restarted at once, with no new input and its earlier run's end not yet heard, " +
        s"answers the broker about the epoch that run left unconfirmed (written with $sink)") {
      val (in, out) = (rocketmq.newTopic(), rocketmq.newTopic())
      rocketmq.createTopic(in, queues = 2)
      rocketmq.createTopic(out, queues = 2)
      rocketmq.sendBodies(in, (0 until 50).map(i => s"m$i"))
      val checkpoint = newDir()
      val catalog = s"eo_${UUID.randomUUID().toString.take(8)}"
      spark.conf.set(s"spark.sql.catalog.$catalog", classOf[RocketMQCatalog].getName)
      spark.conf.set(s"spark.sql.catalog.$catalog.nameServer", rocketmq.nameServer)
      def start(trigger: Trigger) = {
        val writer = streamTopic(in, "startingOffsets" -> "earliest").selectExpr("body").writeStream
          .option("deliveryGuarantee", "exactly_once").option("checkpointLocation",
            checkpoint).trigger(trigger)
        // A catalog table is resolved without the writer's options: its first run records them for
        // the next.
        if (sink == "toTable") writer.toTable(s"$catalog.`$out`")
        else writer.format("rocketmq").option("nameServer", rocketmq.nameServer).option("topic",
          out).start()
      }
      // Spark's listener bus delivers the first run's end late, as a busy driver's does: after the
      // restart.
      val bus = new HeldListenerBus(spark.sparkContext)
      try {
        val first = start(Trigger.AvailableNow())
        assert(first.awaitTermination(120000) && first.exception.isEmpty, first.exception)
        // As if the driver had died before it saw the commits of its only epoch confirmed: Spark
        // has committed the micro-batch, so the next run has no batch to run again and, with no new
        // input, none to run at all.
        assert(new File(checkpoint, "rocketmq-sink/decisions/0.committed").delete())
        val again = start(Trigger.ProcessingTime("200 milliseconds"))
        try {
          // The broker asks a producer of the transaction group it knows: the run has one from its
          // start.
          val group = s"spark-rocketmq-txn-${again.id}"
          EmbeddedRocketMQ.awaitCondition(s"a producer of $group on the broker", 30000)(
            rocketmq.brokerController.getProducerManager.groupOnline(group))
          bus.release()
          assert(RocketMQTransactionRuns.size === 1,
            "the earlier run's end should close that run's state only")
          assert(RocketMQTransactionRuns.running(again.runId.toString).map(
            _.leftByEarlierRuns.map(_.epoch)) ===
            Some(Seq(0L)))
          assert(rocketmq.brokerController.getProducerManager.groupOnline(group))
          assert(again.recentProgress.forall(_.numInputRows == 0),
            "the restarted run should have had nothing to read")
        } finally again.stop()
      } finally bus.release()
      EmbeddedRocketMQ.awaitCondition("the second run's transaction state to be closed", 30000)(
        RocketMQTransactionRuns.size == 0)
      assert(rocketmq.readAll(out).map(body).sorted === (0 until 50).map(i => s"m$i").sorted)
    }
  }

  test("the transaction producer's requests are answered while check-backs hold every thread of " +
    "the client's that " +
    "takes requests in; a look-up with no master to ask cannot tell (it never says 'not " +
    "committed')") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 1)
    rocketmq.sendBodies(topic, Seq("looked-up"))
    val sent = rocketmq.readAll(topic).head
    val (checks, answers) = (Executors.newSingleThreadExecutor(),
      transaction.RocketMQTransactionCoordinator
        .newCallbackExecutor("test"))
    val never = new TransactionListener {
      override def executeLocalTransaction(m: Message, arg: Any): LocalTransactionState =
        LocalTransactionState.UNKNOW
      override def checkLocalTransaction(m: MessageExt): LocalTransactionState =
        LocalTransactionState.UNKNOW
    }
    val producer =
      transaction.RocketMQTransactionCoordinator.startProducer(rocketmq.newTopic("txn-group"),
        RocketMQConnection(rocketmq.nameServer), never, checks, answers)
    val release = new CountDownLatch(1)
    try {
      val client = producer.getDefaultMQProducerImpl.getMqClientFactory
      // Check-backs come in on the client's public pool; with the check-back queue full each waits
      // there for room.
      val intake = classOf[NettyRemotingClient].getDeclaredField("publicExecutor")
      intake.setAccessible(true)
      val pool =
        intake.get(client.getMQClientAPIImpl.getRemotingClient).asInstanceOf[ExecutorService]
      (0 until 64).foreach(_ =>
        pool.submit(new Runnable { override def run(): Unit = release.await() }))
      // A route update and an index look-up, as a check-back's answer makes them.
      client.updateTopicRouteInfoFromNameServer(topic)
      val index = new transaction.RocketMQMessageIndex(() => client, 3000L)
      assert(index.delivered(sent, topic) === Some(true))
      // With no master to ask (here: no route), the answer is "cannot tell now", never "not
      // committed".
      assert(index.delivered(sent, rocketmq.newTopic("no-route")) === None)
    } finally {
      release.countDown()
      producer.shutdown()
      checks.shutdownNow()
      answers.shutdownNow()
    }
  }

  test(
    "the options are checked: the guarantee's name, the timeout's floor and ceiling, no delivery " +
      "delay; before any send") {
    val df = Seq("a").toDF("body")
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 1)
    val bad = errorMessage(write(df, topic, "twice"))
    assert(bad.contains("deliveryGuarantee") && bad.contains("twice") &&
      bad.contains("at_least_once or exactly_once"))
    val short = errorMessage(df.write.format("rocketmq").option("nameServer", rocketmq.nameServer)
      .option("topic", topic).option("deliveryGuarantee", "exactly_once").option(
        "transactionTimeout", "30s").save())
    // The floor follows the broker's check interval (30 s here): two intervals.
    assert(short.contains("TRANSACTION_TIMEOUT_UNDER_CHECKS") && short.contains("'30s'") &&
        short.contains("every 30s") && short.contains("Use at least 1m"), short)
    // Every check round of the broker counts from the send, those of the immunity too (RocketMQ
    // #8311): a timeout of 7 min leaves one check-back of 15 rounds of 30 s; the write reads the
    // broker's settings and refuses it.
    val long = errorMessage(df.write.format("rocketmq").option("nameServer", rocketmq.nameServer)
      .option("topic", topic).option("deliveryGuarantee", "exactly_once").option(
        "transactionTimeout", "7min").save())
    assert(long.contains("TRANSACTION_TIMEOUT_OVER_CHECKS") && long.contains("'7m'") &&
        long.contains("'transactionTimeout'") && long.contains("450 s after it is sent") &&
        long.contains("leaves it 1 check-backs") && long.contains("Use at most 6m"), long)
    val delayed =
      errorMessage(df.write.format("rocketmq").option("nameServer", rocketmq.nameServer)
        .option("topic", topic).option("deliveryGuarantee", "exactly_once").option(
          "deliveryDelayMs", "1000").save())
    assert(delayed.contains("'deliveryGuarantee', 'deliveryDelayMs' cannot be used together"),
      delayed)
    assert(rocketmq.readAll(topic).isEmpty)
  }
}
