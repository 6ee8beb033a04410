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

import java.nio.charset.StandardCharsets.UTF_8
import java.util.UUID

import scala.jdk.CollectionConverters._

import org.apache.rocketmq.client.consumer.{DefaultMQPullConsumer, PullStatus}
import org.apache.rocketmq.client.exception.MQClientException
import org.apache.rocketmq.client.impl.MQClientManager
import org.apache.rocketmq.client.producer.{DefaultMQProducer, SendResult, SendStatus}
import org.apache.rocketmq.common.message.{Message, MessageExt, MessageQueue}
import org.apache.rocketmq.remoting.RPCHook

import org.apache.spark.sql.rocketmq.common.RocketMQRetry

/**
 * The plain RocketMQ producer and pull consumer, independent of the connector, for tests that write
 * many messages fast or check what a topic holds. Each is created on first use; the clients follow
 * the name server's routes, so they work on across a broker restart. On a secured broker, `rpcHook`
 * signs their requests.
 */
final class RocketMQPlainClients(nameServer: String, rpcHook: RPCHook = null)
  extends AutoCloseable {
  private var startedProducer: DefaultMQProducer = _
  private var startedConsumer: DefaultMQPullConsumer = _

  /**
   * Sends `count` messages, bodies `body(0 until count)`, in synchronous batches of `batchSize`. A
   * batch whose send fails (a broker just killed, before the producer's routes say so) is sent
   * again with fresh routes, for up to a minute, as an application would.
   */
  def produce(topic: String, count: Int, body: Int => String = _.toString, batchSize: Int = 100)
      : Unit = {
    val p = producer
    (0 until count).grouped(batchSize).foreach { ids =>
      val batch = ids.map(i => new Message(topic, body(i).getBytes(UTF_8))).asJava
      val deadline = System.nanoTime() + 60L * 1000 * 1000 * 1000
      var result: SendResult = null
      while (result == null) {
        try result = p.send(batch)
        catch {
          case e: MQClientException
              if System.nanoTime() < deadline && !RocketMQRetry.mayHaveBeenStored(e) =>
            p.getDefaultMQProducerImpl.getMqClientFactory.updateTopicRouteInfoFromNameServer(topic)
            java.util.concurrent.locks.LockSupport.parkNanos(100L * 1000 * 1000)
        }
      }
      require(result.getSendStatus == SendStatus.SEND_OK, s"batch send to $topic failed: $result")
    }
  }

  /**
   * Sends `messages` spread over `topic`'s queues as the producer's round robin spreads lone
   * messages (the i-th to the i-th queue in turn), in batches of up to 256 a queue. Returns each
   * queue's end offset after its batches.
   */
  def sendSpread(topic: String, messages: Seq[Message]): Map[MessageQueue, Long] = {
    val (queues, all) = (producer.fetchPublishMessageQueues(topic).asScala.toIndexedSeq,
      messages.toIndexedSeq)
    all.indices.groupBy(_ % queues.size).map { case (q, indices) =>
      val ends = indices.map(all).grouped(256).map { batch =>
        val result = producer.send(batch.asJava, queues(q))
        require(result.getSendStatus == SendStatus.SEND_OK, s"batch send to $topic failed: $result")
        result.getQueueOffset + batch.size
      }
      queues(q) -> ends.max
    }
  }

  /**
   * Sends `body` to queue 0 of `topic` on the broker at `brokerAddress` (of group `brokerName`)
   * as a producer whose clock reads `bornMs` would (ahead of the broker's, or behind).
   */
  def sendBornAt(brokerAddress: String, brokerName: String, topic: String, body: String,
      bornMs: Long): SendResult = {
    val impl = producer.getDefaultMQProducerImpl
    val header = new org.apache.rocketmq.remoting.protocol.header.SendMessageRequestHeader()
    header.setProducerGroup(producer.getProducerGroup)
    header.setTopic(topic)
    header.setDefaultTopic(
      org.apache.rocketmq.common.topic.TopicValidator.AUTO_CREATE_TOPIC_KEY_TOPIC)
    header.setDefaultTopicQueueNums(4)
    header.setQueueId(0)
    header.setSysFlag(0)
    header.setBornTimestamp(bornMs)
    header.setFlag(0)
    header.setReconsumeTimes(0)
    header.setBatch(false)
    header.setBrokerName(brokerName)
    val message = new Message(topic, body.getBytes(UTF_8))
    impl.getMqClientFactory.getMQClientAPIImpl.sendMessage(brokerAddress, brokerName, message,
      header, 10000L, org.apache.rocketmq.client.impl.CommunicationMode.SYNC, null, impl)
  }

  /** The next offset to be written per queue of `topic`, as its broker answers. */
  def maxOffsets(topic: String): Map[Int, Long] = {
    val c = consumer
    c.fetchSubscribeMessageQueues(topic).asScala.map(mq => mq.getQueueId -> c.maxOffset(mq)).toMap
  }

  /** Every message of `topic` the broker has indexed, queue by queue from min to max offset. */
  def readAll(topic: String): Seq[MessageExt] = readAllAs(topic)(identity)

  /**
   * What `keep` takes of each message of `topic`, every queue from min to max offset (a pull batch
   * held at a time).
   */
  def readAllAs[T](topic: String)(keep: MessageExt => T): Seq[T] = {
    val c = consumer
    c.fetchSubscribeMessageQueues(topic).asScala.toSeq.sortBy(_.getQueueId).flatMap { mq =>
      readRangeAs(mq, c.minOffset(mq), c.maxOffset(mq))(keep)
    }
  }

  /** The messages of `mq` from offset `from` until `until`, every one of which must be there. */
  def readRange(mq: MessageQueue, from: Long, until: Long): Seq[MessageExt] =
    readRangeAs(mq, from, until)(identity)

  /** What `keep` takes of each message of `mq` from `from` until `until` (each must be there). */
  def readRangeAs[T](mq: MessageQueue, from: Long, until: Long)(keep: MessageExt => T): Seq[T] = {
    val out = Seq.newBuilder[T]
    var offset = from
    while (offset < until) {
      val result = consumer.pull(mq, "*", offset, 256, 10000)
      require(result.getPullStatus == PullStatus.FOUND,
        s"pull of $mq at $offset: ${result.getPullStatus}")
      result.getMsgFoundList.asScala.foreach(m => out += keep(m))
      offset = result.getNextBeginOffset
    }
    out.result()
  }

  override def close(): Unit = synchronized {
    if (startedProducer != null) { startedProducer.shutdown(); startedProducer = null }
    if (startedConsumer != null) { startedConsumer.shutdown(); startedConsumer = null }
  }

  /** The producer, started on first use. */
  def producer: DefaultMQProducer = synchronized {
    if (startedProducer == null) {
      val p = new DefaultMQProducer("plain-test-producer", rpcHook)
      p.setNamesrvAddr(nameServer)
      p.setInstanceName(s"plain-test-producer-${UUID.randomUUID()}")
      p.setSendMsgTimeout(10000)
      p.start()
      startedProducer = p
    }
    startedProducer
  }

  /**
   * The pull consumer, once it has asked for `topic`'s route afresh: it otherwise looks routes up
   * every 30 s, so a topic it has not read yet, or a group that joined it, may be missing from what
   * it knows.
   */
  def routedConsumer(topic: String): DefaultMQPullConsumer = {
    val c = consumer
    MQClientManager.getInstance().getOrCreateMQClientInstance(c).updateTopicRouteInfoFromNameServer(
      topic)
    c
  }

  /** The pull consumer (no rebalancing), started on first use. */
  def consumer: DefaultMQPullConsumer = synchronized {
    if (startedConsumer == null) {
      val c = new DefaultMQPullConsumer("plain-test-reader", rpcHook)
      c.setNamesrvAddr(nameServer)
      c.setInstanceName(s"plain-test-reader-${UUID.randomUUID()}")
      c.setEnableRebalance(false)
      c.start()
      startedConsumer = c
    }
    startedConsumer
  }
}
