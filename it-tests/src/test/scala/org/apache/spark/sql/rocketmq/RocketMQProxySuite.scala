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
import java.sql.Timestamp

import org.apache.spark.sql.functions.col
import org.apache.spark.sql.rocketmq.common.RocketMQQueue
import org.apache.spark.sql.streaming.Trigger

/**
 * Every read and write path through Apache RocketMQ's own proxy (cluster mode, in front of the
 * shared broker), with the proxy's Remoting endpoint as `nameServer`: what users of managed
 * RocketMQ 5 services have. The proxy refuses every admin request, so each test here fails if a
 * path still needs one.
 */
class RocketMQProxySuite extends RocketMQSparkSuiteBase {
  import testImplicits._

  private var proxy: RocketMQProxyProcess = _

  override protected def beforeAll(): Unit = {
    super.beforeAll()
    proxy = new RocketMQProxyProcess(rocketmq.nameServer, rocketmq.clusterName).start()
  }

  override protected def afterAll(): Unit = {
    try if (proxy != null) proxy.stop()
    finally super.afterAll()
  }

  private def viaProxy(topic: String, options: (String, String)*): Map[String, String] =
    Map("nameServer" -> proxy.endpoint, "topic" -> topic, "requestTimeoutMs" -> "5000") ++ options

  /**
   * A new topic of `queues` queues holding `bodies`, indexed (through a proxy planning cannot wait
   * for that).
   */
  private def topicHolding(prefix: String, queues: Int, bodies: Seq[String]): String = {
    val topic = rocketmq.newTopic(prefix)
    rocketmq.createTopic(topic, queues)
    rocketmq.sendBodies(topic, bodies)
    rocketmq.awaitIndexed() // docs/managed-rocketmq.md
    topic
  }

  test("topicPattern through the proxy, which lists no topics, fails naming why and what to set") {
    val text = errorMessage(spark.read.format("rocketmq").options(viaProxy("unused") -
      "topic" + ("topicPattern" -> "orders-.*")).load().collect())
    assert(text.contains("ROCKETMQ_TOPIC_LIST_REFUSED") && text.contains(proxy.endpoint) &&
        text.contains("option 'topic' instead"), text)
  }

  test("a batch read through the proxy returns every message, at the brokers' own offsets") {
    val sent = (0 until 40).map(i => s"m$i")
    val topic = topicHolding("proxy-read", 4, sent)
    val df = spark.read.format("rocketmq").options(viaProxy(topic)).load()
    assert(bodies(df).sorted === sent.sorted)
    val offsets =
      df.groupBy("queueId").agg(org.apache.spark.sql.functions.max("queueOffset")).collect()
        .map(r => r.getInt(0) -> (r.getLong(1) + 1)).toMap
    val direct =
      rocketmq.latestOffsets(topic).map { case (q, o) => q.queueId -> o }.filter(_._2 > 0)
    assert(offsets === direct)
  }

  test("through the proxy no pull answer is lost: a read of megabytes needs no retry") {
    // Apache's proxy writes no answer to a connection holding more than 64 KiB the client has not
    // read yet; pulls pipelined over one connection (answers of up to 256 KiB) lost most answers to
    // time-outs. With retries off, a single lost answer fails the read.
    val topic = rocketmq.newTopic("proxy-big")
    rocketmq.createTopic(topic, queues = 4)
    val n = 8000
    spark.range(0, n, 1, 4).selectExpr("repeat('x', 1024) AS body").write.format("rocketmq")
      .option("nameServer", rocketmq.nameServer).option("topic", topic).save()
    // Through a proxy planning cannot wait for the broker to index what it acknowledged
    // (docs/managed-rocketmq.md).
    rocketmq.awaitIndexed()
    val read =
      spark.read.format("rocketmq").options(viaProxy(topic, "retryTimeoutMs" -> "0")).load()
    assert(read.count() === n)
  }

  test(
    "through the proxy a task pulls over connections of its own, one per pull under way: its " +
      "read of a new group makes ProxyConnections consumers, one with pullsInFlight=1; a direct " +
      "read one") {
    // One queue: one task, on one task thread (consumers are per task thread).
    val topic = topicHolding("proxy-lanes", 1, (0 until 400).map(i => s"l$i"))
    def consumersMadeBy(options: Map[String, String]): Int = {
      val before = consumer.RocketMQConsumerPool.size
      assert(spark.read.format("rocketmq").options(options).load().count() === 400)
      consumer.RocketMQConsumerPool.size - before
    }
    val group = "proxy-lanes-" + System.nanoTime()
    assert(consumersMadeBy(viaProxy(topic, "consumerGroup" -> s"$group-a")) ===
      consumer.RocketMQConsumerPool.ProxyConnections)
    assert(consumersMadeBy(viaProxy(topic, "consumerGroup" -> s"$group-b",
      "pullsInFlight" -> "1")) === 1)
    assert(consumersMadeBy(Map("nameServer" -> rocketmq.nameServer, "topic" -> topic,
      "consumerGroup" -> s"$group-c")) === 1)
  }

  test("a pushed store-time filter through the proxy reads the later messages only") {
    val topic = rocketmq.newTopic("proxy-time")
    rocketmq.createTopic(topic, queues = 2)
    rocketmq.sendBodies(topic, (0 until 10).map(i => s"early$i"))
    val cut = rocketmq.readAll(topic).map(_.getStoreTimestamp).max + 1
    EmbeddedRocketMQ.awaitCondition("the broker's clock to pass the cut", 5000)(
      System.currentTimeMillis() > cut + 5)
    rocketmq.sendBodies(topic, (0 until 10).map(i => s"late$i"))
    rocketmq.awaitIndexed()
    val df = spark.read.format("rocketmq").options(viaProxy(topic)).load()
      .where(col("storeTimestamp") >= new Timestamp(cut))
    assert(bodies(df).sorted === (0 until 10).map(i => s"late$i").sorted)
    assert(df.queryExecution.executedPlan.toString.contains("storeTimestamp"))
  }

  test(
    "a stream through the proxy (AvailableNow) reads every message once, and commits the group's " +
      "offsets") {
    val sent = (0 until 30).map(i => s"s$i")
    val topic = topicHolding("proxy-stream", 2, sent)
    val checkpoint = Files.createTempDirectory("rocketmq-proxy-cp-").toString
    val group = s"proxy-group-${topic.takeRight(8)}"
    val query =
      spark.readStream.format("rocketmq").options(viaProxy(topic, "consumerGroup" -> group,
        "startingOffsets" -> "earliest")).load()
        .select(col("body").cast("string")).writeStream.format("memory").queryName(
          s"proxy_${topic.takeRight(8)}")
        .option("checkpointLocation", checkpoint).trigger(Trigger.AvailableNow()).start()
    query.awaitTermination(120000)
    assert(query.exception.isEmpty, query.exception)
    assert(spark.table(s"proxy_${topic.takeRight(8)}").as[String].collect().sorted === sent.sorted)
    rocketmq.latestOffsets(topic).foreach { case (queue, end) =>
      assert(rocketmq.committedOffset(group, queue) === end, queue)
    }
  }

  test("a batch write through the proxy stores every row") {
    val topic = rocketmq.newTopic("proxy-write")
    rocketmq.createTopic(topic, queues = 4)
    val rows = (0 until 40).map(i => s"w$i")
    rows.toDF("body").write.format("rocketmq").options(viaProxy(topic)).save()
    assert(rocketmq.readAll(topic).map(m => new String(m.getBody, "UTF-8")).sorted === rows.sorted)
  }

  test(
    "a traced write through a proxy records nothing with the proxy's defaults (traceOn false); " +
      "through one with traceOn, each message's Pub record") {
    val traceTopic = rocketmq.newTopic("proxy-trace")
    rocketmq.createTopic(traceTopic, queues = 1)
    def tracedWrite(endpoint: String): Set[String] = {
      val topic = rocketmq.newTopic("proxy-traced")
      rocketmq.createTopic(topic, queues = 2)
      (0 until 10).map(i => s"t$i").toDF("body").write.format("rocketmq")
        .options(viaProxy(topic, "nameServer" -> endpoint, "traceEnabled" -> "true",
          "traceTopic" -> traceTopic)).save()
      rocketmq.readAll(topic).map(_.getMsgId).toSet
    }
    val untraced = tracedWrite(proxy.endpoint)
    val tracing = new RocketMQProxyProcess(rocketmq.nameServer, rocketmq.clusterName,
      settings = Seq("traceOn" -> true)).start()
    try {
      val traced = tracedWrite(tracing.endpoint)
      // Once the second write's records are in, the first's would be too.
      EmbeddedRocketMQ.awaitCondition("trace records of the write through the tracing proxy",
        60000)(traced.subsetOf(RocketMQTraceRecords.tracedIds(rocketmq, traceTopic)))
      assert(untraced.size === 10 &&
        untraced.intersect(RocketMQTraceRecords.tracedIds(rocketmq, traceTopic)).isEmpty)
    } finally tracing.stop()
  }

  test(
    "a write of many rows through the proxy stores each once: no answer is lost and nothing is " +
      "sent twice") {
    // Apache's proxy writes no answer to a connection holding more than 64 KiB unread; with
    // thousands of sends in flight over one connection, answers were lost, the sends repeated, and
    // rows stored twice.
    val topic = rocketmq.newTopic("proxy-many")
    rocketmq.createTopic(topic, queues = 4)
    val n = 20000
    spark.range(0, n, 1, 2).selectExpr("CAST(id AS STRING) AS body").write.format("rocketmq")
      .options(viaProxy(topic, "sendBatchMessages" -> "1")).save()
    assert(rocketmq.latestOffsets(topic).values.sum === n.toLong)
  }

  test(
    "rows with a sharding key go through the proxy to a NORMAL topic, each key in order on one " +
      "queue") {
    val topic = rocketmq.newTopic("proxy-keyed")
    rocketmq.createTopic(topic, queues = 4, messageType = Some("NORMAL"))
    val rows = (0 until 60).map(i => (f"$i%03d", s"key-${i % 3}"))
    rows.toDF("body", "shardingKey").coalesce(1).write.format("rocketmq").options(
      viaProxy(topic)).save()
    val stored = rocketmq.readAll(topic).map(m => new String(m.getBody, "UTF-8") -> m).toMap
    assert(stored.keySet === rows.map(_._1).toSet)
    rows.groupBy(_._2).foreach { case (key, keyed) =>
      val messages = keyed.map(r => stored(r._1))
      assert(messages.map(_.getQueueId).distinct.size === 1, s"$key spread over queues")
      assert(messages.map(_.getQueueOffset) === messages.map(_.getQueueOffset).sorted,
        s"$key out of order")
    }
  }

  test("continuous and real-time queries through the proxy copy each row as it arrives") {
    val (source, target) = (rocketmq.newTopic("proxy-cont"), rocketmq.newTopic("proxy-cont-out"))
    rocketmq.createTopic(source,
      queues = 1) // local[2]: a slot for the query's one long-running read task
    rocketmq.createTopic(target, queues = 2)
    def copied(prefix: String): Seq[String] =
      rocketmq.readAll(target).map(m => new String(m.getBody, "UTF-8")).filter(_.startsWith(prefix))
    /**
     * From `start` (JSON offsets) into the target, 10 rows sent with `prefix`, each copied once.
     */
    def copyTen(trigger: Trigger, outputMode: String, start: String, prefix: String): Unit = {
      val query = spark.readStream.format("rocketmq").options(viaProxy(source,
        "startingOffsets" -> start)).load()
        .selectExpr("body").writeStream.outputMode(outputMode).format("rocketmq").options(
          viaProxy(target))
        .option("checkpointLocation", Files.createTempDirectory("rocketmq-proxy-cp-").toString)
        .trigger(trigger).start()
      try {
        rocketmq.sendBodies(source, (0 until 10).map(i => s"$prefix$i"))
        EmbeddedRocketMQ.awaitCondition(s"10 rows copied ($trigger)", 120000) {
          assert(query.exception.isEmpty, query.exception)
          copied(prefix).size >= 10
        }
      } finally query.stop()
      assert(copied(prefix).sorted === (0 until 10).map(i => s"$prefix$i").sorted)
    }
    copyTen(Trigger.Continuous("1 second"), "append", "earliest", "c")
    spark.conf.set("spark.sql.streaming.realTimeMode.allowlistCheck", "false")
    try copyTen(Trigger.RealTime("10 minutes"), "update",
        s"""{"$source":{"${rocketmq.brokerName}":{"0":10}}}""", "r")
    finally spark.conf.unset("spark.sql.streaming.realTimeMode.allowlistCheck")
  }

  test(
    "exactly-once through the proxy is refused before anything is sent, naming why and what to " +
      "do") {
    val topic = rocketmq.newTopic("proxy-eo")
    rocketmq.createTopic(topic, queues = 2, messageType = Some("TRANSACTION"))
    val message = errorMessage {
      (0 until 30).map(i => s"e$i").toDF("body").write.format("rocketmq")
        .options(viaProxy(topic, "deliveryGuarantee" -> "exactly_once")).save()
    }
    assert(message.contains("ROCKETMQ_OPTION_NOT_ALLOWED.PROXY_EXACTLY_ONCE"), message)
    assert(message.contains("deliveryGuarantee=at_least_once") &&
        message.contains("Nothing was sent"), message)
    assert(rocketmq.latestOffsets(topic).values.sum === 0L)
    // The same write to the cluster's own name server is exactly-once.
    (0 until 30).map(i => s"e$i").toDF("body").write.format("rocketmq").option("nameServer",
      rocketmq.nameServer)
      .option("topic", topic).option("deliveryGuarantee", "exactly_once").save()
    assert(
      rocketmq.readAll(topic).map(m => new String(m.getBody, "UTF-8")).sorted === (0 until 30).map(
        i => s"e$i").sorted)
  }

  test("startingOffsets=group starts where the group committed, directly and through the proxy") {
    val topic = rocketmq.newTopic("proxy-group")
    rocketmq.createTopic(topic, queues = 2)
    val q0 = (0 until 10).map(i => s"q0-$i")
    val q1 = (0 until 5).map(i => s"q1-$i")
    rocketmq.sendMessages(topic, q0.map(TestMessage(_)), queueId = Some(0))
    rocketmq.sendMessages(topic, q1.map(TestMessage(_)), queueId = Some(1))
    rocketmq.awaitIndexed()
    val group = s"g-${topic.takeRight(8)}"
    // The group has read queue 0 up to offset 6, and nothing of queue 1.
    rocketmq.commitOffset(group, RocketMQQueue(topic, rocketmq.brokerName, 0), 6L)
    def batch(nameServer: String, options: (String, String)*): Seq[String] =
      bodies(spark.read.format("rocketmq").options(Map("nameServer" -> nameServer, "topic" -> topic,
        "startingOffsets" -> "group", "consumerGroup" -> group) ++ options).load())
    for (nameServer <- Seq(rocketmq.nameServer, proxy.endpoint)) {
      // groupOffsetFallback=latest (the default): none of queue 1.
      assert(batch(nameServer).sorted === q0.drop(6).sorted, nameServer)
      assert(batch(nameServer, "groupOffsetFallback" -> "earliest").sorted ===
          (q0.drop(6) ++ q1).sorted, nameServer)
    }
    // A stream from the group's offsets reads what the group has not, and commits for it: the two
    // meet.
    val name = s"group_${topic.takeRight(8)}"
    val query =
      spark.readStream.format("rocketmq").options(viaProxy(topic, "consumerGroup" -> group,
        "startingOffsets" -> "group", "groupOffsetFallback" -> "earliest")).load()
        .select(col("body").cast("string")).writeStream.format("memory").queryName(name)
        .option("checkpointLocation", Files.createTempDirectory("rocketmq-proxy-cp-").toString)
        .trigger(Trigger.AvailableNow()).start()
    query.awaitTermination(120000)
    assert(query.exception.isEmpty, query.exception)
    assert(spark.table(name).as[String].collect().sorted === (q0.drop(6) ++ q1).sorted)
    assert(rocketmq.committedOffset(group, RocketMQQueue(topic, rocketmq.brokerName, 0)) === 10L)
    assert(rocketmq.committedOffset(group, RocketMQQueue(topic, rocketmq.brokerName, 1)) === 5L)
    assert(batch(proxy.endpoint, "groupOffsetFallback" -> "earliest").isEmpty)
    val missing = errorMessage(spark.read.format("rocketmq").options(viaProxy(topic,
      "startingOffsets" -> "group"))
      .load().collect())
    assert(missing.contains("ROCKETMQ_MISSING_OPTION.CONSUMER_GROUP") &&
        missing.contains("consumerGroup"), missing)
  }

  test(
    "the catalog reads and writes tables through the proxy; SHOW TABLES says it needs the name " +
      "server") {
    val topic = rocketmq.newTopic("proxy_cat")
    rocketmq.createTopic(topic, queues = 2)
    rocketmq.sendBodies(topic, Seq("a", "b"))
    rocketmq.awaitIndexed()
    spark.conf.set("spark.sql.catalog.viaproxy", classOf[RocketMQCatalog].getName)
    spark.conf.set("spark.sql.catalog.viaproxy.nameServer", proxy.endpoint)
    assert(bodies(spark.table(s"viaproxy.`$topic`")).sorted === Seq("a", "b"))
    val message = errorMessage(spark.sql("SHOW TABLES IN viaproxy").collect())
    assert(message.contains("ROCKETMQ_ADMIN_NOT_SERVED") && message.contains("SHOW TABLES") &&
        message.contains("console"), message)
    val create = errorMessage(spark.sql("CREATE TABLE viaproxy.`proxy_new`").collect())
    assert(create.contains("ROCKETMQ_ADMIN_NOT_SERVED"), create)
  }
}
