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

import scala.jdk.CollectionConverters._

import org.apache.rocketmq.client.exception.MQBrokerException
import org.apache.rocketmq.common.MQVersion
import org.apache.rocketmq.remoting.protocol.{
  RemotingCommand, RemotingSerializable, RemotingSysResponseCode, ResponseCode
}
import org.apache.rocketmq.remoting.protocol.body.ConsumerOffsetSerializeWrapper
import org.apache.rocketmq.remoting.protocol.header.QueryConsumerOffsetResponseHeader

/**
 * What a broker's answer to "which offset did this consumer group commit for this queue" means.
 * The request asks not to be answered 0 for a queue the group never committed; brokers from
 * RocketMQ 5.0 on honour that and answer "not found". Older brokers (4.x) ignore it: for a queue
 * never committed whose first message is still at offset 0 and in memory they answer 0, as they
 * do for a committed 0. A broker stamps its release on its answers (a response's version; 0 where
 * its process set none), so only a 0 from an older broker, or one that does not say, is in doubt.
 */
private[client] object RocketMQGroupOffsetAnswer {

  sealed trait Kind

  /** The group committed `offset` (the next offset it reads). */
  final case class Committed(offset: Long) extends Kind

  /** The group has committed nothing for the queue. */
  case object NotCommitted extends Kind

  /** 0 from a broker that answers 0 for a queue never committed too: its offset table tells. */
  case object ZeroOrNever extends Kind

  private val FirstHonouringNotFound = MQVersion.Version.V5_0_0.ordinal()

  /**
   * The meaning of answer `code` with `offset` (read only on SUCCESS) from a broker of release
   * `brokerVersion`; None for any other answer.
   */
  def classify(code: Int, offset: => Long, brokerVersion: Int): Option[Kind] = code match {
    case RemotingSysResponseCode.SUCCESS =>
      val committed = offset
      val inDoubt = committed == 0L && brokerVersion < FirstHonouringNotFound
      Some(if (inDoubt) ZeroOrNever else Committed(committed))
    case ResponseCode.QUERY_NOT_FOUND => Some(NotCommitted)
    case _ => None
  }

  /** The meaning of `response` from `address`; another answer fails as the client's call does. */
  def of(response: RemotingCommand, address: String): Kind = {
    def offset = response.decodeCommandCustomHeader(classOf[QueryConsumerOffsetResponseHeader])
      .getOffset.longValue
    classify(response.getCode, offset, response.getVersion).getOrElse(
      throw new MQBrokerException(response.getCode, response.getRemark, address))
  }

  /**
   * The offsets `group` committed in `topic` (both as the broker names them), by queue id, from a
   * broker's answer to a request for every group's offsets (its keys are "topic@group").
   */
  def committedIn(body: Array[Byte], topic: String, group: String): Map[Int, Long] = {
    val table = RemotingSerializable.decode(body, classOf[ConsumerOffsetSerializeWrapper])
      .getOffsetTable
    Option(table).flatMap(t => Option(t.get(s"$topic@$group"))).fold(Map.empty[Int, Long]) {
      _.asScala.map { case (queueId, offset) => queueId.intValue -> offset.longValue }.toMap
    }
  }
}
