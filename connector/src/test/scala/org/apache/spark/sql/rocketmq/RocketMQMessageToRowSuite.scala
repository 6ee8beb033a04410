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

import org.apache.rocketmq.common.message.{MessageAccessor, MessageConst, MessageExt}
import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.rocketmq.common.RocketMQQueue

class RocketMQMessageToRowSuite extends AnyFunSuite {

  private def message(body: String, queueOffset: Long, props: (String, String)*): MessageExt = {
    val m = new MessageExt()
    m.setTopic("t")
    m.setBody(if (body == null) null else body.getBytes(StandardCharsets.UTF_8))
    m.setFlag(7)
    m.setQueueId(3)
    m.setQueueOffset(queueOffset)
    m.setBornTimestamp(1700000000123L)
    m.setStoreTimestamp(1700000000456L)
    props.foreach { case (k, v) => MessageAccessor.putProperty(m, k, v) }
    m
  }

  test("every column of the schema, timestamps in microseconds") {
    val row = new RocketMQMessageToRow(RocketMQQueue("t", "broker-a", 3)).toRow(message("héllo",
      42L, "k" -> "v"))
    assert(row.numFields === RocketMQSourceSchema.schema.length)
    assert(row.getUTF8String(0).toString === "t")
    assert(row.getInt(1) === 7)
    assert(new String(row.getBinary(2), StandardCharsets.UTF_8) === "héllo")
    assert(row.getUTF8String(3).toString === """{"k":"v"}""")
    assert(row.getUTF8String(4).toString === "broker-a")
    assert(row.getInt(5) === 3)
    assert(row.getLong(6) === 42L)
    assert(row.getLong(7) === 1700000000123000L)
    assert(row.getLong(8) === 1700000000456000L)
  }

  test("properties: client bookkeeping removed, strings escaped") {
    val converter = new RocketMQMessageToRow(RocketMQQueue("t", "b", 0))
    val row = converter.toRow(message("x", 0L,
      MessageConst.PROPERTY_MIN_OFFSET -> "0", MessageConst.PROPERTY_MAX_OFFSET -> "9",
      "q\"uote" -> "line\nbreak\\tab\t\u0001"))
    // (Scala 2.12 reads unicode escapes even in triple quotes, so the JSON escape is spelled out
    // here.)
    assert(row.getUTF8String(3).toString === """{"q\"uote":"line\nbreak\\tab\t""" + "\\u0001\"}")
    val json =
      new com.fasterxml.jackson.databind.ObjectMapper().readTree(row.getUTF8String(3).toString)
    assert(json.get("q\"uote").asText() === "line\nbreak\\tab\t\u0001")
  }

  test("properties: non-ASCII keys and values are valid UTF-8 JSON; the buffer grows as needed") {
    val converter = new RocketMQMessageToRow(RocketMQQueue("t", "b", 0))
    val long = "v" * 1000
    val row = converter.toRow(message("x", 0L, "ключ" -> "héllo 世界 \uD83D\uDE80", "long" -> long))
    val json =
      new com.fasterxml.jackson.databind.ObjectMapper().readTree(row.getUTF8String(3).toString)
    assert(json.get("ключ").asText() === "héllo 世界 \uD83D\uDE80")
    assert(json.get("long").asText() === long)
    val small = converter.toRow(message("y", 1L, "a" -> "b"))
    assert(small.getUTF8String(3).toString === """{"a":"b"}""")
  }

  test("the converter reuses its buffer; copies keep their values; a null body is a null") {
    val converter = new RocketMQMessageToRow(RocketMQQueue("t", "b", 0))
    val first = converter.toRow(message("first", 1L)).copy()
    val second = converter.toRow(message(null, 2L))
    assert(new String(first.getBinary(2), StandardCharsets.UTF_8) === "first")
    assert(second.isNullAt(2))
    assert(second.getUTF8String(3).toString === "{}")
  }
}
