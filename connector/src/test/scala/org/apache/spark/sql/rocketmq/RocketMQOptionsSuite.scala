package org.apache.spark.sql.rocketmq

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.rocketmq.RocketMQOffsetRangeLimit._

class RocketMQOptionsSuite extends AnyFunSuite {

  private def options(kv: (String, String)*): RocketMQOptions = new RocketMQOptions(kv.toMap)

  private def errorOf(body: => Any): String = intercept[IllegalArgumentException](body).getMessage

  private val q0 = RocketMQQueue("t", "b", 0)
  private val q1 = RocketMQQueue("t", "b", 1)

  test("defaults") {
    val o = options("nameServer" -> "h:1", "topic" -> "t")
    assert(o.subExpression === "*")
    assert(o.pullTimeoutMs === 3000L)
    assert(o.pullBatchSize === 32)
    assert(o.failOnDataLoss)
    assert(o.batchStartingOffsets === Earliest)
    assert(o.batchEndingOffsets === Latest)
    assert(o.requestTimeoutMs === 10000L)
    assert(o.metadataRetries === 3)
    assert(o.sendTimeoutMs === 3000L)
    assert(o.maxInFlightMessages === 1000)
  }

  test("keys are case-insensitive and values trimmed") {
    val o = options("NAMESERVER" -> " h:1 ", "Topic" -> "a, b", "pullbatchsize" -> "7", "FAILONDATALOSS" -> "FALSE")
    assert(o.nameServer === "h:1")
    assert(o.topicsToRead === Seq("a", "b"))
    assert(o.pullBatchSize === 7)
    assert(!o.failOnDataLoss)
  }

  test("name server list forms") {
    assert(options("nameServer" -> "a:1;b:2").nameServer === "a:1;b:2")
    for (bad <- Seq("a", "a:", ":1", "a:0", "a:70000", "a:1;b")) {
      assert(errorOf(options("nameServer" -> bad).nameServer).contains(s"'$bad'"))
    }
  }

  test("numbers: errors name the option, the value and what is allowed") {
    val m = errorOf(options("pullBatchSize" -> "lots").pullBatchSize)
    assert(m === "[ROCKETMQ_INVALID_OPTION_VALUE] Invalid value 'lots' for option 'pullBatchSize': must be a " +
      s"positive integer (at most ${Int.MaxValue}).")
    assert(errorOf(options("metadataRetryIntervalMs" -> "-1").metadataRetryIntervalMs).contains("must be an integer >= 0"))
    assert(options("metadataRetryIntervalMs" -> "0").metadataRetryIntervalMs === 0L)
    assert(errorOf(options("failOnDataLoss" -> "yes").failOnDataLoss).contains("must be 'true' or 'false'"))
  }

  test("offset limits: keywords in any case, JSON with sentinels") {
    assert(options("startingOffsets" -> "EARLIEST").batchStartingOffsets === Earliest)
    assert(options("endingOffsets" -> "Latest").batchEndingOffsets === Latest)
    assert(options("startingOffsets" -> """{"t":{"b":{"0":5,"1":-2}}}""").batchStartingOffsets ===
      Specific(Map(q0 -> 5L, q1 -> EarliestOffset)))
    assert(errorOf(options("startingOffsets" -> """{"t":{"b":{"0":-3}}}""").batchStartingOffsets)
      .contains("offset -3 of queue t/b/0 is negative"))
  }

  test("offsets JSON round trip and shape errors") {
    val offsets = Map(q0 -> 1L, q1 -> 2L, RocketMQQueue("u", "c", 3) -> 4L)
    val json = RocketMQOffsetsJson.format(offsets)
    assert(json === """{"t":{"b":{"0":1,"1":2}},"u":{"c":{"3":4}}}""")
    assert(RocketMQOffsetsJson.parse("x", json) === offsets)
    for ((bad, detail) <- Seq(
        "[]" -> "not a JSON object",
        """{"t":1}""" -> "topic 't' must map to an object",
        """{"t":{"b":[1]}}""" -> "broker 'b' of topic 't' must map to an object",
        """{"t":{"b":{"x":1}}}""" -> "queue id 'x' is not an integer",
        """{"t":{"b":{"0":1.5}}}""" -> "must be an integer")) {
      val m = errorOf(RocketMQOffsetsJson.parse("startingOffsets", bad))
      assert(m.contains(detail) && m.contains("'startingOffsets'"), m)
    }
  }

  test("resolving limits against queue ranges (no broker request for offsets)") {
    val ranges = Map(q0 -> RocketMQQueueRange(10, 20), q1 -> RocketMQQueueRange(0, 5))
    def resolve(limit: RocketMQOffsetRangeLimit, isStart: Boolean) =
      RocketMQOffsetResolver.resolve(limit, ranges, isStart, fail("no broker request expected"))
    assert(resolve(Earliest, isStart = true) === Map(q0 -> 10L, q1 -> 0L))
    assert(resolve(Latest, isStart = false) === Map(q0 -> 20L, q1 -> 5L))
    assert(resolve(Specific(Map(q0 -> 12L)), isStart = true) === Map(q0 -> 12L, q1 -> 0L))
    assert(resolve(Specific(Map(q0 -> 12L)), isStart = false) === Map(q0 -> 12L, q1 -> 5L))
    assert(resolve(Specific(Map(q1 -> LatestOffset, q0 -> EarliestOffset)), isStart = false) === Map(q0 -> 10L, q1 -> 5L))
    val m = errorOf(resolve(Specific(Map(RocketMQQueue("t", "b", 9) -> 0L)), isStart = true))
    assert(m.contains("t/b/9") && m.contains("b/0, b/1") && m.contains("'startingOffsets'"), m)
  }

  test("start and end options exclude each other; the error names them all") {
    val m = errorOf(options("nameServer" -> "h:1", "topic" -> "t", "startingOffsets" -> "earliest",
      "startingTimestamp" -> "5", "startingOffsetsByTimestamp" -> """{"t":{"b":{"0":1}}}""").validateForStream())
    assert(m.contains("ROCKETMQ_CONFLICTING_OPTIONS") && m.contains("'startingOffsets', 'startingTimestamp', " +
      "'startingOffsetsByTimestamp'"), m)
    val m2 = errorOf(options("nameServer" -> "h:1", "topic" -> "t", "endingOffsets" -> "latest",
      "endingTimestamp" -> "5").validateForBatchRead())
    assert(m2.contains("'endingOffsets', 'endingTimestamp'"), m2)
    assert(options("startingTimestamp" -> "1700000000000").streamStartingOffsets === Timestamp(1700000000000L))
    assert(errorOf(options("startingTimestamp" -> "yesterday").streamStartingOffsets).contains("epoch"))
    assert(errorOf(options("nameServer" -> "h:1", "topic" -> "t", "sqlFilter" -> "a > 1", "subExpression" -> "x")
      .validateForStream()).contains("'subExpression', 'sqlFilter'"))
  }

  test("stream-only options refused in batch, end options refused in streaming") {
    for (k <- Seq("maxOffsetsPerTrigger", "minOffsetsPerTrigger", "maxTriggerDelay")) {
      val m = errorOf(options("nameServer" -> "h:1", "topic" -> "t", k -> "10").validateForBatchRead())
      assert(m.contains("ROCKETMQ_OPTION_NOT_ALLOWED") && m.contains(s"'$k'") && m.contains("batch"), m)
    }
    for (k <- Seq("endingOffsets", "endingTimestamp", "endingOffsetsByTimestamp")) {
      val m = errorOf(options("nameServer" -> "h:1", "topic" -> "t", k -> "5").validateForStream())
      assert(m.contains(s"'$k'") && m.contains("streaming"), m)
    }
    val m = errorOf(options("nameServer" -> "h:1", "topic" -> "t", "minOffsetsPerTrigger" -> "10",
      "maxOffsetsPerTrigger" -> "5").validateForStream())
    assert(m.contains("'minOffsetsPerTrigger'") && m.contains("maxOffsetsPerTrigger (5)"), m)
    assert(errorOf(options("consumerGroup" -> "bad group").consumerGroup).contains("RocketMQ group name"))
    assert(errorOf(options("producerGroup" -> "bad group").producerGroup).contains("'producerGroup'"))
    assert(errorOf(options("minPartitions" -> "0").minPartitions).contains("positive integer"))
  }

  test("durations") {
    assert(RocketMQOptions.parseDuration("15m") === Some(900000L))
    assert(RocketMQOptions.parseDuration("30 s") === Some(30000L))
    assert(RocketMQOptions.parseDuration("250") === Some(250L))
    assert(RocketMQOptions.parseDuration("1H") === Some(3600000L))
    assert(RocketMQOptions.parseDuration("soon") === None)
    assert(options().maxTriggerDelayMs === 900000L)
    assert(errorOf(options("maxTriggerDelay" -> "-1m").maxTriggerDelayMs).contains("'maxTriggerDelay'"))
  }

  test("streaming offsets carry a version that is checked") {
    val offset = RocketMQSourceOffset(Map(q0 -> 3L, q1 -> 4L))
    assert(offset.json() === """{"version":1,"offsets":{"t":{"b":{"0":3,"1":4}}}}""")
    assert(RocketMQSourceOffset.parse(offset.json()) === offset)
    val newer = errorOf(RocketMQSourceOffset.parse("""{"version":2,"offsets":{}}"""))
    assert(newer.contains("ROCKETMQ_INVALID_CHECKPOINT_OFFSET") && newer.contains("version 2"), newer)
    assert(errorOf(RocketMQSourceOffset.parse("""{"t":{"b":{"0":3}}}""")).contains("no integer 'version'"))
  }

  test("rate limit: exactly min(limit, backlog), shared by backlog") {
    val q2 = RocketMQQueue("t", "b", 2)
    val from = Map(q0 -> 0L, q1 -> 100L, q2 -> 50L)
    val until = Map(q0 -> 700L, q1 -> 400L, q2 -> 50L)
    val limited = RocketMQOffsetRangeCalculator.rateLimit(from, until, 100)
    assert(limited.map { case (q, u) => u - from(q) }.sum === 100)
    assert(limited === Map(q0 -> 70L, q1 -> 130L, q2 -> 50L))
    assert(RocketMQOffsetRangeCalculator.rateLimit(from, until, 5000) === until)
    val odd = RocketMQOffsetRangeCalculator.rateLimit(Map(q0 -> 0L, q1 -> 0L, q2 -> 0L),
      Map(q0 -> 10L, q1 -> 10L, q2 -> 10L), 10)
    assert(odd.values.sum === 10 && odd.values.forall(v => v == 3 || v == 4))
  }

  test("minPartitions splits large ranges; unsplit queues keep a stable preferred executor") {
    val settings = RocketMQReadSettings("h:1", "*", 1, 1, failOnDataLoss = true)
    val ranges = Seq(RocketMQOffsetRange(q0, 0, 900), RocketMQOffsetRange(q1, 0, 100))
    val parts = RocketMQOffsetRangeCalculator.partitions(ranges, Some(10), settings, Seq("executor_h_1", "executor_h_2"))
    assert(parts.map(p => p.untilOffset - p.fromOffset).sum === 1000)
    assert(parts.count(_.queue == q0) === 9 && parts.count(_.queue == q1) === 1)
    assert(parts.filter(_.queue == q0).forall(_.preferredLocation.isEmpty))
    assert(parts.find(_.queue == q1).get.preferredLocation.isDefined)
    val q0Pieces = parts.filter(_.queue == q0).sortBy(_.fromOffset)
    assert(q0Pieces.zip(q0Pieces.tail).forall { case (a, b) => a.untilOffset == b.fromOffset })
    val executors = Seq("executor_a_1", "executor_b_2", "executor_c_3")
    val chosen = (0 until 3).map(_ => RocketMQOffsetRangeCalculator.preferredExecutor(q1, executors))
    assert(chosen.distinct.size === 1 && chosen.head.isDefined)
    assert(RocketMQOffsetRangeCalculator.partitions(ranges, None, settings, Nil).size === 2)
    assert(RocketMQOffsetRangeCalculator.partitions(
      Seq(RocketMQOffsetRange(q0, 5, 5)), None, settings, Nil).isEmpty)
  }

  test("every option has documentation, and keys are unique") {
    assert(RocketMQOptionKeys.all.map(_.key).distinct.size === RocketMQOptionKeys.all.size)
    assert(RocketMQOptionKeys.all.forall(d => d.meaning.nonEmpty && d.value.nonEmpty && d.default.nonEmpty))
  }
}
