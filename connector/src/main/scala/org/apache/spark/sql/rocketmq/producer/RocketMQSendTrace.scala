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

import java.io.Closeable

import org.apache.rocketmq.client.producer.{DefaultMQProducer, SendResult}
import org.apache.rocketmq.client.trace.{
  AsyncTraceDispatcher, TraceBean, TraceContext, TraceDispatcher, TraceType
}
import org.apache.rocketmq.common.message.{
  Message, MessageClientIDSetter, MessageConst, MessageType
}

import org.apache.spark.sql.rocketmq.client.RocketMQClientCache
import org.apache.spark.sql.rocketmq.common.RocketMQConnection

/**
 * Writes a Pub record of RocketMQ's message trace for each message a pooled producer got stored,
 * in the format RocketMQ's own producers write with trace on (so its admin tools and consoles read
 * them), through RocketMQ's asynchronous trace dispatcher. The connector sends batches of its own
 * encoding, which RocketMQ's send hook would record as one message without ids; here each message
 * of a batch gets its record. A send never waits for its record: the dispatcher queues a bounded
 * number and drops the rest. Like RocketMQ's producer, nothing is recorded when the answering
 * broker or proxy says trace is off.
 */
private[producer] final class RocketMQSendTrace(producer: DefaultMQProducer,
    connection: RocketMQConnection, group: String, traceTopic: String) extends Closeable {

  private val dispatcher = {
    val d = new AsyncTraceDispatcher(group, TraceDispatcher.Type.PRODUCE,
      producer.getTraceMsgBatchNum, traceTopic, connection.rpcHook)
    d.setHostProducer(producer.getDefaultMQProducerImpl)
    d.setNamespaceV2(connection.namespace.orNull)
    val traceProducer = d.getTraceProducer
    connection.configure(traceProducer)
    // The dispatcher names every trace client after the name server alone, and RocketMQ shares one
    // client (with the first one's credentials and TLS) per name: a unit name keeps this one apart.
    traceProducer.setUnitName(RocketMQClientCache.uniqueInstanceName("spark-rocketmq-trace"))
    d.start(connection.nameServer, connection.accessChannel)
    d
  }

  /** The record of one message of `result`'s request (`offsetMsgId` null when unknown). */
  private def record(result: SendResult, startMs: Long, message: RocketMQSendTrace.Sent,
      offsetMsgId: String): Unit = {
    val bean = new TraceBean()
    bean.setTopic(connection.inQuery(result.getMessageQueue.getTopic))
    bean.setMsgId(message.msgId)
    bean.setOffsetMsgId(offsetMsgId)
    bean.setTags(message.tags)
    bean.setKeys(message.keys)
    bean.setStoreHost(brokerAddress(result))
    bean.setBodyLength(message.bodyLength)
    bean.setMsgType(message.msgType)
    val costMs = (System.currentTimeMillis() - startMs).toInt
    bean.setStoreTime(startMs + costMs / 2)
    val context = new TraceContext()
    context.setTraceType(TraceType.Pub)
    context.setTimeStamp(startMs)
    context.setRegionId(result.getRegionId)
    context.setGroupName(group)
    context.setCostTime(costMs)
    context.setSuccess(true)
    val beans = new java.util.ArrayList[TraceBean](1)
    beans.add(bean)
    context.setTraceBeans(beans)
    dispatcher.append(context) // false: the queue is full and the dispatcher dropped it
  }

  private def brokerAddress(result: SendResult): String = producer.getDefaultMQProducerImpl
    .getMqClientFactory.findBrokerAddressInPublish(result.getMessageQueue.getBrokerName)

  /** Records `message`, stored alone as `result` says, its request made at `startMs`. */
  def stored(result: SendResult, startMs: Long, message: Message): Unit =
    if (tracing(result)) {
      record(result, startMs, RocketMQSendTrace.Sent(message), result.getOffsetMsgId)
    }

  /** Records the messages of a batch, stored as `result` says, in the order they were sent. */
  def stored(result: SendResult, startMs: Long, batch: Seq[RocketMQSendTrace.Sent]): Unit =
    if (tracing(result)) {
      // A batch's answer lists the broker's ids of its messages in their order.
      val offsetIds = Option(result.getOffsetMsgId).map(_.split(',')).getOrElse(Array.empty)
      val known = offsetIds.length == batch.size
      batch.zipWithIndex.foreach { case (message, i) =>
        record(result, startMs, message, if (known) offsetIds(i) else null)
      }
    }

  /** Whether `result`'s broker wants traces (messages written to the trace topic get none). */
  private def tracing(result: SendResult): Boolean =
    result.isTraceOn && result.getRegionId != null &&
      connection.inQuery(result.getMessageQueue.getTopic) != traceTopic

  /** Sends the records queued, then stops the dispatcher and its client. */
  override def close(): Unit = dispatcher.shutdown()
}

private[producer] object RocketMQSendTrace {

  /** What a trace record says of one message: its id, tags, keys, body size and kind. */
  final case class Sent(msgId: String, tags: String, keys: String, bodyLength: Int,
      msgType: MessageType)

  object Sent {
    def apply(message: Message): Sent = Sent(MessageClientIDSetter.getUniqID(message),
      message.getTags, message.getKeys, bodyLength = message.getBody.length, msgTypeOf(message))
  }

  /** The kind of send RocketMQ's producer would record for `message`. */
  private def msgTypeOf(message: Message): MessageType =
    if ("true" == message.getProperty(MessageConst.PROPERTY_TRANSACTION_PREPARED)) {
      MessageType.Trans_Msg_Half
    } else if (message.getDelayTimeLevel > 0 || message.getDeliverTimeMs > 0 ||
      message.getProperty(MessageConst.PROPERTY_TIMER_DELAY_SEC) != null ||
      message.getProperty(MessageConst.PROPERTY_TIMER_DELAY_MS) != null) {
      MessageType.Delay_Msg
    } else MessageType.Normal_Msg
}
