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

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.util.{ArrayBasedMapData, GenericArrayData}
import org.apache.spark.sql.rocketmq.producer.RocketMQWriteSettings
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

class RocketMQRowToMessageSuite extends AnyFunSuite {

  private val schema = new StructType()
    .add("body", BinaryType).add("topic", StringType).add("tags", StringType)
    .add("keys", ArrayType(StringType)).add("properties", MapType(StringType, StringType))
    .add("shardingKey", StringType).add("deliverTime", TimestampType)

  private val settings = RocketMQWriteSettings(new RocketMQOptions(Map("nameServer" -> "h:1")))
  private val converter = new RocketMQRowToMessage(settings, RocketMQWriteColumns.resolve(schema, None))

  private def s(v: String) = if (v == null) null else UTF8String.fromString(v)

  private def row(properties: Map[String, String] = Map("a" -> "1"), keys: Seq[String] = Seq("k1", null, "k2"),
      deliverMicros: java.lang.Long = 1700000000123456L, body: Array[Byte] = "b".getBytes(StandardCharsets.UTF_8))
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

  test("reserved, blank or control-character property names are refused, naming the column and row") {
    for ((name, problem) <- Seq("TAGS" -> "RESERVED", " " -> "BLANK", "a\u0001b" -> "CONTROL_CHARACTER")) {
      val e = intercept[RocketMQInvalidInputException](converter.toMessage(row(properties = Map(name -> "v")), 7))
      assert(e.getCondition === s"ROCKETMQ_INVALID_PROPERTY_NAME.$problem")
      assert(e.getMessage.contains("Row 7") && e.getMessage.contains("'properties'") &&
          e.getMessage.contains(s"'$name'"), e.getMessage)
    }
  }

  test("nulls: a null body fails naming the column; optional columns may be null") {
    val e = intercept[RocketMQInvalidInputException](converter.toMessage(row(body = null), 3))
    assert(e.getCondition === "ROCKETMQ_NULL_COLUMN_VALUE.BODY" && e.getMessage.contains("'body'"))
    val m =
      converter.toMessage(InternalRow("x".getBytes(StandardCharsets.UTF_8), s("t"), null, null, null, null, null), 0)
    assert(m.getTags === null && m.getKeys === null && m.getDeliverTimeMs === 0L)
  }

  test("a delivery delay option sets the deliver time when no column does") {
    val delayed = new RocketMQRowToMessage(settings.copy(topic = Some("t"), deliveryDelayMs = Some(60000L)),
      RocketMQWriteColumns.resolve(new StructType().add("body", StringType), Some("t")))
    val before = System.currentTimeMillis()
    val m = delayed.toMessage(InternalRow(s("x")), 0)
    assert(m.getDeliverTimeMs >= before + 60000L && m.getDeliverTimeMs <= System.currentTimeMillis() + 60000L)
  }
}
