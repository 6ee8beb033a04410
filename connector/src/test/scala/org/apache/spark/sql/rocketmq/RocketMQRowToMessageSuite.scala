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

import scala.jdk.CollectionConverters._

import org.apache.rocketmq.common.message.{Message, MessageAccessor, MessageConst, MessageExt}
import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.util.{ArrayBasedMapData, GenericArrayData}
import org.apache.spark.sql.rocketmq.common.RocketMQQueue
import org.apache.spark.sql.rocketmq.options.RocketMQOptions
import org.apache.spark.sql.rocketmq.producer.RocketMQWriteSettings
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

class RocketMQRowToMessageSuite extends AnyFunSuite {

  private val schema = new StructType()
    .add("body", BinaryType).add("topic", StringType).add("tags", StringType)
    .add("keys", ArrayType(StringType)).add("properties", MapType(StringType, StringType))
    .add("shardingKey", StringType).add("deliverTime", TimestampType)

  private val settings = RocketMQWriteSettings(new RocketMQOptions(Map("nameServer" -> "h:1")))
  private val converter =
    new RocketMQRowToMessage(settings, RocketMQWriteColumns.resolve(schema, None))

  private def s(v: String) = if (v == null) null else UTF8String.fromString(v)

  private def row(properties: Map[String, String] = Map("a" -> "1"),
      keys: Seq[String] = Seq("k1", null, "k2"),
      deliverMicros: java.lang.Long = 1700000000123456L,
      body: Array[Byte] = "b".getBytes(StandardCharsets.UTF_8))
      : InternalRow = InternalRow(body, s("t"), s("tag"),
    new GenericArrayData(keys.map(s).toArray[Any]),
    ArrayBasedMapData(properties.keys.map(s).toArray[Any], properties.values.map(s).toArray[Any]),
    s("shard-1"), deliverMicros)

  test("every column reaches the message") {
    val m = converter.toMessage(row(), 0)
    assert(m.getTopic === "t" && new String(m.getBody, StandardCharsets.UTF_8) === "b")
    assert(m.getTags === "tag")
    assert(m.getKeys === "k1 k2")
    assert(m.getUserProperty("a") === "1")
    assert(m.getDeliverTimeMs === 1700000000123L)
    assert(converter.shardingKey(row()) === "shard-1")
  }

  test(
    "reserved, blank or control-character property names are refused, naming the column and row") {
    for ((name, problem) <-
        Seq("TAGS" -> "RESERVED", " " -> "BLANK", "a\u0001b" -> "CONTROL_CHARACTER")) {
      val e = intercept[RocketMQInvalidInputException](
        converter.toMessage(row(properties = Map(name -> "v")), 7))
      assert(e.getCondition === s"ROCKETMQ_INVALID_PROPERTY_NAME.$problem")
      assert(e.getMessage.contains("Row 7") && e.getMessage.contains("'properties'") &&
          e.getMessage.contains(s"'$name'"), e.getMessage)
    }
  }

  test(
    "a priority reaches the message; a negative one, or one beside a sharding key or a delivery " +
      "time (which make RocketMQ drop it), fails naming the row") {
    val schema = new StructType().add("body", StringType).add("priority", IntegerType)
      .add("shardingKey", StringType).add("deliverTime", LongType)
    val converter = new RocketMQRowToMessage(settings.copy(topic = Some("t")),
      RocketMQWriteColumns.resolve(schema, Some("t")))
    def row(priority: Integer, key: String = null, deliverMs: java.lang.Long = null) =
      InternalRow(s("b"), priority, s(key), deliverMs)
    assert(converter.toMessage(row(3), 0).getPriority === 3)
    assert(converter.toMessage(row(null), 0).getPriority === -1)
    val negative = intercept[RocketMQInvalidInputException](converter.toMessage(row(-1), 4))
    assert(negative.getCondition === "ROCKETMQ_INVALID_PRIORITY")
    assert(negative.getMessage.contains("Row 4") && negative.getMessage.contains("-1"))
    for ((r, sub) <- Seq(row(2, key = "k") -> "SHARDING_KEY",
        row(2, deliverMs = 1700000000000L) -> "DELIVERY_TIME")) {
      val e = intercept[RocketMQInvalidInputException](converter.toMessage(r, 9))
      assert(e.getCondition === s"ROCKETMQ_PRIORITY_NOT_HONOURED.$sub")
      assert(e.getMessage.contains("Row 9"), e.getMessage)
    }
    val wrongType = intercept[RocketMQInvalidInputException](RocketMQWriteColumns.resolve(
      new StructType().add("body", StringType).add("priority", StringType), Some("t")))
    assert(wrongType.getCondition === "ROCKETMQ_INVALID_COLUMN_TYPE")
    assert(wrongType.getMessage.contains("'priority'") && wrongType.getMessage.contains("INT"))
  }

  test("a blank property value is refused, naming column, row and property; null is left out") {
    for (value <- Seq("", "  ", "\t")) {
      val e = intercept[RocketMQInvalidInputException](
        converter.toMessage(row(properties = Map("a" -> value)), 7))
      assert(e.getCondition === "ROCKETMQ_INVALID_PROPERTY_VALUE.BLANK")
      val m = e.getMessage
      assert(m.contains("Row 7") && m.contains("'properties'") && m.contains("'a'") &&
          m.contains("leave the property out"), m)
    }
    val json = intercept[RocketMQInvalidInputException](
      fromJson.toMessage(InternalRow(s("x"), null, s("""{"region":" "}""")), 2))
    assert(json.getCondition === "ROCKETMQ_INVALID_PROPERTY_VALUE.BLANK")
    assert(json.getMessage.contains("'region'"), json.getMessage)
    val withNull = converter.toMessage(row(properties = Map("a" -> null, "b" -> "1")), 0)
    assert(userProperties(withNull) === Map("b" -> "1"))
  }

  test("nulls: a null body fails naming the column; optional columns may be null") {
    val e = intercept[RocketMQInvalidInputException](converter.toMessage(row(body = null), 3))
    assert(e.getCondition === "ROCKETMQ_NULL_COLUMN_VALUE.BODY" && e.getMessage.contains("'body'"))
    val m =
      converter.toMessage(InternalRow("x".getBytes(StandardCharsets.UTF_8), s("t"), null, null,
        null, null, null), 0)
    assert(m.getTags === null && m.getKeys === null && m.getDeliverTimeMs === 0L)
  }

  test("a delivery delay option sets the deliver time when no column does") {
    val delayed =
      new RocketMQRowToMessage(settings.copy(topic = Some("t"), deliveryDelayMs = Some(60000L)),
        RocketMQWriteColumns.resolve(new StructType().add("body", StringType), Some("t")))
    val before = System.currentTimeMillis()
    val m = delayed.toMessage(InternalRow(s("x")), 0)
    assert(m.getDeliverTimeMs >= before + 60000L &&
      m.getDeliverTimeMs <= System.currentTimeMillis() + 60000L)
  }

  /** A converter of rows (body, tags, properties) whose properties are the JSON text of a read. */
  private val fromJson = new RocketMQRowToMessage(settings.copy(topic = Some("t")),
    RocketMQWriteColumns.resolve(
      new StructType().add("body", StringType).add("tags", StringType).add("properties",
        StringType), Some("t")))

  private def userProperties(m: Message): Map[String, String] =
    m.getProperties.asScala.toMap.filter { case (k, _) =>
      !MessageConst.STRING_HASH_SET.contains(k)
    }

  test(
    "a STRING properties column takes the JSON a read gives: user properties, and tags and keys") {
    val stored = new MessageExt()
    stored.setTopic("a")
    stored.setBody(Array[Byte](1))
    val properties =
      Map("region" -> "eu", "q\"uote" -> "line\nbreak\\ \u0001", "ключ" -> "世界 \uD83D\uDE80")
    properties.foreach { case (k, v) => MessageAccessor.putProperty(stored, k, v) }
    Seq(MessageConst.PROPERTY_TAGS -> "tag-a", MessageConst.PROPERTY_KEYS -> "k1 k2",
      MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX -> "ABC",
      MessageConst.PROPERTY_TIMER_DELIVER_MS -> "1")
      .foreach { case (k, v) => MessageAccessor.putProperty(stored, k, v) }
    // The text as it sits in a read's row: inside the row's buffer, not at the start of an array of
    // its own.
    val json = new RocketMQMessageToRow(RocketMQQueue("a", "b", 0)).toRow(stored).getUTF8String(3)

    val m = fromJson.toMessage(InternalRow(s("x"), null, json), 0)
    assert(userProperties(m) === properties)
    assert(m.getTags === "tag-a" && m.getKeys === "k1 k2")
    // The stored message's id and delivery time are not the new message's.
    assert(m.getProperty(MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX) === null &&
      m.getDeliverTimeMs === 0L)
    // A tags column gives the tags; null JSON values, a null column and an empty object give no
    // property.
    val tagged =
      fromJson.toMessage(InternalRow(s("x"), s("column-tag"), s("""{"TAGS":"t","a":null}""")), 0)
    assert(tagged.getTags === "column-tag" && userProperties(tagged).isEmpty)
    assert(userProperties(fromJson.toMessage(InternalRow(s("x"), null, null), 0)).isEmpty)
    assert(userProperties(fromJson.toMessage(InternalRow(s("x"), null, s(" { } ")), 0)).isEmpty)
  }

  test(
    "a STRING properties value that is not a JSON object of strings fails, naming the column, " +
      "row and value") {
    val cases = Seq("[1]" -> "not an object", """{"a":1}""" -> "'a' is a number",
      """{"a":{"b":"c"}}""" -> "an object",
      """{"a":["b"]}""" -> "an array", """{"a":true}""" -> "a boolean",
      "region=eu" -> "not valid JSON",
      """{"a":"b"""" -> "not valid JSON", """{"a":"b"} {}""" -> "more follows",
      "" -> "not an object",
      "null" -> "not an object")
    for ((value, problem) <- cases) {
      val e = intercept[RocketMQInvalidInputException](fromJson.toMessage(InternalRow(s("x"), null,
        s(value)), 5))
      assert(e.getCondition === "ROCKETMQ_INVALID_PROPERTIES_JSON", value)
      assert(e.getMessage.contains("Row 5") && e.getMessage.contains("'properties'") &&
          e.getMessage.contains(s"'$value'") && e.getMessage.contains(problem) &&
          e.getMessage.contains("MAP<STRING, STRING>"), e.getMessage)
    }
    val long = "x" * 5000
    val e = intercept[RocketMQInvalidInputException](fromJson.toMessage(InternalRow(s("x"), null,
      s(long)), 0))
    assert(e.getMessage.contains("(5000 characters in all)") && !e.getMessage.contains(long),
      e.getMessage)
    val blank = intercept[RocketMQInvalidInputException](
      fromJson.toMessage(InternalRow(s("x"), null, s("""{" ":"v"}""")), 0))
    assert(blank.getCondition === "ROCKETMQ_INVALID_PROPERTY_NAME.BLANK")
  }

  test("the properties column is a MAP<STRING, STRING> or a STRING, nothing else") {
    val e = intercept[RocketMQInvalidInputException](RocketMQWriteColumns.resolve(
      new StructType().add("body", StringType).add("properties", ArrayType(StringType)), Some("t")))
    assert(e.getMessage.contains("MAP<STRING, STRING>, or STRING holding a JSON object"),
      e.getMessage)
  }
}
