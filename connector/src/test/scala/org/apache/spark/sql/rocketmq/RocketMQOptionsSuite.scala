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

  test("resolving limits against queue ranges") {
    val ranges = Map(q0 -> RocketMQQueueRange(10, 20), q1 -> RocketMQQueueRange(0, 5))
    val start = RocketMQOptions.StartingOffsets
    val end = RocketMQOptions.EndingOffsets
    assert(RocketMQOffsetResolver.resolve(Earliest, ranges, start) === Map(q0 -> 10L, q1 -> 0L))
    assert(RocketMQOffsetResolver.resolve(Latest, ranges, end) === Map(q0 -> 20L, q1 -> 5L))
    assert(RocketMQOffsetResolver.resolve(Specific(Map(q0 -> 12L)), ranges, start) === Map(q0 -> 12L, q1 -> 0L))
    assert(RocketMQOffsetResolver.resolve(Specific(Map(q0 -> 12L)), ranges, end) === Map(q0 -> 12L, q1 -> 5L))
    assert(RocketMQOffsetResolver.resolve(Specific(Map(q1 -> LatestOffset, q0 -> EarliestOffset)), ranges, end) ===
      Map(q0 -> 10L, q1 -> 5L))
    val m = errorOf(RocketMQOffsetResolver.resolve(Specific(Map(RocketMQQueue("t", "b", 9) -> 0L)), ranges, start))
    assert(m.contains("t/b/9") && m.contains("b/0, b/1") && m.contains("'startingOffsets'"), m)
  }

  test("every option has documentation, and keys are unique") {
    assert(RocketMQOptions.all.map(_.key).distinct.size === RocketMQOptions.all.size)
    assert(RocketMQOptions.all.forall(d => d.meaning.nonEmpty && d.value.nonEmpty && d.default.nonEmpty))
  }
}
