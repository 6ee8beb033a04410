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

import java.nio.ByteBuffer

import scala.jdk.CollectionConverters._

import org.apache.rocketmq.common.message.{
  Message, MessageBatch, MessageConst, MessageDecoder, MessageType
}
import org.scalatest.funsuite.AnyFunSuite

class RocketMQBatchEncodingSuite extends AnyFunSuite {

  private def message(body: String, tags: String = null, keys: String = null, flag: Int = 0,
      properties: Map[String, String] = Map.empty): Message = {
    val m = new Message("t", body.getBytes("UTF-8"))
    if (tags != null) m.setTags(tags)
    if (keys != null) m.setKeys(keys)
    m.setFlag(flag)
    properties.foreach { case (k, v) => m.putUserProperty(k, v) }
    m
  }

  private def decode(bytes: Array[Byte]): Seq[Message] =
    MessageDecoder.decodeMessages(ByteBuffer.wrap(bytes)).asScala.toSeq

  test(
    "what is encoded decodes, as RocketMQ reads a batch, into the same messages, each with a " +
      "unique id") {
    val messages = Seq(
      message("plain"),
      message("tagged", tags = "TagA", keys = "k1 k2", flag = 7),
      message("ünïcödé bødy", properties = Map("city" -> "Zürich", "n" -> "1", "spaced" -> "a b")))
    val encoding = new RocketMQBatchEncoding(16) // grows as it goes
    messages.foreach(m => assert(encoding.add(m)))
    assert(encoding.count === 3)
    // The same bytes as the client's own batch encoding, but for the ids it adds itself.
    val clientLayout = MessageDecoder.encodeMessages(messages.asJava)
    val request = encoding.toRequest("ns%t")
    assert(request.isInstanceOf[MessageBatch])
    assert(request.getTopic === "ns%t")
    assert(request.isWaitStoreMsgOK)
    assert(request.getProperty(MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX) != null)
    assert(request.getBody.length === encoding.size)
    val decoded = decode(request.getBody)
    assert(
      decoded.map(m => new String(m.getBody, "UTF-8")) === Seq("plain", "tagged", "ünïcödé bødy"))
    assert(decoded.map(_.getFlag) === Seq(0, 7, 0))
    assert(decoded(1).getTags === "TagA")
    assert(decoded(1).getKeys === "k1 k2")
    assert(decoded(2).getUserProperty("city") === "Zürich")
    assert(decoded(2).getUserProperty("spaced") === "a b")
    decoded.zip(messages).foreach { case (d, m) =>
      assert(
        d.getProperties.asScala.toMap - MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX ===
          m.getProperties.asScala)
    }
    val uniqueIds = decoded.map(_.getProperty(MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX))
    assert(uniqueIds.forall(id => id != null && id.nonEmpty) && uniqueIds.distinct.size === 3)
    val idBytes =
      uniqueIds.map(MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX.length + _.length + 2).sum
    assert(encoding.size === clientLayout.length + idBytes)
  }

  test(
    "the request is a copy: the encoding starts over and its array is reused without touching it") {
    val encoding = new RocketMQBatchEncoding(64)
    encoding.add(message("first"))
    val request = encoding.toRequest("t")
    encoding.truncate(0, 0)
    encoding.add(message("second"))
    assert(decode(request.getBody).map(m => new String(m.getBody, "UTF-8")) === Seq("first"))
    assert(decode(encoding.toRequest("t").getBody).map(m => new String(m.getBody, "UTF-8")) ===
      Seq("second"))
  }

  test(
    "a message whose properties do not fit a batch entry's short length is refused and leaves no " +
      "trace") {
    val encoding = new RocketMQBatchEncoding(64)
    encoding.add(message("a"))
    val (size, count) = (encoding.size, encoding.count)
    assert(!encoding.add(message("b", properties = Map("big" -> "x" * 40000))))
    assert((encoding.size, encoding.count) === ((size, count)))
    encoding.add(message("c"))
    encoding.truncate(size, count)
    assert(
      decode(encoding.toRequest("t").getBody).map(m => new String(m.getBody, "UTF-8")) === Seq("a"))
  }

  test("a traced write's encoding keeps what the trace records of each message, in their order") {
    assert(new RocketMQBatchEncoding(64).tracedMessages === null)
    val encoding = new RocketMQBatchEncoding(64, traced = true)
    encoding.add(message("one", tags = "TagA", keys = "k1"))
    val (size, count) = (encoding.size, encoding.count)
    encoding.add(message("two", keys = "k2"))
    val (twoSize, twoCount) = (encoding.size, encoding.count)
    encoding.add(message("three"))
    encoding.truncate(twoSize, twoCount) // as when the last message made the batch too large
    val ids = decode(encoding.toRequest("t").getBody)
      .map(_.getProperty(MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX))
    val sent = encoding.tracedMessages
    assert(sent.map(_.msgId) === ids.take(2))
    assert(sent.map(m => (m.tags, m.keys, m.bodyLength)) === Seq(("TagA", "k1", 3),
      (null, "k2", 3)))
    assert(sent.forall(_.msgType == MessageType.Normal_Msg))
    encoding.truncate(size, count)
    assert(encoding.tracedMessages.map(_.msgId) === ids.take(1))
  }
}
