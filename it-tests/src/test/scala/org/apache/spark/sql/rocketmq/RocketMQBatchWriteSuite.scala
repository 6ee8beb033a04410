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
import java.util.UUID
import java.util.concurrent.{CountDownLatch, TimeUnit}
import java.util.concurrent.atomic.AtomicInteger

import org.apache.rocketmq.client.producer.DefaultMQProducer
import org.apache.rocketmq.common.message.{Message, MessageClientIDSetter}
import org.apache.rocketmq.remoting.RPCHook
import org.apache.rocketmq.remoting.protocol.{RemotingCommand, RequestCode}

import org.apache.spark.sql.rocketmq.options.RocketMQOptions
import org.apache.spark.sql.rocketmq.producer.{
  RocketMQMessageSender, RocketMQStoredCheck, RocketMQWriteSettings
}

class RocketMQBatchWriteSuite extends RocketMQSparkSuiteBase {
  import testImplicits._

  private def storedBodies(topic: String): Seq[String] =
    rocketmq.readAll(topic).map(m => new String(m.getBody, StandardCharsets.UTF_8))

  test(
    "string bodies with the topic option, default save mode (errorifexists), every message " +
      "acknowledged") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 4)
    val rows = (0 until 500).map(i => s"body-$i")
    rows.toDF("body").repartition(3).write.format("rocketmq")
      .option("nameServer", rocketmq.nameServer).option("topic", topic).save()
    assert(storedBodies(topic).sorted === rows.sorted)
    assert(rocketmq.latestOffsets(topic).values.sum === 500)
  }

  test(
    "rows with a priority land in queue min(priority, queues - 1) of a priority topic, each " +
      "once; an exactly-once write of them is refused before any send") {
    val topic = rocketmq.newTopic("priority")
    rocketmq.createTopic(topic, queues = 4, messageType = Some("PRIORITY"))
    val rows = (0 until 60).map(i => (s"p$i", i % 6))
    def write(options: (String, String)*): Unit =
      rows.toDF("body", "priority").repartition(2).write.format("rocketmq")
        .option("nameServer", rocketmq.nameServer).option("topic", topic)
        .options(options.toMap).save()
    val refused = errorMessage(write("deliveryGuarantee" -> "exactly_once"))
    assert(refused.contains("ROCKETMQ_PRIORITY_NOT_HONOURED.EXACTLY_ONCE"), refused)
    assert(rocketmq.latestOffsets(topic).values.sum === 0)
    write()
    val placed = readTopic(topic).selectExpr("CAST(body AS STRING)", "queueId").as[(String, Int)]
      .collect().toMap
    assert(placed.size === rows.size && rocketmq.latestOffsets(topic).values.sum === rows.size)
    rows.foreach { case (body, priority) =>
      assert(placed(body) === math.min(priority, 3), s"$body of priority $priority")
    }
  }

  test("binary bodies, tags column, append mode; the topic option overrides a topic column") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 2)
    val data = (0 until 20).map(i =>
      (s"b$i".getBytes(StandardCharsets.UTF_8), "no-such-topic", if (i % 2 == 0) "even" else "odd"))
    data.toDF("body", "topic", "tags").write.format(
      "org.apache.spark.sql.rocketmq.RocketMQSourceProvider")
      .mode("append").option("nameServer", rocketmq.nameServer).option("topic", topic).save()
    val stored = rocketmq.readAll(topic)
    assert(
      stored.map(m => new String(m.getBody, StandardCharsets.UTF_8)).sorted === (0 until 20).map(
        i => s"b$i").sorted)
    stored.foreach { m =>
      val i = new String(m.getBody, StandardCharsets.UTF_8).drop(1).toInt
      assert(m.getTags === (if (i % 2 == 0) "even" else "odd"))
    }
  }

  test(
    "rows without a sharding key go out in batches: each batch lands whole in one queue, " +
      "properties intact") {
    def write(topic: String, batchMessages: Int): Unit = (0 until 1200).map(i =>
      (f"r$i%04d", Map("n" -> i.toString), "tagged")).toDF("body", "properties", "tags")
      .coalesce(1).write.format("rocketmq").option("nameServer", rocketmq.nameServer).option(
        "topic", topic)
      .option("sendBatchMessages", batchMessages.toString).save()
    val (batched, single) = (rocketmq.newTopic(), rocketmq.newTopic())
    rocketmq.createTopic(batched, queues = 8)
    rocketmq.createTopic(single, queues = 8)
    write(batched, 100)
    write(single, 1)

    // One task, 12 full batches: each queue holds whole runs of 100 consecutive rows.
    val byQueue =
      rocketmq.readAll(batched).groupBy(_.getQueueId).values.map(_.sortBy(_.getQueueOffset))
    assert(byQueue.map(_.size).sum === 1200)
    byQueue.foreach { messages =>
      assert(messages.size % 100 === 0,
        s"a queue holds ${messages.size} messages, not whole batches")
      messages.grouped(100).foreach { run =>
        val rows = run.map(m => new String(m.getBody, StandardCharsets.UTF_8).drop(1).toInt)
        assert(rows === (rows.head until rows.head + 100) && rows.head % 100 === 0)
      }
    }
    rocketmq.readAll(batched).foreach { m =>
      assert(m.getUserProperty("n") === new String(m.getBody, StandardCharsets.UTF_8).drop(
        1).toInt.toString)
      assert(m.getTags === "tagged")
    }
    // One message per request: the producer spreads the rows over the queues, no queue gets a whole
    // run.
    val singly =
      rocketmq.readAll(single).groupBy(_.getQueueId).values.map(_.sortBy(_.getQueueOffset))
    assert(singly.size === 8)
    singly.foreach { messages =>
      val rows = messages.map(m => new String(m.getBody, StandardCharsets.UTF_8).drop(1).toInt)
      val longestRun = rows.zip(rows.drop(1)).foldLeft((1, 1)) { case ((longest, run), (a, b)) =>
        val next = if (b == a + 1) run + 1 else 1
        (math.max(longest, next), next)
      }._1
      assert(longestRun < 100, rows.take(20))
    }
  }

  test(
    "a row whose properties are too long for a batch entry goes alone, and fails with the " +
      "broker's reason") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 2)
    // Row 0, a batch's first: 40,000 characters of properties, more than a batch entry's length
    // field (a short) holds and than the broker takes (32 KiB). It goes alone, and its batch is not
    // sent empty.
    val rows = (0 until 10).map(i => (s"b$i", Map("v" -> (if (i == 0) "x" * 40000 else "s")))).toDF(
      "body",
      "properties")
    val e = intercept[Exception] {
      rows.coalesce(1).write.format("rocketmq").option("nameServer", rocketmq.nameServer).option(
        "topic", topic).save()
    }
    val text = Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(
      _.getMessage).mkString("\n")
    assert(text.contains("ROCKETMQ_SEND_FAILED") && text.contains("properties length limit 32KB"),
      text)
    assert(!text.contains("body length is zero"), text)
  }

  test("a topic column routes each row when no topic option is set") {
    val (t1, t2) = (rocketmq.newTopic(), rocketmq.newTopic())
    rocketmq.createTopic(t1, queues = 1)
    rocketmq.createTopic(t2, queues = 1)
    Seq(("x", t1), ("y", t2), ("z", t1)).toDF("body", "topic").write.format("rocketmq")
      .option("nameServer", rocketmq.nameServer).save()
    assert(storedBodies(t1).sorted === Seq("x", "z"))
    assert(storedBodies(t2) === Seq("y"))
  }

  test("write then read back through the connector") {
    val (source, sink) = (rocketmq.newTopic(), rocketmq.newTopic())
    rocketmq.createTopic(source, queues = 3)
    rocketmq.createTopic(sink, queues = 2)
    rocketmq.sendBodies(source, (0 until 60).map(i => s"s$i"))
    readTopic(source).selectExpr("concat('copy-', CAST(body AS STRING)) AS body").write.format(
      "rocketmq")
      .option("nameServer", rocketmq.nameServer).option("topic", sink).save()
    rocketmq.awaitIndexed()
    assert(bodies(readTopic(sink)).sorted === (0 until 60).map(i => s"copy-s$i").sorted)
  }

  test(
    "a send to a topic that does not exist fails at once, naming it (not after retryTimeoutMs)") {
    // The name server lists a live broker, so this is no outage to wait out (retryTimeoutMs is 60
    // s).
    val message = errorMessage {
      Seq(("a", "topic-that-does-not-exist")).toDF("body", "topic").write.format("rocketmq")
        .option("nameServer", rocketmq.nameServer).option("sendTimeoutMs", "2000").save()
    }
    assert(message.contains("[ROCKETMQ_SEND_FAILED.TOPIC_NOT_FOUND]"), message)
    assert(message.contains("topic 'topic-that-does-not-exist'"), message)
    assert(message.contains("No route info"), message)

  }

  test("a null body fails the task naming the column; rows before it are not lost") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 1)
    val message = errorMessage {
      Seq[String]("ok-1", "ok-2", null).toDF("body").coalesce(1).write.format("rocketmq")
        .option("nameServer", rocketmq.nameServer).option("topic", topic).save()
    }
    assert(message.contains("ROCKETMQ_NULL_COLUMN_VALUE") && message.contains("'body'"), message)
    // Sends already made stay acknowledged (at-least-once): nothing written is lost.
    EmbeddedRocketMQ.awaitCondition("the two rows sent before the null", 10000) {
      storedBodies(topic).toSet == Set("ok-1", "ok-2")
    }
  }

  test("bytes in flight stay within maxInFlightBytes, whatever maxInFlightMessages allows") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 2)
    val body = Array.fill[Byte](1024)(7)
    def peakWith(options: (String, String)*): Long = {
      val sender = new RocketMQMessageSender(RocketMQWriteSettings(new RocketMQOptions(
        Map("nameServer" -> rocketmq.nameServer, "topic" -> topic,
          "maxInFlightMessages" -> "1000") ++ options)))
      try {
        (0 until 300).foreach(_ => sender.send(new Message(topic, body), null))
        sender.flush()
        sender.peakInFlightBytes
      } finally sender.close()
    }
    assert(peakWith("maxInFlightBytes" -> "4096") <= 4096)
    // A message larger than the budget goes alone rather than never.
    assert(peakWith("maxInFlightBytes" -> "100") <= 100)
    assert(rocketmq.latestOffsets(topic).values.sum === 600)
  }

  test(
    "a task sending each row at once (real-time, continuous) keeps at most 4 requests " +
      "unacknowledged, one row " +
      "per request at most 32; rows that come meanwhile go together; each stored once") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 4)
    val settings =
      RocketMQWriteSettings(new RocketMQOptions(Map("nameServer" -> rocketmq.nameServer,
        "topic" -> topic)))
    def sendAll(settings: RocketMQWriteSettings, bodies: Seq[String]): RocketMQMessageSender = {
      val sender = new RocketMQMessageSender(settings)
      try {
        bodies.foreach(body =>
          sender.send(new Message(topic, body.getBytes(StandardCharsets.UTF_8)), null))
        sender.flush()
        sender
      } finally sender.close()
    }
    val (burst, single) = ((0 until 20000).map(i => s"a$i"), (0 until 2000).map(i => s"b$i"))
    val atOnce = sendAll(settings.copy(sendEachAtOnce = true), burst)
    assert(atOnce.peakRequestsInFlight <= RocketMQMessageSender.EachAtOnceRequests)
    // The task hands a row over in microseconds, an acknowledgement takes a round trip through the
    // broker's store: rows waited for a free slot, and went out together.
    assert(atOnce.requests < burst.size)
    assert(atOnce.possibleDuplicates === 0)
    val oneEach = sendAll(settings.copy(sendBatchMessages = 1), single)
    assert(oneEach.peakRequestsInFlight <= RocketMQMessageSender.SingleRowRequests)
    assert(oneEach.requests === single.size)
    val stored = rocketmq.readAll(topic).map(m => new String(m.getBody, StandardCharsets.UTF_8))
    assert(stored.size === burst.size + single.size)
    assert(stored.sorted === (burst ++ single).sorted)
  }

  test(
    "rows with a sharding key go out in batches per queue, in order, also around one too large " +
      "to batch") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 8)
    val sender = new RocketMQMessageSender(RocketMQWriteSettings(new RocketMQOptions(
      Map("nameServer" -> rocketmq.nameServer, "topic" -> topic, "sendBatchMessages" -> "50"))))
    val rows = (0 until 1000).map(i => (i, s"key-${i % 5}"))
    try {
      rows.foreach { case (i, key) =>
        // Row 500 is over compressionThreshold (4096): it goes alone, after what its key's batch
        // holds.
        val body = if (i == 500) f"$i%04d" + "x" * 5000 else f"$i%04d"
        sender.send(new Message(topic, body.getBytes(StandardCharsets.UTF_8)), key)
      }
      sender.flush()
      // 200 rows per key, one queue per key: 4 full batches per key, and the lone and first
      // messages.
      assert(sender.requests <= 5 * 5 + 2, s"${sender.requests} requests for 1000 keyed rows")
    } finally sender.close()
    val stored = rocketmq.readAll(topic)
    assert(stored.size === 1000)
    rows.groupBy(_._2).foreach { case (key, keyed) =>
      val ids = keyed.map(_._1).toSet
      val messages = stored.filter(m =>
        ids.contains(new String(m.getBody, StandardCharsets.UTF_8).take(4).toInt))
      assert(messages.map(_.getQueueId).distinct.size === 1, s"$key spread over queues")
      val inQueueOrder =
        messages.sortBy(_.getQueueOffset).map(m =>
          new String(m.getBody, StandardCharsets.UTF_8).take(4))
      assert(inQueueOrder === keyed.map(r => f"${r._1}%04d"), s"$key out of order")
    }
  }

  test(
    "a request in doubt whose key the broker does not find at first is looked up again before " +
      "it is sent again: stored meanwhile, it is not sent twice, even by a task that has no " +
      "acknowledgement of its own; not found twice, it is sent again") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 1)
    // Holds the second look-up of a key until the test has stored the message: a broker that took
    // the request in before a pause stores it after the first look-up has answered.
    val lookUps = new AtomicInteger()
    val stored = new CountDownLatch(1)
    val hook = new RPCHook {
      override def doBeforeRequest(address: String, request: RemotingCommand): Unit =
        if (request.getCode == RequestCode.QUERY_MESSAGE && lookUps.incrementAndGet() == 2) {
          assert(stored.await(60, TimeUnit.SECONDS), "the message was never stored")
        }
      override def doAfterResponse(address: String, request: RemotingCommand,
          response: RemotingCommand): Unit = ()
    }
    val producer = new DefaultMQProducer(s"stored-check-${UUID.randomUUID()}", hook)
    producer.setNamesrvAddr(rocketmq.nameServer)
    producer.setInstanceName(s"stored-check-${UUID.randomUUID()}")
    producer.start()
    def keyed(body: String): (Message, String) = {
      val message = new Message(topic, body.getBytes(StandardCharsets.UTF_8))
      MessageClientIDSetter.setUniqID(message)
      (message, MessageClientIDSetter.getUniqID(message))
    }
    try {
      val control = producer.send(keyed("control")._1) // the producer learns the topic's route
      val brokerName = control.getMessageQueue.getBrokerName
      // A task whose every request is in doubt: its check has seen no acknowledgement.
      val (late, lateKey) = keyed("late")
      val verdict = new RocketMQStoredCheck(producer, 1000L, new RocketMQStoredCheck.Indexes)
        .stored(topic, lateKey, System.currentTimeMillis(), None)
      EmbeddedRocketMQ.awaitCondition("the first look-up", 30000)(lookUps.get >= 1)
      producer.send(late)
      rocketmq.awaitIndexed()
      stored.countDown()
      assert(verdict.get(60, TimeUnit.SECONDS) === RocketMQStoredCheck.Stored)
      // Never stored: with no control key the broker's index cannot be believed; with one (an
      // earlier task's acknowledgement, shared through the producer) it can.
      val neverKey = keyed("never")._2
      val unknown = new RocketMQStoredCheck(producer, 1000L, new RocketMQStoredCheck.Indexes)
      assert(unknown.stored(topic, neverKey, System.currentTimeMillis(), None)
        .get(60, TimeUnit.SECONDS) === RocketMQStoredCheck.CannotTell)
      val indexes = new RocketMQStoredCheck.Indexes
      new RocketMQStoredCheck(producer, 1000L, indexes).acknowledged(brokerName, topic,
        control.getMsgId, System.currentTimeMillis())
      assert(new RocketMQStoredCheck(producer, 1000L, indexes)
        .stored(topic, neverKey, System.currentTimeMillis(), None)
        .get(60, TimeUnit.SECONDS) === RocketMQStoredCheck.NotStored)
    } finally producer.shutdown()
    assert(storedBodies(topic).sorted === Seq("control", "late"))
  }
}
