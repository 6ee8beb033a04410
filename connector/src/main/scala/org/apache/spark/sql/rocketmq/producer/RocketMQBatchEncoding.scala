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

package org.apache.spark.sql.rocketmq.producer

import java.nio.charset.StandardCharsets

import scala.collection.mutable.ArrayBuffer

import org.apache.rocketmq.common.message.{
  Message, MessageBatch, MessageClientIDSetter, MessageConst, MessageDecoder, MessageType
}

/**
 * The body of one RocketMQ message batch, built as messages are added: each message is written at
 * once in the layout the broker reads a batch in (per message: total size, magic code, body CRC,
 * flag, body length and body, properties length and the properties as `name 0x01 value 0x02`
 * pairs), with a unique id of its own. The client's own batching builds a map entry, a string and a
 * buffer per message before copying them all into one array; here each byte is written once, into
 * one growing array.
 */
private[producer] final class RocketMQBatchEncoding(initialCapacity: Int, traced: Boolean = false) {

  private var bytes = new Array[Byte](math.max(initialCapacity, 64))
  private var length = 0
  private var messages = 0

  private var first: String = _

  /** What the trace records of the messages added (traced writes only). */
  private val sent = if (traced) ArrayBuffer.empty[RocketMQSendTrace.Sent] else null

  /** The trace records of the messages added, in their order (null: the write is not traced). */
  def tracedMessages: Seq[RocketMQSendTrace.Sent] = if (sent == null) null else sent.toList

  /** The unique key of the first message added: the broker stores a batch whole or not at all. */
  def firstKey: String = first

  /** Messages added. */
  def count: Int = messages

  /** Bytes encoded so far: what the request's body will be. */
  def size: Int = length

  /**
   * Adds `message` and returns true, unless its properties are too long for a batch entry (a
   * short): then nothing is added and it must be sent alone, where the client or the broker refuses
   * it.
   */
  def add(message: Message): Boolean = {
    val start = length
    val body = message.getBody
    reserve(22 + body.length)
    length +=
      12 // total size, written last; magic code and body CRC stay 0 (the broker computes the CRC)
    putInt(message.getFlag)
    putInt(body.length)
    System.arraycopy(body, 0, bytes, length, body.length)
    length += body.length
    val propertiesAt = length
    length += 2
    val properties = message.getProperties
    if (properties != null) properties.forEach((name, value) =>
      if (name != MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX) putProperty(name, value))
    val key = MessageClientIDSetter.createUniqID()
    putProperty(MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX, key)
    val propertiesLength = length - propertiesAt - 2
    if (propertiesLength > Short.MaxValue) { length = start; return false }
    putShort(propertiesAt, propertiesLength)
    putInt(start, length - start)
    if (messages == 0) first = key
    if (sent != null) {
      sent += RocketMQSendTrace.Sent(key, message.getTags, message.getKeys, body.length,
        MessageType.Normal_Msg)
    }
    messages += 1
    true
  }

  /** Removes what was added after the encoding had `size` bytes and `count` messages. */
  def truncate(size: Int, count: Int): Unit = {
    length = size
    messages = count
    if (sent != null) sent.remove(count, sent.size - count)
  }

  /**
   * The request for `topic`: a message batch whose body is these bytes (copied, so it can be kept).
   */
  def toRequest(topic: String): Message = {
    val batch = new MessageBatch(java.util.Collections.emptyList[Message]())
    batch.setTopic(topic)
    batch.setWaitStoreMsgOK(true)
    MessageClientIDSetter.setUniqID(batch)
    batch.setBody(java.util.Arrays.copyOf(bytes, length))
    batch
  }

  private def putProperty(name: String, value: String): Unit = {
    putText(name)
    put(MessageDecoder.NAME_VALUE_SEPARATOR)
    putText(value)
    put(MessageDecoder.PROPERTY_SEPARATOR)
  }

  /** UTF-8, with plain ASCII copied char by char. */
  private def putText(text: String): Unit = {
    val n = text.length
    reserve(n)
    var i = 0
    while (i < n && text.charAt(i) < 0x80) { bytes(length + i) = text.charAt(i).toByte; i += 1 }
    if (i == n) length += n
    else {
      val encoded = text.getBytes(StandardCharsets.UTF_8)
      reserve(encoded.length)
      System.arraycopy(encoded, 0, bytes, length, encoded.length)
      length += encoded.length
    }
  }

  private def put(c: Char): Unit = { reserve(1); bytes(length) = c.toByte; length += 1 }

  private def putInt(value: Int): Unit = { putInt(length, value); length += 4 }

  private def putInt(at: Int, value: Int): Unit = {
    bytes(at) = (value >>> 24).toByte
    bytes(at + 1) = (value >>> 16).toByte
    bytes(at + 2) = (value >>> 8).toByte
    bytes(at + 3) = value.toByte
  }

  private def putShort(at: Int, value: Int): Unit = {
    bytes(at) = (value >>> 8).toByte
    bytes(at + 1) = value.toByte
  }

  private def reserve(more: Int): Unit =
    if (length + more > bytes.length) {
      bytes = java.util.Arrays.copyOf(bytes, math.max(bytes.length * 2, length + more))
    }
}
