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
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.locks.LockSupport

import scala.concurrent.Future
import scala.concurrent.ExecutionContext.Implicits.global
import scala.concurrent.duration._

import org.apache.rocketmq.client.producer.DefaultMQProducer

import org.apache.spark.sql.Encoders
import org.apache.spark.sql.execution.streaming.runtime.MemoryStream
import org.apache.spark.sql.functions.col
import org.apache.spark.sql.rocketmq.producer.RocketMQProducerPool
import org.apache.spark.sql.rocketmq.transaction.{
  RocketMQTransactionCoordinator, RocketMQTransactionEnd
}
import org.apache.spark.sql.streaming.{StreamingQueryListener, Trigger}

/**
 * Queries that ride out a broker crash: the broker JVM is killed with SIGKILL while the query runs
 * and restarted on the same store and ports [[OutageMs]] after the kill. Spark runs `local[2,4]`,
 * so every task has four attempts. The kill is synchronised on the query's real progress (a task
 * has handled its first rows), never on a sleep; the one fixed wait is the outage itself.
 */
class RocketMQBrokerRestartSuite extends RocketMQBrokerRestartSuiteBase {
  import RocketMQBrokerRestartSuiteBase._

  private val Total = 100000

  test(
    "batch read of 100,000 messages, broker killed -9 mid-read and back 5 s later: every message " +
      "once") {
    val topic = newTopic("restart-read")
    broker.createTopic(topic, queues = 4)
    broker.produce(topic, Total, i => s"id-$i")
    broker.awaitIndexed()
    Gate.reset(rowsBeforeGate = 100)
    try {
      val started = System.nanoTime()
      val job =
        Future(countAndDistinct(read(topic).select(gated(col("body").cast("string")).as("id"))))
      awaitLatch(Gate.reached, "a read task to handle its first 100 rows")
      // The tasks go on pulling and the broker dies under them: pulls in flight, then pulls
      // refused.
      crashAndRestart(beforeKill = () => Gate.open(), whileDown = _ => assertNotDone(job))
      val (rows, distinct) = await(job, "the read")
      info(
        s"read took ${(System.nanoTime() - started) / 1000000} ms; ${Gate.attempts.get} task " +
          "attempts")
      assert(rows === Total, "rows read")
      assert(distinct === Total, "distinct ids read")
      // One attempt per queue: the tasks rode out the outage themselves (retrying pulls), none was
      // retried.
      assert(Gate.attempts.get === 4, "task attempts")
    } finally cleanUp()
  }

  test(
    "streaming query into a parquet sink rides out a kill -9 and 5 s outage: 600 rows exactly " +
      "once") {
    val topic = newTopic("restart-stream")
    broker.createTopic(topic, queues = 4)
    broker.produce(topic, 300, i => s"s-$i")
    broker.awaitIndexed()
    val output = Files.createTempDirectory("rocketmq-restart-sink-").toString
    val checkpoint = Files.createTempDirectory("rocketmq-restart-checkpoint-").toString
    // A progress event for every trigger, also those without data: the outage's triggers show.
    spark.conf.set("spark.sql.streaming.noDataProgressEventInterval", "0")
    val progress = new AtomicInteger()
    val listener = new StreamingQueryListener {
      override def onQueryStarted(event: StreamingQueryListener.QueryStartedEvent): Unit = ()
      override def onQueryProgress(event: StreamingQueryListener.QueryProgressEvent): Unit =
        progress.incrementAndGet()
      override def onQueryTerminated(event: StreamingQueryListener.QueryTerminatedEvent): Unit = ()
    }
    spark.streams.addListener(listener)
    val query = spark.readStream.format("rocketmq").option("nameServer", broker.nameServer)
      .option("topic", topic).option("startingOffsets", "earliest").load()
      .selectExpr("CAST(body AS STRING) AS id")
      .writeStream.format("parquet").option("path", output).option("checkpointLocation", checkpoint)
      .trigger(Trigger.ProcessingTime(500)).start()
    def processAll(): Unit =
      await(Future(query.processAllAvailable()), "processAllAvailable", 2.minutes)
    def sinkIds(): Seq[String] = spark.read.parquet(output).collect().map(_.getString(0)).toSeq
    try {
      processAll()
      assert(sinkIds().sorted === (0 until 300).map(i => s"s-$i").sorted)
      var activeTriggerSeen = false
      var progressWhileDown = 0
      crashAndRestart(whileDown = outageEnd => {
        val before = progress.get()
        while (System.nanoTime() < outageEnd && query.isActive) {
          activeTriggerSeen ||= query.status.isTriggerActive
          LockSupport.parkNanos(20L * 1000 * 1000)
        }
        progressWhileDown = progress.get() - before
      })
      info(
        s"during the outage: progress events $progressWhileDown, a trigger seen running: " +
          s"$activeTriggerSeen")
      assert(query.isActive, s"the query stopped during the outage: ${query.exception}")
      assert(activeTriggerSeen || progressWhileDown > 0, "no trigger ran while the broker was down")
      broker.produce(topic, 300, i => s"s-${300 + i}")
      broker.awaitIndexed()
      processAll()
      assert(query.isActive && query.exception.isEmpty, s"the query failed: ${query.exception}")
      assert(sinkIds().sorted === (0 until 600).map(i => s"s-$i").sorted)
    } finally {
      query.stop()
      spark.streams.removeListener(listener)
      spark.conf.unset("spark.sql.streaming.noDataProgressEventInterval")
      cleanUp()
    }
  }

  test(
    "batch write of 100,000 rows, broker killed -9 mid-write and back 5 s later: succeeds, every " +
      "id stored") {
    val topic = newTopic("restart-write")
    broker.createTopic(topic, queues = 4)
    Gate.reset(rowsBeforeGate = 2000)
    try {
      val started = System.nanoTime()
      val rows = spark.range(Total).select(gated(col("id").cast("string")).as("body"))
      val job = Future {
        rows.write.format("rocketmq").option("nameServer", broker.nameServer).option("topic",
          topic).save()
      }
      awaitLatch(Gate.reached, "a write task to hand over its first 2000 rows")
      EmbeddedRocketMQ.awaitCondition("the write's first messages to be stored", 60000) {
        broker.maxOffsets(topic).values.sum > 0
      }
      // The tasks go on sending and the broker dies under them: sends in flight, then sends
      // refused.
      crashAndRestart(beforeKill = () => Gate.open(), whileDown = _ => assertNotDone(job))
      await(job, "the write")
      info(
        s"write took ${(System.nanoTime() - started) / 1000000} ms; ${Gate.attempts.get} task " +
          "attempts")
      val stored = broker.readBodies(topic)
      val distinct = stored.toSet
      val missing = (0 until Total).map(_.toString).filterNot(distinct)
      info(s"stored ${stored.size} messages, ${stored.size - distinct.size} of them duplicates")
      assert(missing.isEmpty,
        s"${missing.size} ids never stored, such as ${missing.take(5).mkString(", ")}")
      // One attempt per partition: the tasks rode out the outage themselves (resending), none was
      // retried.
      assert(Gate.attempts.get === rows.rdd.getNumPartitions, "task attempts")
    } finally cleanUp()
  }

  test(
    "exactly-once batch write whose commits get no answer (broker frozen by SIGSTOP): none asked " +
      "twice, every row once") {
    val topic = newTopic("frozen-commit")
    broker.createTopic(topic, queues = 4)
    // Few enough rows that every commit is in flight when the broker stops, and that the resumed
    // broker carries them all out: a broker drops requests that waited over 3 s in its queue (as
    // thousands at once can), and a dropped commit is left to the check-back (minutes later), which
    // RocketMQUnansweredCommitsSuite covers.
    val rows = 400
    val pid = broker.brokerPid
    def signal(name: String): Unit = {
      val code = new ProcessBuilder("kill", s"-$name", pid.toString).inheritIO().start().waitFor()
      assert(code === 0, s"kill -$name $pid")
    }
    val unanswered = RocketMQTransactionEnd.unansweredCommits.get()
    // The broker stops right after the decision: the first END_TRANSACTION requests (every row
    // without a sharding key, and the first row of each queue's rows with one) wait in its socket,
    // unanswered, until the driver gives them up (30 s); resumed, the broker carries them all out.
    // Asked again, each would be delivered twice: the driver asks none again, finds them in the
    // broker's index of keys, and goes on (the rows with a sharding key after them in their queue,
    // too).
    BeforeFirstCommit.arm(() => signal("STOP"))
    val resumer = Future {
      EmbeddedRocketMQ.awaitCondition("the driver to give up waiting for the commits' answers",
        120000) {
        RocketMQTransactionEnd.unansweredCommits.get() > unanswered
      }
      signal("CONT")
    }
    try {
      val data = spark.range(rows).selectExpr("CAST(id AS STRING) AS body",
        "CASE WHEN id % 2 = 0 THEN CAST(id % 16 AS STRING) END AS shardingKey")
        .withColumn("body", BeforeFirstCommit.passing(col("body")))
      data.write.format("rocketmq").option("nameServer", broker.nameServer).option("topic", topic)
        .option("deliveryGuarantee", "exactly_once").save()
      assert(BeforeFirstCommit.hasRun, "the broker was not stopped before the first commit")
      await(resumer, "the broker resumed")
      // Unanswered: each row without a key once, and at most one row per task and queue of those
      // with one.
      val timedOut = RocketMQTransactionEnd.unansweredCommits.get() - unanswered
      val queuesPerTask = 4
      assert(timedOut >= rows / 2 &&
          timedOut <= rows / 2 + queuesPerTask * data.rdd.getNumPartitions, timedOut)
      val epoch = RocketMQTransactionCoordinator.lastInThisDriver
      assert(epoch.messages === rows && epoch.leftToBroker === 0, epoch)
      val stored = broker.readBodies(topic)
      assert(stored.size === rows, s"${stored.size - stored.toSet.size} duplicates")
      assert(stored.toSet === (0 until rows).map(_.toString).toSet)
    } finally {
      BeforeFirstCommit.disarm()
      if (!resumer.isCompleted) signal("CONT")
    }
  }

  test("batch read started while the broker is down waits for it and reads every message") {
    val topic = newTopic("restart-down")
    val messages = 10000
    broker.createTopic(topic, queues = 4)
    broker.produce(topic, messages, i => s"d-$i")
    broker.awaitIndexed()
    try {
      var job: Future[(Long, Long)] = null
      crashAndRestart(whileDown = _ => {
        job = Future(countAndDistinct(read(topic).selectExpr("CAST(body AS STRING) AS id")))
      })
      // Must not fail with ROCKETMQ_TOPIC_NOT_FOUND: the topic's route is gone only while its
      // broker is.
      val (rows, distinct) = await(job, "the read")
      assert(rows === messages && distinct === messages)
    } finally cleanUp()
  }

  test(
    "a stream's sends that time out in its tasks' commits (the broker frozen) are asked about, " +
      "not sent " +
      "again: the broker stores each row once, and the progress counts no possible duplicate") {
    val topic = newTopic("resent-in-commit")
    broker.createTopic(topic, queues = 2)
    val input = MemoryStream[String](Encoders.STRING, spark)
    val query = input.toDF().selectExpr("value AS body").writeStream.format("rocketmq")
      .option("nameServer", broker.nameServer).option("topic", topic).option("sendTimeoutMs",
        "1000")
      .option("checkpointLocation", Files.createTempDirectory("resent-").toString).start()
    val pid = broker.brokerPid
    def signal(name: String): Unit =
      assert(new ProcessBuilder("kill", s"-$name", pid.toString).inheritIO().start().waitFor() ===
        0)
    val resends = new SendLog(topic)
    try {
      input.addData("first")
      query.processAllAvailable() // the sink's producer is connected and the topic checked
      // Few rows: every send is in flight when the task's rows end, so the commit's wait sees the
      // timeouts.
      signal("STOP")
      val rows = (0 until 200).map(i => s"r$i")
      try {
        input.addData(rows: _*)
        EmbeddedRocketMQ.awaitCondition("a send timed out", 120000)(resends.seen)
      } finally signal("CONT")
      query.processAllAvailable()
      val stored = broker.readBodies(topic)
      assert(stored.sorted === (rows :+ "first").sorted)
      val counted =
        query.recentProgress.flatMap(p => Option(p.sink.metrics.get("possibleDuplicates")))
          .map(_.toLong).sum
      assert(counted === 0L)
    } finally {
      resends.close()
      query.stop()
    }
  }

  test(
    "a broker that comes back between the route request and the live-broker request is no " +
      "missing topic, to a " +
      "read or to a write's topic check; a topic that does not exist still is missing") {
    val topic = newTopic("restart-between")
    broker.createTopic(topic, queues = 2)
    broker.produce(topic, 100, i => s"b-$i")
    broker.awaitIndexed()
    broker.kill()
    // The reader's first "no route" answer restarts the broker (until its routes are back) before
    // the reader asks the name server for live brokers: the order of a crash-and-restart that CI
    // once hit by chance.
    val restarts = new RestartAfterNoRoute(topic)
    broker.addNameServerHook(restarts)
    try {
      val (rows, distinct) = countAndDistinct(read(topic).selectExpr("CAST(body AS STRING) AS id"))
      assert(restarts.get >= 1,
        "the reader never found the route missing: the broker was back too soon")
      assert(rows === 100 && distinct === 100)
      // The same order for a write's check that its topic exists.
      broker.kill()
      restarts.set(0)
      spark.range(10).selectExpr("CAST(id AS STRING) AS body").write.format("rocketmq")
        .option("nameServer", broker.nameServer).option("topic", topic).save()
      assert(restarts.get >= 1,
        "the write never found the route missing: the broker was back too soon")
      broker.awaitIndexed()
      assert(read(topic).count() === 110)
      // The write's check (RocketMQProducerPool.topicMissing) still finds a topic that does not
      // exist missing.
      broker.clearNameServerHooks()
      val producer = new DefaultMQProducer(s"restart-check-${UUID.randomUUID()}")
      producer.setNamesrvAddr(broker.nameServer)
      producer.setInstanceName(s"restart-check-${UUID.randomUUID()}")
      producer.start()
      try assert(RocketMQProducerPool.topicMissing(producer, s"no-such-topic-${UUID.randomUUID()}",
          3000))
      finally producer.shutdown()
    } finally {
      broker.clearNameServerHooks()
      cleanUp()
    }
  }

  test(
    "a broker down for longer than retryTimeoutMs fails a streaming query naming the outage, not " +
      "data loss") {
    val topic = newTopic("restart-gone")
    broker.createTopic(topic, queues = 2)
    broker.produce(topic, 50, i => s"g-$i")
    broker.awaitIndexed()
    val output = Files.createTempDirectory("rocketmq-outage-sink-").toString
    val checkpoint = Files.createTempDirectory("rocketmq-outage-checkpoint-").toString
    val query = spark.readStream.format("rocketmq").option("nameServer", broker.nameServer)
      .option("topic", topic).option("startingOffsets", "earliest").option("retryTimeoutMs",
        "3000").load()
      .selectExpr("CAST(body AS STRING) AS id")
      .writeStream.format("parquet").option("path", output).option("checkpointLocation", checkpoint)
      .trigger(Trigger.ProcessingTime(200)).start()
    try {
      await(Future(query.processAllAvailable()), "processAllAvailable", 2.minutes)
      val killedAt = System.nanoTime()
      broker.kill()
      // The next trigger waits 3 s for a broker to come back, then the query fails.
      val ended = scala.util.Try(query.awaitTermination(60000))
      assert(ended.isFailure, s"the query did not fail within 60 s: $ended")
      val failedAfterMs = (System.nanoTime() - killedAt) / 1000000
      val message =
        query.exception.map(_.getMessage).getOrElse(fail("the query ended without an error"))
      info(s"failed $failedAfterMs ms after the kill")
      assert(message.contains("[ROCKETMQ_BROKER_UNAVAILABLE.NO_LIVE_BROKER]"), message)
      assert(message.contains(s"Topic '$topic'") && message.contains("'retryTimeoutMs'"), message)
      assert(!message.contains("DATA_LOSS"), message)
      assert(failedAfterMs >= 3000, "failed before retryTimeoutMs ran out")
    } finally {
      query.stop()
      cleanUp()
    }
  }
}
