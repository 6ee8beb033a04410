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

package org.apache.spark.sql.rocketmq.bench

import java.net.{InetAddress, InetSocketAddress}
import java.nio.ByteBuffer

import org.apache.rocketmq.common.message.{
  MessageAccessor, MessageConst, MessageDecoder, MessageExt
}

import org.apache.spark.sql.rocketmq.RocketMQMessageToRow
import org.apache.spark.sql.rocketmq.common.RocketMQQueue

/**
 * What turning a pulled message into a row costs the reader, in memory (no broker): messages of 1
 * KiB with the properties a pull gives them (the producer's unique key and wait flag, a tag, two
 * user properties, and the pull client's bookkeeping entries). Two figures, each in nanoseconds per
 * message, the median of 7 rounds of 2 million messages: the pull client's decoding of a pull
 * answer's bytes (answers of 32 messages, as the broker sends them by default, decoded as the
 * client does on its connection thread: `MessageDecoder.decodesBatch`, then its min and max offset
 * properties put on each message), and the connector's conversion of a decoded message into a row.
 * Used for the before/after of changes to either; run with `build/sbt "bench/runMain
 * org.apache.spark.sql.rocketmq.bench.MessageToRowCost"`.
 */
object MessageToRowCost {
  private val PerAnswer = 32

  def main(args: Array[String]): Unit = {
    val messages = (0 until 1024).map { i =>
      val m = new MessageExt()
      m.setTopic("bench")
      m.setBody(Array.fill[Byte](1024)(i.toByte))
      m.putUserProperty("order", s"o-$i")
      m.putUserProperty("region", "eu-west-1")
      m.setTags("paid")
      MessageAccessor.putProperty(m, MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX,
        f"7F0000010D3C18B4AAC2$i%012X")
      MessageAccessor.putProperty(m, MessageConst.PROPERTY_WAIT_STORE_MSG_OK, "true")
      m.setQueueId(3)
      m.setQueueOffset(i.toLong)
      m.setCommitLogOffset(1024L * 1100 * i)
      m.setBornTimestamp(1700000000000L + i)
      m.setStoreTimestamp(1700000000001L + i)
      m.setBornHost(new InetSocketAddress(InetAddress.getByAddress(Array[Byte](10, 0, 0, 7)),
        40312))
      m.setStoreHost(new InetSocketAddress(InetAddress.getByAddress(Array[Byte](10, 0, 0, 9)),
        10911))
      m
    }.toArray
    // The bytes of pull answers: 32 stored messages each, as the broker returns them.
    val answers =
      messages.grouped(PerAnswer).map(_.map(MessageDecoder.encode(_, false)).reduce(_ ++ _)).toArray
    messages.foreach { m =>
      MessageAccessor.putProperty(m, MessageConst.PROPERTY_MIN_OFFSET, "0")
      MessageAccessor.putProperty(m, MessageConst.PROPERTY_MAX_OFFSET, "500000")
    }
    val convert = new RocketMQMessageToRow(RocketMQQueue("bench", "broker-a", 3))

    val decoding = nanosPerMessage { i =>
      val decoded = MessageDecoder.decodesBatch(
        ByteBuffer.wrap(answers((i / PerAnswer) & (answers.length - 1))),
        true, true, true)
      decoded.forEach { m =>
        MessageAccessor.putProperty(m, MessageConst.PROPERTY_MIN_OFFSET, "0")
        MessageAccessor.putProperty(m, MessageConst.PROPERTY_MAX_OFFSET,
          java.lang.Long.toString(500000L))
      }
      decoded.size()
    }(PerAnswer)
    println(s"MessageToRowCost: the pull client's decoding: $decoding")
    val converting = nanosPerMessage(i => convert.toRow(messages(i & 1023)).getSizeInBytes)(1)
    println(s"MessageToRowCost: the connector's conversion into a row: $converting")
  }

  /**
   * Median nanoseconds per message of `work(i)` over 7 rounds of 2 million messages (`step` per
   * call).
   */
  private def nanosPerMessage(work: Int => Int)(step: Int): String = {
    val perRound = 2000000
    var sink = 0L
    val rounds = (0 until 9).map { _ =>
      val start = System.nanoTime()
      var i = 0
      while (i < perRound) {
        sink += work(i)
        i += step
      }
      (System.nanoTime() - start).toDouble / perRound
    }.drop(2).sorted // two rounds of warm-up
    val each = rounds.map(r => f"$r%.1f").mkString(", ")
    f"${rounds(rounds.size / 2)}%.1f ns per message (rounds $each; checksum $sink)"
  }
}
