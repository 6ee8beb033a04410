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

package org.apache.spark.sql.rocketmq.transaction

import java.nio.ByteBuffer
import java.util.concurrent.{CompletableFuture, TimeUnit}

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.rocketmq.client.impl.factory.MQClientInstance
import org.apache.rocketmq.common.message.{MessageClientIDSetter, MessageConst, MessageDecoder, MessageExt}
import org.apache.rocketmq.common.topic.TopicValidator
import org.apache.rocketmq.remoting.InvokeCallback
import org.apache.rocketmq.remoting.common.RemotingHelper
import org.apache.rocketmq.remoting.netty.ResponseFuture
import org.apache.rocketmq.remoting.protocol.{RemotingCommand, RemotingSysResponseCode, ResponseCode}
import org.apache.rocketmq.remoting.protocol.header.QueryMessageRequestHeader

import org.slf4j.LoggerFactory

/**
 * Asks a broker whether a half message has been committed, through its index of message keys (on by default,
 * `messageIndexEnable`): a committed message is stored again in its real topic, under the same key. This is how
 * the connector learns the fate of a commit request whose answer never came, without asking the broker twice.
 */
private[rocketmq] final class RocketMQMessageIndex(client: () => MQClientInstance, timeoutMs: Long) {
  import RocketMQMessageIndex._

  /**
   * Whether half message `message`'s broker group holds it in `topic` (as the broker names it), committed:
   * Some(true) or Some(false); None when it cannot be asked now. Asked at `at`, else at the group's current master
   * (the message names its group when a broker asks about it), else at its store host: the master that first
   * stored it, which replication copies verbatim, and which an election may have left dead. A key not found counts
   * only if the broker's index has the half message itself (indexed under the half topic): a broker that keeps
   * no index finds nothing either way.
   */
  def delivered(message: MessageExt, topic: String, at: Option[String] = None): Option[Boolean] = {
    val key = MessageClientIDSetter.getUniqID(message)
    val address = at.orElse(Option(message.getBrokerName).flatMap(b => Option(client().findBrokerAddressInPublish(b))))
      .orElse(Option(message.getStoreHost).map(RemotingHelper.parseSocketAddressAddr))
    if (key == null || address.isEmpty) return Some(false) // not sent by this connector
    lookUp(address.get, topic, key, message.getBornTimestamp) match {
      case Right(found) if found.nonEmpty => Some(true)
      case Right(_) =>
        lookUp(address.get, TopicValidator.RMQ_SYS_TRANS_HALF_TOPIC, key, message.getBornTimestamp) match {
          case Right(half) if half.nonEmpty => Some(false)
          case Right(_) =>
            log.error(
              s"Broker ${address.get} keeps no index of message keys (messageIndexEnable=false): half message " +
                s"$key of topic $topic is committed without knowing whether the driver committed it already; it may " +
                "be delivered twice")
            Some(false)
          case Left(_) => None
        }
      case Left(_) => None
    }
  }

  /**
   * The messages of `topic` whose key is `key`, stored since `bornMs` at the broker at `address`; Left(why) when
   * the broker does not answer.
   */
  private def lookUp(address: String, topic: String, key: String, bornMs: Long): Either[String, Seq[MessageExt]] = {
    val header = new QueryMessageRequestHeader()
    header.setTopic(topic)
    header.setKey(key)
    header.setMaxNum(MaxFound)
    header.setBeginTimestamp(bornMs - ClockSlackMs)
    header.setEndTimestamp(System.currentTimeMillis() + ClockSlackMs)
    val answer = new CompletableFuture[RemotingCommand]()
    val response =
      try {
        client().getMQClientAPIImpl.queryMessage(address, header, timeoutMs,
          new InvokeCallback {
            override def operationComplete(future: ResponseFuture): Unit = ()
            override def operationSucceed(response: RemotingCommand): Unit = answer.complete(response)
            override def operationFail(e: Throwable): Unit = answer.completeExceptionally(e)
          }, java.lang.Boolean.TRUE)
        answer.get(timeoutMs + 1000L, TimeUnit.MILLISECONDS)
      } catch {
        case NonFatal(e) =>
          log.debug(s"Broker $address did not answer whether $key is in $topic: $e")
          return Left(e.toString)
      }
    response.getCode match {
      case RemotingSysResponseCode.SUCCESS =>
        Right(MessageDecoder.decodes(ByteBuffer.wrap(response.getBody), false).asScala.toSeq.filter { found =>
          found.getTopic == topic && key == MessageClientIDSetter.getUniqID(found)
        })
      case ResponseCode.QUERY_NOT_FOUND => Right(Nil)
      case other =>
        log.warn(s"Broker $address did not answer whether $key is in $topic: $other ${response.getRemark}")
        Left(s"$other")
    }
  }

  /**
   * Whether the half message at `commitLogOffset` of broker group `broker` (sent to `topic`) is committed: read by
   * its place, then looked up by its key in its real topic. False also when either cannot be asked now.
   */
  def committed(topic: String, broker: String, commitLogOffset: Long): Boolean =
    commitState(topic, broker, commitLogOffset).contains(true)

  /**
   * As [[committed]], telling apart a broker that says the half message is not in its topic (Some(false)) from
   * one that cannot be asked now (None).
   */
  def commitState(topic: String, broker: String, commitLogOffset: Long): Option[Boolean] =
    try {
      // Both asked of the group's master now (after an election, the replica elected in the first one's place).
      val master = Option(client().findBrokerAddressInPublish(broker)).orElse {
        client().updateTopicRouteInfoFromNameServer(topic)
        Option(client().findBrokerAddressInPublish(broker))
      }
      master.flatMap { address =>
        val half = client().getMQClientAPIImpl.viewMessage(address, topic, commitLogOffset, timeoutMs)
        delivered(half, Option(half.getProperty(MessageConst.PROPERTY_REAL_TOPIC)).getOrElse(topic), Some(address))
      }
    } catch { case NonFatal(e) => log.debug(s"Cannot read half message $commitLogOffset of $broker yet: $e"); None }
}

private[rocketmq] object RocketMQMessageIndex {
  private val log = LoggerFactory.getLogger(classOf[RocketMQMessageIndex])

  /** Messages one key look-up may bring back (a key is unique; more than one would be a hash collision). */
  private val MaxFound = 32

  /** How far apart the clocks of the machine that sent a message and of its broker may be. */
  private val ClockSlackMs = 10L * 60 * 1000
}
