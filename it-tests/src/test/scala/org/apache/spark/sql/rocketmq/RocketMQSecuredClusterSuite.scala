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

import java.nio.charset.StandardCharsets.UTF_8

import org.apache.rocketmq.common.AbortProcessException
import org.apache.rocketmq.remoting.RPCHook
import org.apache.rocketmq.remoting.protocol.{RemotingCommand, RequestCode, ResponseCode}

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.streaming.Trigger

/**
 * Against a broker with RocketMQ 5's authentication and authorization on: the right credentials
 * read and write, batch and streaming; wrong, unknown and missing ones fail fast with an error that
 * names the access key (never the secret); a user allowed to read but not to write fails the write
 * clearly; credentials may come from the Spark configuration; a namespace scopes the topics.
 */
class RocketMQSecuredClusterSuite extends RocketMQSparkSuiteBase {
  import testImplicits._

  override protected def newRocketMQ(): EmbeddedRocketMQ = {
    val mq = new EmbeddedRocketMQ(secured = true).start()
    Runtime.getRuntime.addShutdownHook(new Thread(() => mq.discard()))
    mq
  }

  private lazy val writer = user("writer", TestSecurity.ReadWrite)
  private lazy val reader = user("reader", TestSecurity.ReadOnly)

  private def user(prefix: String, rights: Seq[org.apache.rocketmq.common.action.Action])
      : TestSecurity.User = {
    val u = TestSecurity.newUser(prefix)
    rocketmq.createUser(u, rights)
    u
  }

  private def write(topic: String, rows: Seq[String], options: Map[String, String]): Unit =
    rows.toDF("body").write.format("rocketmq").option("nameServer", rocketmq.nameServer).option(
      "topic", topic)
      .options(options).mode("append").save()

  private def read(topic: String, options: Map[String, String]): DataFrame =
    spark.read.format("rocketmq").option("nameServer", rocketmq.nameServer).option("topic", topic)
      .options(options).load()

  private def bodiesOf(df: DataFrame): Seq[String] =
    df.select("body").as[Array[Byte]].collect().map(new String(_, UTF_8)).toSeq.sorted

  test("the right credentials write and read, batch and streaming") {
    val (topic, copy) = (rocketmq.newTopic("acl"), rocketmq.newTopic("acl-copy"))
    rocketmq.createTopic(topic, queues = 2)
    rocketmq.createTopic(copy, queues = 2)
    val rows = (0 until 50).map(i => s"m$i")
    write(topic, rows, writer.options)
    assert(bodiesOf(read(topic, reader.options)) === rows.sorted)

    val checkpoint = java.nio.file.Files.createTempDirectory("acl-stream-").toString
    val query = spark.readStream.format("rocketmq").option("nameServer", rocketmq.nameServer)
      .option("topic", topic).option("startingOffsets", "earliest").options(writer.options).load()
      .select("body").writeStream.format("rocketmq").option("nameServer", rocketmq.nameServer)
      .option("topic", copy).options(writer.options).option("checkpointLocation", checkpoint)
      .trigger(Trigger.AvailableNow()).start()
    query.awaitTermination()
    assert(bodiesOf(read(copy, reader.options)) === rows.sorted)
  }

  test(
    "a wrong secret, an unknown access key and no credentials fail fast, naming the key, never " +
      "the secret") {
    val topic = rocketmq.newTopic("acl-denied")
    rocketmq.createTopic(topic, queues = 2)
    write(topic, Seq("x"), writer.options)
    // A client of the right credentials is cached by now: a wrong secret must not borrow it.
    assert(bodiesOf(read(topic, reader.options)) === Seq("x"))
    val wrongSecret = reader.copy(secretKey = s"wrong-${reader.secretKey}")
    val unknown = TestSecurity.newUser("nobody")
    for ((who, options) <- Seq(wrongSecret -> wrongSecret.options, unknown -> unknown.options)) {
      val started = System.nanoTime()
      val message = errorMessage(bodiesOf(read(topic, options)))
      val tookMs = (System.nanoTime() - started) / 1000000
      info(s"${who.accessKey}: $tookMs ms: ${message.linesIterator.next()}")
      assert(message.contains("ROCKETMQ_ACCESS_DENIED"), message)
      assert(message.contains(who.accessKey), message)
      assert(!message.contains(who.secretKey), message)
    }
    val none = errorMessage(bodiesOf(read(topic, Map.empty)))
    info(none.linesIterator.next())
    assert(none.contains("ROCKETMQ_ACCESS_DENIED"), none)
  }

  test("a user allowed to read but not to write: the read works, the write fails clearly") {
    val topic = rocketmq.newTopic("acl-ro")
    rocketmq.createTopic(topic, queues = 2)
    write(topic, Seq("a", "b"), writer.options)
    assert(bodiesOf(read(topic, reader.options)) === Seq("a", "b"))
    val message = errorMessage(write(topic, Seq("c"), reader.options))
    info(message.linesIterator.next())
    assert(message.contains("ROCKETMQ_ACCESS_DENIED"), message)
    assert(message.contains(reader.accessKey) && !message.contains(reader.secretKey), message)
    assert(bodiesOf(read(topic, reader.options)) === Seq("a", "b"))
  }

  test("credentials from the Spark configuration (spark.rocketmq.*) when the options have none") {
    val topic = rocketmq.newTopic("acl-conf")
    rocketmq.createTopic(topic, queues = 2)
    spark.conf.set("spark.rocketmq.accessKey", writer.accessKey)
    spark.conf.set("spark.rocketmq.secretKey", writer.secretKey)
    try {
      write(topic, Seq("p", "q"), Map.empty)
      assert(bodiesOf(read(topic, Map.empty)) === Seq("p", "q"))
      // An option wins over the configuration.
      val denied =
        errorMessage(read(topic, Map("accessKey" -> "nobody-at-all", "secretKey" -> "s")).collect())
      assert(denied.contains("ROCKETMQ_ACCESS_DENIED") && denied.contains("nobody-at-all"), denied)
    } finally {
      spark.conf.unset("spark.rocketmq.accessKey")
      spark.conf.unset("spark.rocketmq.secretKey")
    }
  }

  test("a namespace: what is written under it reads back under it, and is invisible without it") {
    val topic = rocketmq.newTopic("ns-t")
    val namespace = "tenant-a"
    rocketmq.createTopic(s"$namespace%$topic", queues = 2)
    rocketmq.createTopic(topic, queues = 2) // the same name outside the namespace: empty
    write(topic, Seq("n1", "n2", "n3"), writer.options + ("namespace" -> namespace))
    val back = read(topic, reader.options + ("namespace" -> namespace))
    assert(bodiesOf(back) === Seq("n1", "n2", "n3"))
    assert(back.select("topic").distinct().as[String].collect().toSeq === Seq(topic))
    assert(bodiesOf(read(topic, reader.options)).isEmpty)
    assert(rocketmq.readAll(s"$namespace%$topic").size === 3)
    assert(rocketmq.readAll(topic).isEmpty)
  }

  /** A user with exactly `rights` (`Topic:t=Sub+Get,Group:g=Sub`). */
  private def leastPrivileged(prefix: String, rights: String): TestSecurity.User = {
    val u = TestSecurity.newUser(prefix)
    TestSecurity.createUserWithRights(rocketmq.brokerController, u,
      TestSecurity.parseRights(rights))
    u
  }

  private var proxyStarted: Option[RocketMQProxyProcess] = None

  /**
   * A proxy with auth on in front of this suite's broker, started by the first test that needs it.
   */
  private def proxy: RocketMQProxyProcess = proxyStarted.getOrElse {
    val p = new RocketMQProxyProcess(rocketmq.nameServer, rocketmq.clusterName,
      auth = Some(TestSecurity.Admin)).start()
    proxyStarted = Some(p)
    p
  }

  // The proxy JVM goes with the suite, not with the test JVM: later suites share the machine's two
  // cores.
  override protected def afterAll(): Unit = {
    try proxyStarted.foreach(_.stop())
    finally super.afterAll()
  }

  test(
    "least privilege, directly and through a proxy: Sub+Get on the topic and Sub on the group " +
      "read; Pub writes") {
    val (topic, copy) = (rocketmq.newTopic("lp"), rocketmq.newTopic("lp-copy"))
    rocketmq.createTopic(topic, queues = 2)
    rocketmq.createTopic(copy, queues = 2)
    val group = s"lp-group-${topic.takeRight(8)}"
    val consumer = leastPrivileged("consumer", s"Topic:$topic=Sub+Get,Group:$group=Sub")
    val producer = leastPrivileged("producer", s"Topic:$copy=Pub")
    val rows = (0 until 20).map(i => s"m$i")
    write(topic, rows, writer.options)
    // Through a proxy planning cannot wait for indexing (docs/managed-rocketmq.md).
    rocketmq.awaitIndexed()
    for (nameServer <- Seq(rocketmq.nameServer, proxy.endpoint)) {
      val via = Map("nameServer" -> nameServer, "consumerGroup" -> group) ++ consumer.options
      val batch = spark.read.format("rocketmq").option("topic", topic).options(via).load()
      assert(bodiesOf(batch) === rows.sorted, nameServer)
      // A stream reads as the group, commits the group's offsets, and writes with the producer's
      // rights only.
      val query = spark.readStream.format("rocketmq").option("topic", topic).option(
        "startingOffsets", "earliest")
        .options(via).load().select("body").writeStream.format("rocketmq").option("nameServer",
          nameServer)
        .option("topic", copy).options(producer.options)
        .option("checkpointLocation",
          java.nio.file.Files.createTempDirectory("lp-stream-").toString)
        .trigger(Trigger.AvailableNow()).start()
      query.awaitTermination()
      assert(query.exception.isEmpty, query.exception)
      // Each queue committed at its end (a queue the writer's batches missed ends at 0).
      val ends = rocketmq.latestOffsets(topic)
      assert(ends.values.sum === rows.size.toLong)
      ends.foreach { case (queue, end) =>
        assert(rocketmq.committedOffset(group, queue) === end, s"$nameServer $queue")
      }
      ends.keys.foreach(rocketmq.commitOffset(group, _,
        0L)) // the next endpoint's stream must commit them again
    }
    assert(bodiesOf(read(copy, reader.options)) === (rows ++ rows).sorted)
  }

  test("least privilege: a missing right fails fast, naming the access key and the resource") {
    val topic = rocketmq.newTopic("lp-missing")
    rocketmq.createTopic(topic, queues = 2)
    write(topic, Seq("x"), writer.options)
    val group = s"g-${topic.takeRight(8)}"
    // Sub and Get on the topic, nothing on the group, no Pub.
    val noGroup = leastPrivileged("nogroup", s"Topic:$topic=Sub+Get")
    for (nameServer <- Seq(rocketmq.nameServer, proxy.endpoint)) {
      // ROCKETMQ_ACCESS_DENIED, not a pull retried until retryTimeoutMs ran out
      // (PULL_FAILED.RETRIES_EXHAUSTED).
      val message = errorMessage(spark.read.format("rocketmq").option("nameServer", nameServer)
        .option("topic", topic).option("consumerGroup", group).options(
          noGroup.options).load().collect())
      assert(message.contains("ROCKETMQ_ACCESS_DENIED") && message.contains(noGroup.accessKey),
        message)
      assert(message.contains(s"Group:$group") && message.contains("Sub on the consumer group"),
        message)
      assert(!message.contains(noGroup.secretKey), message)
      val write =
        errorMessage(Seq("y").toDF("body").write.format("rocketmq").option("nameServer", nameServer)
          .option("topic", topic).options(noGroup.options).mode("append").save())
      assert(write.contains("ROCKETMQ_ACCESS_DENIED") && write.contains(noGroup.accessKey), write)
      assert(write.contains("Pub on the topic"), write)
    }
  }

  /**
   * RocketMQ's ACL 2.0 grants a topic's stats with Get on the topic, as it grants each queue's
   * offsets; an authorization that counts the stats as an admin request refuses them with
   * NO_PERMISSION. The broker answers `user` so through this hook, counting the refusals.
   */
  private final class RefuseTopicStats(user: TestSecurity.User) extends RPCHook {
    val refusals = new java.util.concurrent.atomic.AtomicInteger()
    override def doBeforeRequest(remoteAddr: String, request: RemotingCommand): Unit = {
      val accessKey = Option(request.getExtFields).flatMap(f => Option(f.get("AccessKey")))
      val stats = request.getCode == RequestCode.GET_TOPIC_STATS_INFO
      if (stats && accessKey.contains(user.accessKey)) {
        refusals.incrementAndGet()
        throw new AbortProcessException(ResponseCode.NO_PERMISSION, s"${user.accessKey}: no admin")
      }
    }
    override def doAfterResponse(remote: String, request: RemotingCommand,
        response: RemotingCommand): Unit = ()
  }

  // Last: it stops the suite's broker (and starts it again).
  test("least privilege, directly: an admin request refused for the user's rights leaves a " +
    "broker outage an outage (waited for, then named), not a missing topic") {
    val topic = rocketmq.newTopic("lp-outage")
    rocketmq.createTopic(topic, queues = 2)
    write(topic, Seq("a", "b"), writer.options)
    rocketmq.awaitIndexed()
    val group = s"g-${topic.takeRight(8)}"
    val consumer = leastPrivileged("outage", s"Topic:$topic=Sub+Get,Group:$group=Sub")
    val hook = new RefuseTopicStats(consumer)
    rocketmq.brokerController.registerServerRPCHook(hook)
    val options = Map("consumerGroup" -> group, "retryTimeoutMs" -> "3000") ++ consumer.options
    // Refused the topic's stats, the plan asks each queue for its offsets instead.
    assert(bodiesOf(read(topic, options)) === Seq("a", "b"))
    assert(hook.refusals.get > 0, "the broker was not asked for the topic's stats")
    rocketmq.stopBroker()
    try {
      val started = System.nanoTime()
      val message = errorMessage(bodiesOf(read(topic, options)))
      val tookMs = (System.nanoTime() - started) / 1000000
      info(s"$tookMs ms: ${message.linesIterator.next()}")
      // The name server still tells these credentials its live brokers: none, a restart.
      assert(message.contains("[ROCKETMQ_BROKER_UNAVAILABLE.NO_LIVE_BROKER]"), message)
      assert(tookMs >= 3000, "failed before retryTimeoutMs ran out")
    } finally rocketmq.startBroker()
  }
}
