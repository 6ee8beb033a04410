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
import org.apache.rocketmq.remoting.protocol.ResponseCode
import org.apache.rocketmq.remoting.protocol.header.{
  QueryConsumerOffsetRequestHeader, UpdateConsumerOffsetRequestHeader
}

import org.apache.spark.sql.rocketmq.client.RocketMQErrors.BrokerRequest._

/**
 * A consumer group's progress on the brokers, as the driver reads it (`startingOffsets=group`) and writes it (option
 * `consumerGroup`, after each micro-batch): one request per queue, which every endpoint forwards to the queue's
 * broker group (a RocketMQ 5 proxy too; each request names the group's broker).
 */
private[rocketmq] trait RocketMQGroupOffsets extends RocketMQMetadataClient { this: RocketMQOffsetReader =>

  /**
   * The offsets consumer group `group` committed on the brokers (the next offset it reads), of those of `queues` it
   * has committed. One request per queue, which every endpoint forwards (a proxy too): used when a query starts.
   */
  def groupOffsets(group: String, queues: Iterable[RocketMQQueue]): Map[RocketMQQueue, Long] =
    queues.toSeq.flatMap { queue =>
      val header = new QueryConsumerOffsetRequestHeader()
      header.setConsumerGroup(connection.onBroker(group))
      header.setTopic(connection.onBroker(queue.topic))
      header.setQueueId(queue.queueId)
      header.setBrokerName(queue.brokerName)
      header.setSetZeroIfNotFound(false)
      val address = addressOf(queue)
      val offset = request(queue.brokerName, GroupOffset(group, queue)) {
        requestCount += 1
        try api.queryConsumerOffset(address, header, timeoutMs)
        catch {
          // The group has not committed this queue: the query's fallback applies.
          case e: MQBrokerException if e.getResponseCode == ResponseCode.QUERY_NOT_FOUND => -1L
        }
      }
      if (offset >= 0) Some(queue -> offset) else None
    }.toMap

  /**
   * Writes `offsets` (next offsets to read) to the brokers as consumer group `group`'s progress,
   * for RocketMQ's monitoring tools. One request per queue whose offset changed since the last commit.
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
