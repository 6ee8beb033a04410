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

/**
 * Each kind of bad input fails fast with an error naming the option or column, the value and what
 * is allowed.
 */
class RocketMQBadInputSuite extends RocketMQSparkSuiteBase {

  import testImplicits._

  private def readError(options: (String, String)*): String =
    errorMessage(spark.read.format("rocketmq").options(options.toMap).load().collect())

  private lazy val topic: String = {
    val t = rocketmq.newTopic()
    rocketmq.createTopic(t, queues = 2)
    t
  }

  private def assertContainsAll(message: String, parts: String*): Unit =
    parts.foreach(p => assert(message.contains(p), s"expected '$p' in:\n$message"))

  test("missing nameServer or topic") {
    assertContainsAll(readError("topic" -> topic), "ROCKETMQ_MISSING_OPTION", "'nameServer'",
      "host:port")
    assertContainsAll(readError("nameServer" -> rocketmq.nameServer), "ROCKETMQ_MISSING_OPTION",
      "'topic'")
  }

  test("malformed startingOffsets JSON") {
    val m = readError("nameServer" -> rocketmq.nameServer, "topic" -> topic,
      "startingOffsets" -> """{"x":""")
    assertContainsAll(m, "'startingOffsets'", """'{"x":'""", "not valid JSON",
      "topic -> broker -> queue id")
    val m2 = readError("nameServer" -> rocketmq.nameServer, "topic" -> topic,
      "startingOffsets" -> s"""{"$topic":{"broker-a":{"0":"abc"}}}""")
    assertContainsAll(m2, "ROCKETMQ_INVALID_OFFSETS_JSON.VALUE_NOT_AN_INTEGER", "'startingOffsets'",
      "\"abc\", not an integer")
    val m3 = readError("nameServer" -> rocketmq.nameServer, "topic" -> topic,
      "startingOffsets" -> "beginning")
    assertContainsAll(m3, "'beginning'", "'startingOffsets'",
      "'earliest', 'latest', 'group' or a JSON object")
  }

  test("latest as a batch startingOffsets, and -1 in its JSON") {
    val m = readError("nameServer" -> rocketmq.nameServer, "topic" -> topic,
      "startingOffsets" -> "latest")
    assertContainsAll(m, "ROCKETMQ_INVALID_OPTION_VALUE", "'latest'", "'startingOffsets'",
      "'earliest'")
    val m2 = readError("nameServer" -> rocketmq.nameServer, "topic" -> topic,
      "startingOffsets" -> s"""{"$topic":{"broker-a":{"0":-1}}}""")
    assertContainsAll(m2, "'startingOffsets'", "-1 (latest) is not allowed")
  }

  test("earliest as endingOffsets, and -2 in its JSON") {
    val m = readError("nameServer" -> rocketmq.nameServer, "topic" -> topic,
      "endingOffsets" -> "earliest")
    assertContainsAll(m, "'earliest'", "'endingOffsets'", "'latest' or JSON")
    val m2 = readError("nameServer" -> rocketmq.nameServer, "topic" -> topic,
      "endingOffsets" -> s"""{"$topic":{"broker-a":{"0":-2}}}""")
    assertContainsAll(m2, "'endingOffsets'", "-2 (earliest) is not allowed")
  }

  test("JSON offsets naming a queue the topic does not have, or another topic") {
    val m = readError("nameServer" -> rocketmq.nameServer, "topic" -> topic,
      "startingOffsets" -> s"""{"$topic":{"broker-a":{"7":0}}}""")
    assertContainsAll(m, "ROCKETMQ_UNKNOWN_QUEUE", s"$topic/broker-a/7", "broker-a/0, broker-a/1")
    val m2 = readError("nameServer" -> rocketmq.nameServer, "topic" -> topic,
      "startingOffsets" -> """{"other":{"broker-a":{"0":0}}}""")
    assertContainsAll(m2, "'startingOffsets'", "topic 'other'", "which the query does not read",
      s"it reads $topic")
  }

  test("non-positive or non-numeric pullBatchSize and pullTimeoutMs") {
    for (key <- Seq("pullBatchSize", "pullTimeoutMs"); value <- Seq("0", "-5", "abc", "1.5")) {
      val m = readError("nameServer" -> rocketmq.nameServer, "topic" -> topic, key -> value)
      assertContainsAll(m, "ROCKETMQ_INVALID_OPTION_VALUE", s"'$value'", s"'$key'",
        "must be a positive integer")
    }
  }

  test("a malformed name server address or topic name") {
    assertContainsAll(readError("nameServer" -> "localhost", "topic" -> topic), "'localhost'",
      "'nameServer'",
      "host:port")
    assertContainsAll(readError("nameServer" -> rocketmq.nameServer, "topic" -> "bad topic!"),
      "'topic'", "'bad topic!'", "not a valid RocketMQ topic name")
  }

  test("an unreachable name server fails within a bounded time, naming the address") {
    val socket = new java.net.ServerSocket(0)
    val closedPort = socket.getLocalPort
    socket.close()
    val address = s"127.0.0.1:$closedPort"
    val started = System.nanoTime()
    val m = readError("nameServer" -> address, "topic" -> topic, "requestTimeoutMs" -> "2000",
      "metadataRetries" -> "2", "metadataRetryIntervalMs" -> "100")
    val seconds = (System.nanoTime() - started) / 1e9
    assertContainsAll(m, "ROCKETMQ_NAME_SERVER_UNREACHABLE", address, "'nameServer'",
      "2 attempt(s)")
    assert(seconds < 30, s"took $seconds s")
  }

  test("a topic that does not exist, when reading and when writing") {
    assertContainsAll(readError("nameServer" -> rocketmq.nameServer, "topic" -> "no-such-topic"),
      "ROCKETMQ_TOPIC_NOT_FOUND", "'no-such-topic'", rocketmq.nameServer)
    val m = errorMessage(Seq("a").toDF("body").write.format("rocketmq")
      .option("nameServer", rocketmq.nameServer).option("topic", "no-such-topic").save())
    assertContainsAll(m, "ROCKETMQ_TOPIC_NOT_FOUND", "'no-such-topic'")
  }

  test("sink: no body column, body of another type, no topic in option or column") {
    def write(df: org.apache.spark.sql.DataFrame, options: (String, String)*): String =
      errorMessage(df.write.format("rocketmq").option("nameServer", rocketmq.nameServer).options(
        options.toMap).save())
    assertContainsAll(write(Seq("x").toDF("value"), "topic" -> topic),
      "ROCKETMQ_MISSING_COLUMN", "'body'", "STRING or BINARY", "value")
    assertContainsAll(write(Seq(1).toDF("body"), "topic" -> topic),
      "ROCKETMQ_INVALID_COLUMN_TYPE", "'body'", "INT", "STRING or BINARY")
    assertContainsAll(write(Seq(("x", 5)).toDF("body", "topic")),
      "ROCKETMQ_INVALID_COLUMN_TYPE", "'topic'", "INT", "STRING")
    assertContainsAll(write(Seq("x").toDF("body")), "ROCKETMQ_MISSING_COLUMN", "'topic'",
      "option 'topic'")
  }

  test("sink: overwrite and ignore save modes are refused") {
    for (mode <- Seq("overwrite", "ignore")) {
      val m = errorMessage(Seq("x").toDF("body").write.format("rocketmq").mode(mode)
        .option("nameServer", rocketmq.nameServer).option("topic", topic).save())
      assertContainsAll(m, "ROCKETMQ_SAVE_MODE_NOT_SUPPORTED", s"'$mode'", "'append'")
    }
  }

  test("a user-specified schema is refused") {
    val e = intercept[Exception](spark.read.format("rocketmq").schema("a INT")
      .option("nameServer", rocketmq.nameServer).option("topic", topic).load())
    assert(e.getMessage.toLowerCase.contains("schema"), e.getMessage)
  }

  private def streamError(options: (String, String)*): String = errorMessage {
    val q = spark.readStream.format("rocketmq").option("nameServer", rocketmq.nameServer).option(
      "topic", topic)
      .options(options.toMap).load().writeStream.format("memory").queryName(
        s"bad_${System.nanoTime()}").start()
    try q.processAllAvailable()
    finally q.stop()
  }

  test("streaming: end options are refused, and conflicting start options are named together") {
    assertContainsAll(streamError("endingOffsets" -> "latest"), "ROCKETMQ_OPTION_NOT_ALLOWED",
      "'endingOffsets'",
      "streaming", "Trigger.AvailableNow")
    assertContainsAll(streamError("startingOffsets" -> "earliest", "startingTimestamp" -> "0"),
      "ROCKETMQ_CONFLICTING_OPTIONS", "'startingOffsets', 'startingTimestamp'")
    assertContainsAll(streamError("maxOffsetsPerTrigger" -> "0"), "'maxOffsetsPerTrigger'", "'0'",
      "positive integer")
    assertContainsAll(streamError("maxTriggerDelay" -> "soon"), "'maxTriggerDelay'", "'soon'",
      "duration")
  }

  test("batch: maxOffsetsPerTrigger and friends are refused with a clear message") {
    for (key <- Seq("maxOffsetsPerTrigger", "minOffsetsPerTrigger", "maxTriggerDelay")) {
      assertContainsAll(readError("nameServer" -> rocketmq.nameServer, "topic" -> topic,
        key -> "10"),
        "ROCKETMQ_OPTION_NOT_ALLOWED", s"'$key'", "batch")
    }
  }
}
