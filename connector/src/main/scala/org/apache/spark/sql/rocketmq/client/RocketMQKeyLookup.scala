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

package org.apache.spark.sql.rocketmq.client

import java.nio.ByteBuffer

import scala.jdk.CollectionConverters._

import org.apache.rocketmq.common.MixAll
import org.apache.rocketmq.common.message.{MessageClientIDSetter, MessageDecoder, MessageExt}
import org.apache.rocketmq.remoting.protocol.{
  RemotingCommand, RemotingSysResponseCode, RequestCode, ResponseCode
}
import org.apache.rocketmq.remoting.protocol.header.QueryMessageRequestHeader

/**
 * A look-up of one message by the unique key its producer gave it, in a broker's index of message
 * keys (on by default, `messageIndexEnable`). It is how a writer learns whether a request whose
 * answer was lost was stored, without sending it twice.
 */
private[rocketmq] object RocketMQKeyLookup {

  /** What a broker answered. */
  sealed trait Answer
  /** The messages of the topic with that key. */
  final case class Found(messages: Seq[MessageExt]) extends Answer
  /** The broker does not serve the look-up to these credentials, or at all (a proxy). */
  final case class Refused(why: String) extends Answer
  /** Not answered now (busy, or an error the broker may not make next time). */
  final case class Unanswered(why: String) extends Answer

  /** How far apart the clocks of the machine that sent a message and of its broker may be. */
  val ClockSlackMs: Long = 10L * 60 * 1000

  /** Messages one look-up may bring back (a key is unique; more would be a hash collision). */
  private val MaxFound = 32

  /**
   * The request for the messages of `topic` (as the broker names it) keyed `key`, sent since
   * `sinceMs`.
   */
  def request(topic: String, key: String, sinceMs: Long): RemotingCommand = {
    val header = new QueryMessageRequestHeader()
    header.setTopic(topic)
    header.setKey(key)
    header.setMaxNum(MaxFound)
    header.setBeginTimestamp(sinceMs - ClockSlackMs)
    header.setEndTimestamp(System.currentTimeMillis() + ClockSlackMs)
    val command = RemotingCommand.createRequestCommand(RequestCode.QUERY_MESSAGE, header)
    command.addExtField(MixAll.UNIQUE_MSG_QUERY_FLAG, "true")
    command
  }

  /** What `response` to [[request]] says. */
  def answer(response: RemotingCommand, topic: String, key: String): Answer =
    response.getCode match {
      case RemotingSysResponseCode.SUCCESS =>
        val all = MessageDecoder.decodes(ByteBuffer.wrap(response.getBody), false).asScala.toSeq
        Found(all.filter(m => m.getTopic == topic && key == MessageClientIDSetter.getUniqID(m)))
      case ResponseCode.QUERY_NOT_FOUND => Found(Nil)
      case code @ (ResponseCode.NO_PERMISSION |
          RemotingSysResponseCode.REQUEST_CODE_NOT_SUPPORTED) =>
        Refused(s"$code ${response.getRemark}")
      case other => Unanswered(s"$other ${response.getRemark}")
    }
}
