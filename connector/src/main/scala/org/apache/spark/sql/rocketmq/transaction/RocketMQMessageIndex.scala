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

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.rocketmq.client.impl.factory.MQClientInstance
import org.apache.rocketmq.common.MixAll
import org.apache.rocketmq.common.message.{MessageClientIDSetter, MessageConst, MessageExt}
import org.apache.rocketmq.common.topic.TopicValidator
import org.apache.rocketmq.remoting.common.RemotingHelper

import org.slf4j.LoggerFactory

import org.apache.spark.sql.rocketmq.client.RocketMQKeyLookup

/**
 * Asks a broker whether a half message has been committed, through its index of message keys (on by
 * default, `messageIndexEnable`): a committed message is stored again in its real topic, under the
 * same key. This is how the connector learns the fate of a commit request whose answer never came,
 * without asking the broker twice.
 */
private[rocketmq] final class RocketMQMessageIndex(client: () => MQClientInstance,
    timeoutMs: Long) {
  import RocketMQMessageIndex._

  /**
   * Whether half message `message`'s broker group holds it in `topic` (as the broker names it),
   * committed: Some(true) or Some(false); None when it cannot be asked now. Asked at `at` when
   * given. Otherwise at the message's store host (the master that first stored it, which
   * replication copies verbatim) while that is a master of the topic (one that does not answer is
   * asked again at the next check-back); when it is not (an election left it dead or made it a
   * replica), at every master of the topic now: the group's new master is among them, and only it
   * knows the message. A key not found counts only if the broker's index has the half message
   * itself (indexed under the half topic): a broker that keeps no index finds nothing either way.
   */
  def delivered(message: MessageExt, topic: String, at: Option[String] = None): Option[Boolean] = {
    val key = MessageClientIDSetter.getUniqID(message)
    if (key == null) return Some(false) // not sent by this connector
    val answer = at match {
      case Some(address) => find(address, topic, key, message.getBornTimestamp)
      case None =>
        val storeHost = Option(message.getStoreHost).map(RemotingHelper.parseSocketAddressAddr)
        val atStoreHost = storeHost.filter(mastersOf(topic, refresh = false).contains)
          .map(find(_, topic, key, message.getBornTimestamp))
        // A master that does not answer now is asked again at the next check-back, unless the name
        // server says it is no master any more (the client's route may be older than an election).
        if (atStoreHost.exists(_ != Unreachable) ||
          atStoreHost.nonEmpty && mastersOf(topic, refresh = true).contains(storeHost.get)) {
          atStoreHost.get
        } else {
          val answers =
            mastersOf(topic, refresh = atStoreHost.isEmpty).map(find(_, topic, key,
              message.getBornTimestamp))
          // No master known now (the name server does not answer, or has no route): nobody was
          // asked.
          if (answers.isEmpty) Unreachable
          else Seq(Committed, Pending, Unreachable).find(answers.contains).getOrElse(NotIndexed)
        }
    }
    answer match {
      case Committed => Some(true)
      case Pending => Some(false)
      case Unreachable => None
      case NotIndexed =>
        log.error(s"No broker of $topic has half message $key in its index of message keys " +
          "(messageIndexEnable=false?): it is committed without knowing whether the driver " +
          "committed it already; it may be delivered twice")
        Some(false)
    }
  }

  /** What the broker at `address` knows of the half message whose key is `key`. */
  private def find(address: String, topic: String, key: String, bornMs: Long): Found =
    lookUp(address, topic, key, bornMs) match {
      case Right(found) if found.nonEmpty => Committed
      case Right(_) =>
        lookUp(address, TopicValidator.RMQ_SYS_TRANS_HALF_TOPIC, key, bornMs) match {
          case Right(half) if half.nonEmpty => Pending
          case Right(_) => NotIndexed
          case Left(_) => Unreachable
        }
      case Left(_) => Unreachable
    }

  /** When each topic's route was last asked for again (System.nanoTime): at most once a second. */
  private val refreshed = new java.util.concurrent.ConcurrentHashMap[String, java.lang.Long]()

  /**
   * The addresses of the masters of `topic`'s broker groups, from the client's route; with
   * `refresh`, asked of the name server again first (at most once a second: a check-back comes for
   * each message).
   */
  private def mastersOf(topic: String, refresh: Boolean): Seq[String] =
    try {
      val now = System.nanoTime()
      if (refresh && now - refreshed.getOrDefault(topic, now - 2000000000L) >= 1000000000L) {
        refreshed.put(topic, now)
        client().updateTopicRouteInfoFromNameServer(topic)
      }
      Option(client().getTopicRouteTable.get(topic)).toSeq.flatMap(_.getBrokerDatas.asScala)
        .flatMap(data => Option(data.getBrokerAddrs.get(MixAll.MASTER_ID)))
    } catch { case NonFatal(e) => log.debug(s"No route for $topic now: $e"); Nil }

  /**
   * The messages of `topic` whose key is `key`, stored since `bornMs` at the broker at `address`;
   * Left(why) when the broker does not answer.
   */
  private def lookUp(address: String, topic: String, key: String, bornMs: Long)
      : Either[String, Seq[MessageExt]] = {
    val request = RocketMQKeyLookup.request(topic, key, bornMs)
    // The answer is handed over on the client's callback executor (every request's, in RocketMQ 5's
    // client): the coordinator gives its client one of its own, apart from the threads that take
    // check-backs in.
    val response =
      try client().getMQClientAPIImpl.getRemotingClient.invokeSync(address, request, timeoutMs)
      catch {
        case NonFatal(e) =>
          log.debug(s"Broker $address did not answer whether $key is in $topic: $e")
          return Left(e.toString)
      }
    RocketMQKeyLookup.answer(response, topic, key) match {
      case RocketMQKeyLookup.Found(messages) => Right(messages)
      case RocketMQKeyLookup.Refused(why) => notAnswered(address, key, topic, why)
      case RocketMQKeyLookup.Unanswered(why) => notAnswered(address, key, topic, why)
    }
  }

  private def notAnswered(address: String, key: String, topic: String, why: String)
      : Left[String, Nothing] = {
    log.warn(s"Broker $address did not answer whether $key is in $topic: $why")
    Left(why)
  }

  /**
   * Whether the half message at `commitLogOffset` of broker group `broker` (sent to `topic`) is
   * committed: read by its place, then looked up by its key in its real topic. False also when
   * either cannot be asked now.
   */
  def committed(topic: String, broker: String, commitLogOffset: Long): Boolean =
    commitState(topic, broker, commitLogOffset).contains(true)

  /**
   * As [[committed]], telling apart a broker that says the half message is not in its topic
   * (Some(false)) from one that cannot be asked now (None).
   */
  def commitState(topic: String, broker: String, commitLogOffset: Long): Option[Boolean] =
    try {
      // Both asked of the group's master now (after an election, the replica elected in the first
      // one's place).
      val master = Option(client().findBrokerAddressInPublish(broker)).orElse {
        client().updateTopicRouteInfoFromNameServer(topic)
        Option(client().findBrokerAddressInPublish(broker))
      }
      master.flatMap { address =>
        val half =
          client().getMQClientAPIImpl.viewMessage(address, topic, commitLogOffset, timeoutMs)
        delivered(half, Option(half.getProperty(MessageConst.PROPERTY_REAL_TOPIC)).getOrElse(topic),
          Some(address))
      }
    } catch {
      case NonFatal(e) =>
        log.debug(s"Cannot read half message $commitLogOffset of $broker yet: $e"); None
    }
}

private[rocketmq] object RocketMQMessageIndex {
  private val log = LoggerFactory.getLogger(classOf[RocketMQMessageIndex])

  /** What one broker's index says of a half message. */
  private sealed trait Found
  /** In its real topic: committed. */
  private case object Committed extends Found
  /** Only in the half topic: not committed (yet). */
  private case object Pending extends Found
  /** In neither: not this broker's message, or a broker with no index. */
  private case object NotIndexed extends Found
  /** The broker did not answer. */
  private case object Unreachable extends Found

}
