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

import org.apache.rocketmq.common.message.{MessageAccessor, MessageConst, MessageExt}

import org.apache.spark.sql.rocketmq.RocketMQMessageToRow
import org.apache.spark.sql.rocketmq.client.RocketMQQueue

/**
 * The connector's own cost of turning a pulled message into a row, in memory (no broker): messages
 * of 1 KiB with the properties a pull gives them (the producer's unique key and wait flag, a tag,
 * two user properties, and the pull client's bookkeeping entries). Prints nanoseconds per message,
 * the median of 7 rounds of 2 million conversions. Used for the before/after of changes to the
 * conversion; run with `build/sbt "bench/runMain org.apache.spark.sql.rocketmq.bench.MessageToRowCost"`.
 */
object MessageToRowCost {
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
      MessageAccessor.putProperty(m, MessageConst.PROPERTY_MIN_OFFSET, "0")
      MessageAccessor.putProperty(m, MessageConst.PROPERTY_MAX_OFFSET, "500000")
      m.setQueueId(3)
      m.setQueueOffset(i.toLong)
      m.setBornTimestamp(1700000000000L + i)
      m.setStoreTimestamp(1700000000001L + i)
      m
    }.toArray
    val convert = new RocketMQMessageToRow(RocketMQQueue("bench", "broker-a", 3))
    val perRound = 2000000
    var sink = 0L
    val rounds = (0 until 9).map { _ =>
      val start = System.nanoTime()
      var i = 0
      while (i < perRound) {
        sink += convert.toRow(messages(i & 1023)).getSizeInBytes
        i += 1
      }
      (System.nanoTime() - start).toDouble / perRound
    }.drop(2).sorted // two rounds of warm-up
    println(f"MessageToRowCost: ${rounds(rounds.size / 2)}%.1f ns per message (rounds ${rounds.map(r => f"$r%.1f")
        .mkString(", ")}; checksum $sink)")
  }
}
