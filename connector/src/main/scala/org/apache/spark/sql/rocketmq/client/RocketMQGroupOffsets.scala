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

import org.apache.rocketmq.client.exception.MQBrokerException
import org.apache.rocketmq.remoting.protocol.{RemotingCommand, RequestCode}
import org.apache.rocketmq.remoting.protocol.RemotingSysResponseCode
import org.apache.rocketmq.remoting.protocol.header.{
  QueryConsumerOffsetRequestHeader, UpdateConsumerOffsetRequestHeader
}
import org.slf4j.LoggerFactory

import org.apache.spark.sql.rocketmq.RocketMQRequestException
import org.apache.spark.sql.rocketmq.client.RocketMQGroupOffsetAnswer._
import org.apache.spark.sql.rocketmq.common.{RocketMQQueue, RocketMQRetry}
import org.apache.spark.sql.rocketmq.errors.RocketMQErrorKinds.BrokerRequest._

/**
 * A consumer group's progress on the brokers, as the driver reads it (`startingOffsets=group`) and
 * writes it (option `consumerGroup`, after each micro-batch): one request per queue, which every
 * endpoint forwards to the queue's broker group (a RocketMQ 5 proxy too; each request names the
 * group's broker).
 */
private[rocketmq] trait RocketMQGroupOffsets extends RocketMQMetadataClient {
  this: RocketMQOffsetReader =>

  /**
   * The offsets consumer group `group` committed on the brokers (the next offset it reads), of
   * those of `queues` it has committed. One request per queue, which every endpoint forwards (a
   * proxy too): used when a query starts. A 0 from a broker before RocketMQ 5.0 may mean "never
   * committed" ([[RocketMQGroupOffsetAnswer]]): such a broker is asked once more, for its table of
   * every group's offsets, which lists only what was committed.
   */
  def groupOffsets(group: String, queues: Iterable[RocketMQQueue]): Map[RocketMQQueue, Long] = {
    val answers = queues.toSeq.map(queue => queue -> committedOffset(group, queue))
    val doubtful = answers.collect { case (queue, ZeroOrNever) => queue }
    val tables = doubtful.groupBy(_.brokerName).map { case (broker, inDoubt) =>
      val table = committedOnBroker(group, inDoubt.head)
      if (table.isEmpty) {
        groupLog.warn(s"Broker '$broker' answered offset 0 for consumer group '$group' in " +
          s"${inDoubt.mkString(", ")}; before RocketMQ 5.0 that may also mean never committed, " +
          "and the broker does not give its table of offsets to tell: those queues start at 0")
      }
      broker -> table
    }
    answers.flatMap {
      case (queue, Committed(offset)) => Some(queue -> offset)
      case (_, NotCommitted) => None
      // Without the broker's table its 0 is taken: a queue read again rather than skipped.
      case (queue, ZeroOrNever) =>
        tables(queue.brokerName).fold(Option(0L))(_.get(queue)).map(queue -> _)
    }.toMap
  }

  private def committedOffset(group: String, queue: RocketMQQueue): Kind = {
    val header = new QueryConsumerOffsetRequestHeader()
    header.setConsumerGroup(connection.onBroker(group))
    header.setTopic(connection.onBroker(queue.topic))
    header.setQueueId(queue.queueId)
    header.setBrokerName(queue.brokerName)
    header.setSetZeroIfNotFound(false)
    val address = addressOf(queue)
    request(queue.brokerName, GroupOffset(group, queue)) {
      requestCount += 1
      // Sent as the client's call sends it, but the whole answer is kept: its version tells the
      // broker's release.
      val command = RemotingCommand.createRequestCommand(RequestCode.QUERY_CONSUMER_OFFSET, header)
      RocketMQGroupOffsetAnswer.of(remoting.invokeSync(address, command, timeoutMs), address)
    }
  }

  /**
   * What `group` committed in the topic of `queue` on the broker of `queue`, by queue; None where
   * the endpoint refuses the request (an admin request: a proxy, or credentials without rights).
   */
  private def committedOnBroker(group: String, queue: RocketMQQueue)
      : Option[Map[RocketMQQueue, Long]] = {
    if (RocketMQEndpoint.refuses(connection, RocketMQEndpoint.ConsumerOffsets)) return None
    val address = addressOf(queue)
    try {
      val body = request(queue.brokerName, GroupOffsetTable(group, queue.topic)) {
        requestCount += 1
        val command = RemotingCommand.createRequestCommand(RequestCode.GET_ALL_CONSUMER_OFFSET,
          null)
        val response = remoting.invokeSync(address, command, timeoutMs)
        if (response.getCode != RemotingSysResponseCode.SUCCESS) {
          throw new MQBrokerException(response.getCode, response.getRemark, address)
        }
        response.getBody
      }
      val committed =
        committedIn(body, connection.onBroker(queue.topic), connection.onBroker(group))
      Some(committed.map { case (id, offset) => queue.copy(queueId = id) -> offset })
    } catch {
      case e: RocketMQRequestException if RocketMQRetry.refusesAdminRequest(e.getCause) =>
        RocketMQEndpoint.rememberRefusal(connection, RocketMQEndpoint.ConsumerOffsets, e.getCause)
        None
    }
  }

  private def remoting = api.getRemotingClient

  private lazy val groupLog = LoggerFactory.getLogger(classOf[RocketMQGroupOffsets])

  /**
   * Writes `offsets` (next offsets to read) to the brokers as consumer group `group`'s progress,
   * for RocketMQ's monitoring tools. One request per queue whose offset changed since the last
   * commit.
   */
  def commitGroupOffsets(group: String, offsets: Map[RocketMQQueue, Long]): Unit = {
    val changed = offsets.filter { case (q, o) => !lastCommitted.get(q).contains(o) }
    changed.foreach { case (queue, offset) =>
      val header = new UpdateConsumerOffsetRequestHeader()
      header.setConsumerGroup(connection.onBroker(group))
      header.setTopic(connection.onBroker(queue.topic))
      header.setQueueId(queue.queueId)
      header.setCommitOffset(offset)
      header.setBrokerName(queue.brokerName) // a proxy forwards the request to this broker group
      val address = addressOf(queue)
      request(queue.brokerName, CommitOffset(group, queue, offset)) {
        requestCount += 1
        api.updateConsumerOffset(address, header, timeoutMs)
      }
      lastCommitted += queue -> offset
    }
  }

  private var lastCommitted: Map[RocketMQQueue, Long] = Map.empty
}
