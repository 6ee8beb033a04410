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

import java.nio.charset.StandardCharsets
import java.util.concurrent.{CompletableFuture, ConcurrentHashMap, TimeUnit}

import scala.jdk.CollectionConverters._

import org.apache.rocketmq.client.consumer.{PullCallback, PullResult}
import org.apache.rocketmq.client.hook.{SendMessageContext, SendMessageHook}
import org.apache.rocketmq.common.message.Message

import org.apache.spark.sql.connector.read.streaming.ReadLimit
import org.apache.spark.sql.rocketmq.client.RocketMQOffsetReader
import org.apache.spark.sql.rocketmq.consumer.{
  RocketMQConsumerPool, RocketMQQueuePuller, RocketMQReadSettings
}
import org.apache.spark.sql.rocketmq.options.RocketMQOptions
import org.apache.spark.sql.rocketmq.producer.{
  RocketMQMessageSender, RocketMQProducerPool, RocketMQWriteSettings
}
import org.apache.spark.sql.streaming.Trigger

/**
 * Executors reuse one consumer and one producer per connection settings; planning costs requests
 * per broker; a real-time reader's pull answers and a sink's sends run on the threads the connector
 * sets them on.
 */
class RocketMQClientReuseSuite extends RocketMQSparkSuiteBase {

  test(
    "100 micro-batches RocketMQ to RocketMQ: consumers, producers, client instances and threads " +
      "stay flat") {
    // Clients pooled by earlier suites would be closed in the middle of the count (the last task of
    // an earlier query giving a consumer back, the driver's metadata client of an earlier stream,
    // or the pools' idle eviction): once every earlier task and stream has given its client back,
    // close them all, so that the count is this query's own clients.
    val pools =
      Seq(RocketMQConsumerPool.cache, RocketMQProducerPool.cache, RocketMQOffsetReader.clients)
    EmbeddedRocketMQ.awaitCondition("earlier queries gave their pooled clients back", 60000)(
      pools.forall(_.lent == 0))
    // An earlier suite's application, when it ended, handed its clients to closing threads of
    // their own (each close takes seconds): they finish before the count starts.
    EmbeddedRocketMQ.awaitCondition("the clients of earlier applications closed", 60000)(
      !Thread.getAllStackTraces.keySet.asScala.exists(t =>
        t.isAlive && t.getName.matches("rocketmq-[a-z]+-close")))
    val everyIdleOne = System.currentTimeMillis() + 24L * 3600 * 1000
    pools.foreach(_.evictIdle(everyIdleOne))
    val (in, out) = (rocketmq.newTopic(), rocketmq.newTopic())
    rocketmq.createTopic(in, queues = 4)
    rocketmq.createTopic(out, queues = 2)
    // One query both reads (pooled consumers) and writes (pooled producers) through the connector.
    val q = spark.readStream.format("rocketmq")
      .option("nameServer", rocketmq.nameServer).option("topic", in).load()
      .selectExpr("body")
      .writeStream.format("rocketmq").option("nameServer", rocketmq.nameServer).option("topic", out)
      .option("checkpointLocation", Files.createTempDirectory("rocketmq-reuse-").toString)
      .trigger(Trigger.ProcessingTime(0)).start()
    try {
      q.processAllAvailable()
      var warm = RocketMQClientThreads.reading
      var (warmConsumers, warmProducers) = (0, 0)
      for (i <- 1 to 100) {
        rocketmq.sendBodies(in, Seq(s"m$i"))
        q.processAllAvailable()
        if (i == 10) {
          warm = RocketMQClientThreads.reading
          warmConsumers = RocketMQConsumerPool.size
          warmProducers = RocketMQProducerPool.size
        }
      }
      val batches = q.recentProgress.count(_.numInputRows > 0) // recentProgress keeps the last 100
      assert(batches >= 90, s"expected about 100 batches with data, saw $batches")
      val growth = RocketMQClientThreads.growth(warm, RocketMQClientThreads.reading)
      assert(growth.isEmpty, growth.mkString("; "))
      assert(RocketMQConsumerPool.size === warmConsumers, "pooled consumers grew")
      assert(RocketMQProducerPool.size === warmProducers, "pooled producers grew")
      // Read back last: the test's own reader is a client instance of this JVM too.
      val copied = rocketmq.readAll(out).map(m => new String(m.getBody, StandardCharsets.UTF_8))
      assert(copied.sorted === (1 to 100).map(i => s"m$i").sorted)
    } finally q.stop()
  }

  test("planning a trigger on a 256-queue topic costs one request per broker, not per queue") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 256)
    rocketmq.sendBodies(topic, (0 until 50).map(i => s"m$i"))
    val options = new RocketMQOptions(Map("nameServer" -> rocketmq.nameServer, "topic" -> topic,
      "startingOffsets" -> "earliest"))
    val stream =
      new RocketMQMicroBatchStream(options, Files.createTempDirectory("rocketmq-plan-").toString)
    try {
      val start = stream.initialOffset()
      val before = stream.planner.reader.requestCount
      var end = start
      for (_ <- 1 to 3) end = stream.latestOffset(start, ReadLimit.allAvailable())
      val perTrigger = (stream.planner.reader.requestCount - before) / 3.0
      // One route lookup on the name server plus one stats request to the single broker.
      assert(perTrigger === 2.0)
      assert(RocketMQSourceOffset(end).queueOffsets.size === 256)
      assert(RocketMQSourceOffset(end).queueOffsets.values.sum === 50)
      assert(stream.planInputPartitions(start, end).length === 256.min(50))
    } finally stream.stop()
  }

  test("a client built to replace a broken one that a task still holds starts and works") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 1)
    val options = new RocketMQOptions(Map("nameServer" -> rocketmq.nameServer, "topic" -> topic))
    // A task's send failed: its producer is marked broken, and the task still holds it.
    val writeSettings = RocketMQWriteSettings(options)
    val heldProducer = RocketMQProducerPool.borrow(writeSettings)
    heldProducer.markBroken()
    try {
      // The next task gets a new producer of the same group while the broken one is still started.
      // (A sharding key makes the sends synchronous, so they reach the queue in order.)
      val sender = new RocketMQMessageSender(writeSettings)
      try {
        Seq("a", "b").foreach(b =>
          sender.send(new Message(topic, b.getBytes(StandardCharsets.UTF_8)), "in-order"))
        sender.flush()
      } finally sender.close()
    } finally heldProducer.release()

    val readSettings = RocketMQReadSettings(options)
    val heldConsumer = RocketMQConsumerPool.borrow(readSettings)
    heldConsumer.markBroken()
    try {
      val queue = rocketmq.latestOffsets(topic).keys.head
      val puller = RocketMQQueuePuller(queue, 0, 2, readSettings)
      try {
        val bodies = Iterator.continually(puller.next()).takeWhile(_ != null)
          .map(m => new String(m.getBody, StandardCharsets.UTF_8)).toList
        assert(bodies === Seq("a", "b"))
      } finally puller.close()
    } finally heldConsumer.release()
  }

  test(
    "a real-time reader takes pull answers on the connection's thread; a send leaves from the " +
      "sending thread") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 1)
    val group = s"threads-${System.nanoTime()}"
    val options = new RocketMQOptions(Map("nameServer" -> rocketmq.nameServer, "topic" -> topic,
      "consumerGroup" -> group, "producerGroup" -> group))

    // A send's first attempt is made on the thread that sends: the producer's send hook runs there.
    val writeSettings = RocketMQWriteSettings(options)
    val sendingThreads = ConcurrentHashMap.newKeySet[String]()
    val producer = RocketMQProducerPool.borrow(writeSettings)
    try {
      producer.client.producer.getDefaultMQProducerImpl.registerSendMessageHook(
        new SendMessageHook {
          override def hookName(): String = "sending-thread"
          override def sendMessageBefore(context: SendMessageContext): Unit =
            sendingThreads.add(Thread.currentThread().getName)
          override def sendMessageAfter(context: SendMessageContext): Unit = ()
        })
      val sender = new RocketMQMessageSender(writeSettings)
      try {
        Seq("a", "b", "c").foreach(b =>
          sender.send(new Message(topic, b.getBytes(StandardCharsets.UTF_8)), null))
        sender.flush()
      } finally sender.close()
      assert(sendingThreads.asScala === Set(Thread.currentThread().getName))
    } finally {
      producer.markBroken() // the hook stays with this test
      producer.release()
    }

    // The thread a pull's answer reaches its callback on, with a consumer borrowed for `followsEnd`
    // or not.
    val readSettings = RocketMQReadSettings(options)
    val queue = rocketmq.latestOffsets(topic).keys.head
    def answeredOn(followsEnd: Boolean): String = {
      val lease = RocketMQConsumerPool.borrow(readSettings, followsEnd)
      try {
        val thread = new CompletableFuture[String]()
        lease.client.pull(queue.toMessageQueue(readSettings.connection), "*", 0L, 32,
          new PullCallback {
            override def onSuccess(result: PullResult): Unit =
              thread.complete(Thread.currentThread().getName)
            override def onException(e: Throwable): Unit = thread.completeExceptionally(e)
          })
        thread.get(30, TimeUnit.SECONDS)
      } finally lease.release()
    }
    assert(answeredOn(followsEnd = true).startsWith("NettyClientSelector_"))
    assert(answeredOn(followsEnd = false).startsWith("NettyClientPublicExecutor_"))

    // A reader following the queue's end borrows such a consumer; a bounded one does not.
    def key(followsEnd: Boolean) =
      RocketMQConsumerPool.Key(readSettings.connection, group, followsEnd = followsEnd)
    val open = RocketMQQueuePuller(queue, 0, RocketMQQueuePuller.Open, readSettings)
    val bounded = RocketMQQueuePuller(queue, 0, 3, readSettings)
    try {
      val lent = RocketMQConsumerPool.cache.lentKeys
      assert(lent.contains(key(followsEnd = true)) && lent.contains(key(followsEnd = false)), lent)
      val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30)
      val read = Iterator.continually(open.next(deadline)).take(3).takeWhile(_ != null)
        .map(m => new String(m.getBody, StandardCharsets.UTF_8)).toList
      assert(read === Seq("a", "b", "c"))
    } finally {
      open.close()
      bounded.close()
    }
  }
}
