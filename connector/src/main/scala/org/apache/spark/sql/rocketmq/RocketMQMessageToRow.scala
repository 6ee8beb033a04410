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

import org.apache.rocketmq.common.message.{MessageConst, MessageExt}

import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.catalyst.expressions.codegen.{UnsafeArrayWriter, UnsafeRowWriter}
import org.apache.spark.sql.rocketmq.common.RocketMQQueue
import org.apache.spark.unsafe.types.UTF8String

/**
 * Turns the messages of one queue into rows of [[RocketMQSourceSchema.schema]]. One converter
 * serves one partition reader: it writes each row into the same buffer (Spark copies rows it
 * keeps), and topic and broker names, constant per queue, are encoded once.
 */
private[rocketmq] final class RocketMQMessageToRow(queue: RocketMQQueue,
    includeExtraColumns: Boolean = false) {
  private val writer = new UnsafeRowWriter(RocketMQSourceSchema(includeExtraColumns).length)
  private val keysWriter = new UnsafeArrayWriter(writer, 8)
  private val topic = UTF8String.fromString(queue.topic)
  private val brokerName = UTF8String.fromString(queue.brokerName)
  private var json = new Array[Byte](256)
  private var jsonLength = 0

  def toRow(message: MessageExt): UnsafeRow = {
    writer.reset()
    writer.zeroOutNullBytes()
    writer.write(0, topic)
    writer.write(1, message.getFlag)
    val body = message.getBody
    if (body == null) writer.setNullAt(2) else writer.write(2, body)
    writePropertiesJson(message)
    writer.write(3, json, 0, jsonLength)
    writer.write(4, brokerName)
    writer.write(5, message.getQueueId)
    writer.write(6, message.getQueueOffset)
    writer.write(7, message.getBornTimestamp * 1000L)
    writer.write(8, message.getStoreTimestamp * 1000L)
    if (includeExtraColumns) writeExtraColumns(message)
    writer.getRow
  }

  private def writeExtraColumns(message: MessageExt): Unit = {
    val tags = message.getTags
    if (tags == null) writer.setNullAt(9) else writer.write(9, UTF8String.fromString(tags))
    val keys = message.getKeys // space-separated, as the producer joined them
    val start = writer.cursor()
    if (keys == null || keys.isEmpty) keysWriter.initialize(0)
    else {
      val parts = keys.split(MessageConst.KEY_SEPARATOR).filter(_.nonEmpty)
      keysWriter.initialize(parts.length)
      var i = 0
      while (i < parts.length) { keysWriter.write(i, UTF8String.fromString(parts(i))); i += 1 }
    }
    writer.setOffsetAndSizeFromPreviousCursor(10, start)
    val msgId = message.getMsgId
    if (msgId == null) writer.setNullAt(11) else writer.write(11, UTF8String.fromString(msgId))
  }

  /**
   * Writes the message's properties, as a UTF-8 JSON object without the client's bookkeeping
   * entries, into `json` (reused: no string is built per message).
   */
  private def writePropertiesJson(message: MessageExt): Unit = {
    jsonLength = 0
    put('{')
    val properties = message.getProperties
    if (properties != null) {
      var first = true
      val it = properties.entrySet().iterator()
      while (it.hasNext) {
        val e = it.next()
        if (!RocketMQSourceSchema.isClientInternalProperty(e.getKey)) {
          if (!first) put(',')
          first = false
          putJsonString(e.getKey)
          put(':')
          putJsonString(e.getValue)
        }
      }
    }
    put('}')
  }

  private def put(b: Int): Unit = {
    reserve(1)
    json(jsonLength) = b.toByte
    jsonLength += 1
  }

  /** Makes room for `bytes` more bytes of JSON. */
  private def reserve(bytes: Int): Unit =
    if (jsonLength + bytes > json.length) json = java.util.Arrays.copyOf(json,
      math.max(json.length * 2,
        jsonLength + bytes))

  private def putAscii(s: String): Unit = {
    var i = 0; while (i < s.length) { put(s.charAt(i)); i += 1 }
  }

  /**
   * A JSON string in UTF-8. Plain ASCII (the common case for property names and values) is copied
   * in one loop without per-byte bounds checks; the rest of the string goes character by character.
   */
  private def putJsonString(s: String): Unit = {
    if (s == null) { putAscii("null"); return }
    val n = s.length
    reserve(n + 2)
    json(jsonLength) = '"'
    var at = jsonLength + 1
    var i = 0
    while (i < n && { val c = s.charAt(i); c >= 0x20 && c < 0x80 && c != '"' && c != '\\' }) {
      json(at) = s.charAt(i).toByte
      at += 1
      i += 1
    }
    jsonLength = at
    while (i < n) {
      val c = s.charAt(i)
      c match {
        case '"' => putAscii("\\\"")
        case '\\' => putAscii("\\\\")
        case '\n' => putAscii("\\n")
        case '\r' => putAscii("\\r")
        case '\t' => putAscii("\\t")
        case _ if c < 0x20 => putAscii(f"\\u${c.toInt}%04x")
        case _ if c < 0x80 => put(c)
        case _ if c < 0x800 => put(0xc0 | (c >> 6)); put(0x80 | (c & 0x3f))
        case _
            if Character.isHighSurrogate(c) && i + 1 < n &&
              Character.isLowSurrogate(s.charAt(i + 1)) =>
          val cp = Character.toCodePoint(c, s.charAt(i + 1))
          put(0xf0 | (cp >> 18)); put(0x80 | ((cp >> 12) & 0x3f)); put(0x80 | ((cp >> 6) & 0x3f));
          put(0x80 | (cp & 0x3f))
          i += 1
        case _ if Character.isSurrogate(c) => put('?') // a lone surrogate has no UTF-8 form
        case _ => put(0xe0 | (c >> 12)); put(0x80 | ((c >> 6) & 0x3f)); put(0x80 | (c & 0x3f))
      }
      i += 1
    }
    put('"')
  }
}
