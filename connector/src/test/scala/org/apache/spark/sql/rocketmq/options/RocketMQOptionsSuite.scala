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

package org.apache.spark.sql.rocketmq.options

import java.util.concurrent.ConcurrentLinkedQueue

import scala.jdk.CollectionConverters._

import org.apache.logging.log4j.{Level, LogManager}
import org.apache.logging.log4j.core.{LogEvent, LoggerContext}
import org.apache.logging.log4j.core.appender.AbstractAppender
import org.apache.logging.log4j.core.config.{Configurator, Property}
import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.rocketmq.{RocketMQCatalog, RocketMQInvalidInputException}
import org.apache.spark.sql.rocketmq.common.{RocketMQQueue, RocketMQRateCap, RocketMQTopicSelection}
import org.apache.spark.sql.rocketmq.common.RocketMQOffsetRangeLimit._
import org.apache.spark.sql.rocketmq.consumer.RocketMQReadSettings
import org.apache.spark.sql.rocketmq.options.RocketMQOption._
import org.apache.spark.sql.rocketmq.options.RocketMQOptions._
import org.apache.spark.sql.rocketmq.producer.RocketMQWriteSettings
import org.apache.spark.sql.util.CaseInsensitiveStringMap

class RocketMQOptionsSuite extends AnyFunSuite {

  private def options(kv: (String, String)*): RocketMQOptions = new RocketMQOptions(kv.toMap)

  private val minimal = Seq("nameServer" -> "h:1", "topic" -> "t")

  private def errorOf(body: => Any): RocketMQInvalidInputException =
    intercept[RocketMQInvalidInputException](body)

  private def messageOf(body: => Any): String = errorOf(body).getMessage

  private val q0 = RocketMQQueue("t", "b", 0)
  private val q1 = RocketMQQueue("t", "b", 1)

  /**
   * A default as the option reference shows it, typed the way a user would type it (quotes
   * dropped).
   */
  private def typed(text: String): String = text.stripPrefix("\"").stripSuffix("\"")

  test("every documented default is the default in force") {
    for (option <- registry) option match {
      case o: Defaulted[_] =>
        assert(o.kind.parse(o.key, typed(o.defaultText)) === o.default,
          s"${o.key}: documented default")
        assert(options(minimal: _*)(o) === o.default, s"${o.key}: default in force")
      case o: DefaultPerQuery[_] =>
        assert(o.defaultText === s"${o.kind.render(o.streamDefault)} for streaming, " +
          s"${o.kind.render(o.batchDefault)} for batch")
        assert(o.kind.parse(o.key, typed(o.kind.render(o.streamDefault))) === o.streamDefault)
        assert(o.kind.parse(o.key, typed(o.kind.render(o.batchDefault))) === o.batchDefault)
      case o: Unset[_] =>
        assert(options(minimal: _*)(o).isEmpty || o == Topic,
          s"${o.key} is set without being given")
        assert(o.defaultText.startsWith("(") && o.defaultText != "(required)", o.key)
      case o: Required[_] =>
        assert(o.defaultText === "(required)")
        val e = errorOf(options()(o))
        assert(e.getCondition.startsWith("ROCKETMQ_MISSING_OPTION.") &&
          e.getMessage.contains(s"'${o.key}'"))
    }
    assert(options(minimal: _*).streamStartingOffsets === StartingOffsets.streamDefault)
    assert(options(minimal: _*).batchStartingOffsets === StartingOffsets.batchDefault)
    assert(options(minimal: _*).batchEndingOffsets === EndingOffsets.default)
  }

  test("setting every option to its documented default changes nothing executors or plans get") {
    def withDefaults(
        applies: QueryType => Boolean): RocketMQOptions = options(minimal ++ registry.collect {
      case o: Defaulted[_] if applies(o.queryType) => o.key -> typed(o.defaultText)
    }: _*)
    val explicit = withDefaults(_ => true)
    val unset = options(minimal: _*)
    assert(RocketMQReadSettings(explicit) === RocketMQReadSettings(unset))
    assert(RocketMQWriteSettings(explicit) === RocketMQWriteSettings(unset))
    val batch = withDefaults(_.batchRead)
    batch.validateForBatchRead()
    assert(batch.batchStartingOffsets === unset.batchStartingOffsets)
    assert(batch.batchEndingOffsets === unset.batchEndingOffsets)
    val stream =
      options(withDefaults(_.streamRead).all.toSeq :+ ("startingOffsets" -> "latest"): _*)
    stream.validateForStream()
    assert(stream.streamStartingOffsets === unset.streamStartingOffsets)
    withDefaults(_.write).validateForWrite()
  }

  test(
    "the registry: unique keys, every column of the option reference's table filled, kinds named") {
    assert(registry.map(_.key).distinct.size === registry.size)
    assert(
      registry.forall(o => o.meaning.nonEmpty && o.valueText.nonEmpty && o.defaultText.nonEmpty))
    assert(registry.map(_.kind.name).forall(_.nonEmpty))
    assert(registry.filter(_.isRequired).map(_.key) === Seq("nameServer"))
  }

  test("keys are case-insensitive and values trimmed") {
    val o = options("NAMESERVER" -> " h:1 ", "Topic" -> "a, b", "pullbatchsize" -> "7",
      "FAILONDATALOSS" -> "FALSE")
    assert(o(NameServer) === "h:1")
    assert(o.topicSelection === RocketMQTopicSelection.Named(Seq("a", "b")))
    assert(o(PullBatchSize) === 7)
    assert(!o(FailOnDataLoss))
    assert(options("subExpression" -> "  ")(SubExpression) === "*",
      "a blank name or expression counts as unset")
  }

  test("name server list forms") {
    assert(options("nameServer" -> "a:1;b:2")(NameServer) === "a:1;b:2")
    for (bad <- Seq("a", "a:", ":1", "a:0", "a:70000", "a:1;b")) {
      val e = errorOf(options("nameServer" -> bad)(NameServer))
      assert(e.getCondition === "ROCKETMQ_INVALID_OPTION_VALUE.NAME_SERVER" &&
        e.getMessage.contains(s"'$bad'"))
    }
  }

  test("expectedBrokerGroups: a number or names; what a topic's serving groups must include") {
    import org.apache.spark.sql.rocketmq.common.RocketMQExpectedGroups._
    assert(options("expectedBrokerGroups" -> "3")(ExpectedBrokerGroups) === Some(AtLeast(3)))
    assert(options("expectedBrokerGroups" -> " a , b,a")(ExpectedBrokerGroups) ===
      Some(Named(Seq("a", "b"))))
    assert(options()(ExpectedBrokerGroups) === None)
    for (bad <- Seq("0", "-1", "a b", "a,,b")) {
      val m = messageOf(options("expectedBrokerGroups" -> bad)(ExpectedBrokerGroups))
      assert(m.contains("BROKER_GROUPS") && m.contains(s"'$bad'") &&
          m.contains("'expectedBrokerGroups'"), m)
    }
    assert(AtLeast(2).satisfiedBy(Set("a", "b")) && !AtLeast(2).satisfiedBy(Set("a")))
    assert(Named(Seq("a", "b")).satisfiedBy(Set("a", "b", "c")) &&
      !Named(Seq("a", "b")).satisfiedBy(Set("a", "c")))
    assert(Named(Seq("a", "b")).describeMissing(Set("a")) === "broker group(s) 'b'")
  }

  test("numbers, booleans, names: errors name the option, the value and what is allowed") {
    assert(messageOf(options("pullBatchSize" -> "lots")(PullBatchSize)) ===
      "[ROCKETMQ_INVALID_OPTION_VALUE." +
      "POSITIVE_INTEGER] Invalid value 'lots' for option 'pullBatchSize': must be a positive " +
      s"integer (at most ${Int.MaxValue}).")
    assert(messageOf(options("pullBatchSize" -> "2147483648")(PullBatchSize)).contains(
      "at most 2147483647"))
    assert(options("pullTimeoutMs" -> "2147483648")(PullTimeoutMs) === 2147483648L)
    assert(messageOf(options("metadataRetryIntervalMs" -> "-1")(MetadataRetryIntervalMs))
      .contains("must be an integer >= 0"))
    assert(options("metadataRetryIntervalMs" -> "0")(MetadataRetryIntervalMs) === 0L)
    assert(
      messageOf(options("sendRetries" -> "x")(SendRetries)).contains("must be an integer >= 0"))
    assert(messageOf(options("failOnDataLoss" -> "yes")(FailOnDataLoss)).contains(
      "must be 'true' or 'false'"))
    assert(messageOf(options("consumerGroup" -> "bad group")(ConsumerGroup)).contains(
      "RocketMQ group name"))
    assert(
      messageOf(options("producerGroup" -> "bad group")(ProducerGroup)).contains("'producerGroup'"))
    assert(messageOf(options("minPartitions" -> "0")(MinPartitions)).contains("positive integer"))
    val topic = errorOf(options("topic" -> "a,b c").topicSelection)
    assert(topic.getCondition === "ROCKETMQ_INVALID_OPTION_VALUE.TOPIC_NAME")
    assert(topic.getMessageParameters.get("topic") === "b c")
    assert(
      errorOf(options("topic" -> "a,b").topicToWrite).getMessageParameters.get("topic") === "a,b")
    assert(errorOf(options().topicSelection).getCondition === "ROCKETMQ_MISSING_OPTION.TOPIC")
  }

  test(
    "traces: off by default, RocketMQ's trace topic unless one is named, which must be a topic") {
    assert(!options()(TraceEnabled) && options()(TraceTopic) === "RMQ_SYS_TRACE_TOPIC")
    val traced = options("traceEnabled" -> "TRUE", "traceTopic" -> "audit_trace")
    assert(traced(TraceEnabled) && traced(TraceTopic) === "audit_trace")
    assert(messageOf(options("traceEnabled" -> "yes")(TraceEnabled)).contains("'traceEnabled'"))
    val bad = messageOf(options("traceTopic" -> "a,b")(TraceTopic))
    assert(bad.contains("'traceTopic'") && bad.contains("'a,b'"), bad)
  }

  test("rate caps: a whole query's, split evenly over the tasks that run at once") {
    assert(options().rateCap === RocketMQRateCap.None && options().rateCap.newPacer() == null)
    val cap = options("maxMessagesPerSecond" -> "1000", "maxBytesPerSecond" -> "3000").rateCap
    assert(cap === RocketMQRateCap(Some(1000L), Some(3000L)))
    assert(cap.perTask(4) === RocketMQRateCap(Some(250L), Some(750L)))
    assert(cap.perTask(0) === cap && cap.perTask(5000).messages === Some(1L))
    assert(messageOf(options("maxMessagesPerSecond" -> "0")(MaxMessagesPerSecond)).contains(
      "'maxMessagesPerSecond'"))
  }

  test(
    "topicPattern: a Java regular expression in place of topic (not with it), matching whole " +
      "names and never RocketMQ's own topics") {
    val matching = options("topicPattern" -> "orders-.*").topicSelection
    Seq("orders-eu", "orders-").foreach(t => assert(matching.admits(t), t))
    assert(!matching.admits("orders") && !matching.admits("x-orders-eu"))
    val everything = options("topicPattern" -> ".*").topicSelection
    assert(everything.admits("orders"))
    Seq("%RETRY%orders-g", "%DLQ%orders-g", "rmq_sys_orders-x", "RMQ_SYS_TRANS_HALF_TOPIC",
      "TBW102").foreach(t => assert(!everything.admits(t), t))
    val bad = errorOf(options("topicPattern" -> "orders-(").topicSelection)
    assert(bad.getCondition === "ROCKETMQ_INVALID_OPTION_VALUE.TOPIC_PATTERN")
    assert(bad.getMessage.contains("'topicPattern'") && bad.getMessage.contains("'orders-('"))
    val both = errorOf(options("topic" -> "a", "topicPattern" -> "a.*").topicSelection)
    assert(both.getCondition === "ROCKETMQ_CONFLICTING_OPTIONS")
    assert(both.getMessage.contains("'topic', 'topicPattern'"))
    // Offsets JSON may name any topic the pattern reads, and no other.
    val named = options("nameServer" -> "h:1", "topicPattern" -> "orders-.*",
      "startingOffsets" -> """{"orders-eu":{"b":{"0":1}}}""")
    named.validateForStream()
    val other = errorOf(options("nameServer" -> "h:1", "topicPattern" -> "orders-.*",
      "startingOffsets" -> """{"refunds":{"b":{"0":1}}}""").validateForStream())
    assert(other.getCondition === "ROCKETMQ_INVALID_OPTION_VALUE.TOPIC_NOT_READ")
    assert(other.getMessage.contains("topics matching /orders-.*/"))
  }

  test(
    "an SQL92 filter RocketMQ cannot compile is refused, naming the option and the compiler's " +
      "reason") {
    assert(options("sqlFilter" -> "seq >= 60 AND TAGS = 'a'")(SqlFilter) ===
      Some("seq >= 60 AND TAGS = 'a'"))
    for (bad <- Seq("seq >>> 5", "seq >= 'x'", "seq >=")) {
      val e = errorOf(options(minimal :+ ("sqlFilter" -> bad): _*).validateForBatchRead())
      assert(e.getCondition === "ROCKETMQ_INVALID_OPTION_VALUE.SQL92", bad)
      assert(e.getMessage.contains(s"'$bad'") && e.getMessage.contains("'sqlFilter'"), e.getMessage)
      assert(e.getMessageParameters.get("parseError").nonEmpty, bad)
    }
  }

  test("offset limits: keywords in any case, JSON with sentinels, batch limits refused") {
    assert(options("startingOffsets" -> "EARLIEST").batchStartingOffsets === Earliest)
    assert(options("endingOffsets" -> "Latest").batchEndingOffsets === Latest)
    assert(options("startingOffsets" -> """{"t":{"b":{"0":5,"1":-2}}}""").batchStartingOffsets ===
      Specific(Map(q0 -> 5L, q1 -> EarliestOffset)))
    assert(messageOf(options("startingOffsets" -> """{"t":{"b":{"0":-3}}}""").batchStartingOffsets)
      .contains("offset -3 of queue t/b/0 is negative"))
    for ((kv, sub) <- Seq(
        ("startingOffsets" -> "latest") -> "LATEST_BATCH_START",
        ("startingOffsets" -> """{"t":{"b":{"0":-1}}}""") -> "LATEST_OFFSET_BATCH_START",
        ("endingOffsets" -> "earliest") -> "EARLIEST_END",
        ("endingOffsets" -> """{"t":{"b":{"0":-2}}}""") -> "EARLIEST_OFFSET_END",
        ("startingOffsets" -> "soon") -> "OFFSET_KEYWORD")) {
      val e = errorOf(options(minimal :+ kv: _*).validateForBatchRead())
      assert(e.getCondition === s"ROCKETMQ_INVALID_OPTION_VALUE.$sub" &&
        e.getMessage.contains(s"'${kv._1}'"))
    }
    val other =
      errorOf(options(minimal :+ ("startingOffsetsByTimestamp" -> """{"u":{"b":{"0":1}}}"""): _*)
        .validateForStream())
    assert(other.getCondition === "ROCKETMQ_INVALID_OPTION_VALUE.TOPIC_NOT_READ")
    assert(other.getMessage.contains("topic 'u'") &&
      other.getMessage.contains("'startingOffsetsByTimestamp'"))
    assert(errorOf(
      options("startingOffsetsByTimestamp" -> """{"t":{"b":{"0":-5}}}""").streamStartingOffsets)
      .getCondition === "ROCKETMQ_INVALID_OPTION_VALUE.NEGATIVE_TIMESTAMP")
  }

  test("start and end options exclude each other; the error names them all") {
    val m =
      messageOf(options("nameServer" -> "h:1", "topic" -> "t", "startingOffsets" -> "earliest",
        "startingTimestamp" -> "5",
        "startingOffsetsByTimestamp" -> """{"t":{"b":{"0":1}}}""").validateForStream())
    assert(m.contains("ROCKETMQ_CONFLICTING_OPTIONS") &&
        m.contains("'startingOffsets', 'startingTimestamp', 'startingOffsetsByTimestamp'"), m)
    val m2 = messageOf(options("nameServer" -> "h:1", "topic" -> "t", "endingOffsets" -> "latest",
      "endingTimestamp" -> "5").validateForBatchRead())
    assert(m2.contains("'endingOffsets', 'endingTimestamp'"), m2)
    assert(options("startingTimestamp" -> "1700000000000").streamStartingOffsets ===
      Timestamp(1700000000000L))
    assert(messageOf(options("startingTimestamp" -> "yesterday").streamStartingOffsets).contains(
      "epoch"))
    assert(messageOf(options("nameServer" -> "h:1", "topic" -> "t", "sqlFilter" -> "a > 1",
      "subExpression" -> "x")
      .validateForStream()).contains("'subExpression', 'sqlFilter'"))
  }

  test("stream-only options refused in batch, batch-only options refused in streaming") {
    for (k <- Seq("maxOffsetsPerTrigger", "minOffsetsPerTrigger", "maxTriggerDelay")) {
      val e =
        errorOf(options("nameServer" -> "h:1", "topic" -> "t", k -> "10").validateForBatchRead())
      assert(
        e.getCondition === "ROCKETMQ_OPTION_NOT_ALLOWED.BATCH" && e.getMessage.contains(s"'$k'"))
    }
    for (k <- Seq("endingOffsets", "endingTimestamp", "endingOffsetsByTimestamp")) {
      val e = errorOf(options("nameServer" -> "h:1", "topic" -> "t", k -> "5").validateForStream())
      assert(e.getCondition === "ROCKETMQ_OPTION_NOT_ALLOWED.STREAMING" &&
        e.getMessage.contains(s"'$k'"))
    }
    val m = messageOf(options("nameServer" -> "h:1", "topic" -> "t", "minOffsetsPerTrigger" -> "10",
      "maxOffsetsPerTrigger" -> "5").validateForStream())
    assert(m.contains("'minOffsetsPerTrigger'") && m.contains("maxOffsetsPerTrigger (5)"), m)
  }

  test("durations") {
    def duration(text: String): Long = options("maxTriggerDelay" -> text)(MaxTriggerDelay)
    assert(duration("15m") === 900000L)
    assert(duration("30 s") === 30000L)
    assert(duration("250") === 250L)
    assert(duration("1H") === 3600000L)
    assert(duration("2min") === 120000L)
    assert(options()(MaxTriggerDelay) === 900000L)
    for (bad <- Seq("soon", "-1m", "99999999999999999d")) {
      assert(errorOf(duration(bad)).getCondition === "ROCKETMQ_INVALID_OPTION_VALUE.DURATION", bad)
    }
    val kind = RocketMQOptionKind.Duration
    for (ms <- Seq(1L, 1500L, 60000L, 900000L, 7200000L, 86400000L)) {
      assert(kind.parse("k", kind.render(ms)) === ms, kind.render(ms))
    }
  }

  private def initializeCatalog(kv: (String, String)*): Unit =
    new RocketMQCatalog()
      .initialize("rmq", new CaseInsensitiveStringMap((minimal ++ kv).toMap.asJava))

  test("a key close to an option's fails, naming it, its value and the option meant") {
    val cases = Seq(
      "startingOffset" -> "startingOffsets", // a letter left out
      "STARTINGOFSETS" -> "startingOffsets", // another, in another case
      "pullBatchSzie" -> "pullBatchSize", // two letters swapped
      "pullTimeout" -> "pullTimeoutMs", // the unit left out
      "topics" -> "topic",
      "readAhead" -> "readAheadBytes", // cut short
      "consumerGroupName" -> "consumerGroup", // extended
      "rocketmq.subExpression" -> "subExpression") // qualified
    for ((key, meant) <- cases) {
      val e = errorOf(options(minimal :+ (key -> "earliest"): _*).validateForStream())
      assert(e.getCondition === "ROCKETMQ_OPTION_NOT_ALLOWED.UNKNOWN_OPTION", key)
      val m = e.getMessage
      assert(m.contains(s"Option '$key'") && m.contains(s"Did you mean '$meant'?") &&
          m.contains("'earliest'"), m)
    }
    // Batch reads, writes and the catalog check their keys too.
    val batch =
      errorOf(options(minimal :+ ("endingOffset" -> "latest"): _*).validateForBatchRead())
    assert(batch.getMessage.contains("'endingOffsets'"), batch.getMessage)
    val write = errorOf(options(minimal :+ ("sendTimeout" -> "5000"): _*).validateForWrite())
    assert(write.getMessage.contains("'sendTimeoutMs'"), write.getMessage)
    val catalog = errorOf(initializeCatalog("allowDropTabel" -> "true"))
    assert(catalog.getMessage.contains("'allowDropTable'"), catalog.getMessage)
    // A secret's value never shows.
    val secret = errorOf(options(minimal :+ ("secretKy" -> "s3cr3t"): _*).validateForWrite())
    assert(secret.getMessage.contains("'secretKey'") && !secret.getMessage.contains("s3cr3t"),
      secret.getMessage)
  }

  /** The keys Spark itself passes among a source's, a sink's or a catalog's options. */
  private val sparkKeys = Seq("path", "paths", "checkpointLocation", "queryName",
    "asyncProgressTrackingEnabled", "asyncProgressTrackingCheckpointIntervalMs",
    "_asyncProgressTrackingOverrideSinkSupportCheck", "__partition_columns")

  test("other unknown keys, and the keys Spark passes itself, are accepted") {
    val unknown = Seq("vendorQuotaUnit", "flinkParallelism", "futureOption")
    val passed = minimal ++ (unknown ++ sparkKeys).map(_ -> "1")
    options(passed: _*).validateForStream()
    options(passed: _*).validateForBatchRead()
    options(passed: _*).validateForWrite()
    initializeCatalog(passed: _*)
  }

  /** The WARN messages of the connector's option checks while `body` runs. */
  private def warnings(body: => Unit): Seq[String] = {
    val logger = "org.apache.spark.sql.rocketmq.options"
    val lines = new ConcurrentLinkedQueue[String]()
    val capture = new AbstractAppender("option-keys", null, null, true, Property.EMPTY_ARRAY) {
      override def append(event: LogEvent): Unit =
        if (event.getLevel == Level.WARN && event.getLoggerName.startsWith(logger)) {
          lines.add(event.getMessage.getFormattedMessage)
        }
    }
    val context = LogManager.getContext(false).asInstanceOf[LoggerContext]
    val root = context.getConfiguration.getRootLogger
    val level = LogManager.getLogger(logger).getLevel
    capture.start()
    root.addAppender(capture, Level.WARN, null)
    Configurator.setLevel(logger, Level.WARN)
    try body
    finally {
      root.removeAppender(capture.getName)
      Configurator.setLevel(logger, level)
    }
    lines.asScala.toSeq
  }

  test("other unknown keys are logged once at WARN, by name only; Spark's keys are not") {
    val made = s"madeUpOption${System.nanoTime()}"
    val passed = options((minimal :+ (made -> "v4lue")) ++ sparkKeys.map(_ -> "1"): _*)
    val logged = warnings {
      passed.validateForStream()
      passed.validateForWrite() // a stream's write is checked again every micro-batch
    }
    assert(logged.count(_.contains(made)) === 1, logged)
    val leaked = logged.filter(l => l.contains("v4lue") || sparkKeys.exists(k => l.contains(k)))
    assert(leaked.isEmpty, logged)
  }
}
