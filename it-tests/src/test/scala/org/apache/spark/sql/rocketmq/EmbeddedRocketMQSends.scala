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

package org.apache.spark.sql.rocketmq

import java.nio.charset.StandardCharsets

import org.apache.rocketmq.client.producer.{SendResult, SendStatus}
import org.apache.rocketmq.common.message.{Message, MessageQueue}

import org.apache.spark.sql.rocketmq.EmbeddedRocketMQ.awaitCondition

/** The harness's sends: each message alone, or many spread over the queues in batches. */
private[rocketmq] trait EmbeddedRocketMQSends {
  this: EmbeddedRocketMQ =>

  /** Sends synchronously and waits until every message is readable (dispatched to its queue). */
  def sendMessages(topic: String, messages: Seq[TestMessage], queueId: Option[Int] = None)
      : Seq[SendResult] = {
    val results = messages.map { m =>
      val message = toMessage(topic, m)
      val result = queueId match {
        case Some(id) =>
          plainClients.producer.send(message, new MessageQueue(topic, brokerName, id))
        case None => plainClients.producer.send(message)
      }
      require(result.getSendStatus == SendStatus.SEND_OK, s"send failed: $result")
      result
    }
    awaitDispatched(topic,
      results.groupBy(_.getMessageQueue).map { case (mq, rs) =>
        mq -> (rs.map(_.getQueueOffset).max + 1)
      })
    results
  }

  /**
   * Sends `messages` spread over the topic's queues as `sendMessages` spreads them, in batches per
   * queue (a request per message takes seconds for tens of thousands); waits until all are read.
   */
  def sendSpread(topic: String, messages: Seq[TestMessage]): Unit =
    awaitDispatched(topic, plainClients.sendSpread(topic, messages.map(toMessage(topic, _))))

  private def toMessage(topic: String, m: TestMessage): Message = {
    val message = new Message(topic, m.tags, m.keys, m.body.getBytes(StandardCharsets.UTF_8))
    m.properties.foreach { case (k, v) => message.putUserProperty(k, v) }
    message
  }

  /** Waits until each queue of `ends` holds the offsets before its end. */
  private def awaitDispatched(topic: String, ends: Map[MessageQueue, Long]): Unit =
    ends.foreach { case (mq, end) =>
      awaitCondition(s"dispatch of the messages before offset $end of $mq", 30000) {
        brokerController.getMessageStore.getMaxOffsetInQueue(topic, mq.getQueueId) >= end
      }
    }

  def sendBodies(topic: String, bodies: Seq[String]): Seq[SendResult] =
    sendMessages(topic, bodies.map(TestMessage(_)))
}
