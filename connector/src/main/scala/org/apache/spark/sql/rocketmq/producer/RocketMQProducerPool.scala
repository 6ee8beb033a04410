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

import java.util.concurrent.{AbstractExecutorService, ExecutorService, TimeUnit}

import scala.util.control.NonFatal

import org.apache.rocketmq.client.exception.MQClientException
import org.apache.rocketmq.client.producer.DefaultMQProducer
import org.apache.rocketmq.remoting.protocol.ResponseCode

import org.apache.spark.sql.rocketmq.client.RocketMQClientCache
import org.apache.spark.sql.rocketmq.common.{RocketMQConnection, RocketMQRetry}

/**
 * The producers of one executor JVM, one per (connection, producer group, compression threshold,
 * trace topic), shared by every task and batch writing with those settings (see
 * [[RocketMQClientCache]]). A producer is safe for concurrent sends; send timeouts and retries are
 * per send, not per producer. A traced producer has its trace dispatcher, closed with it.
 */
private[rocketmq] object RocketMQProducerPool {

  /**
   * What makes two writes able to share a producer. `lane`: through a RocketMQ 5 proxy, the task
   * thread, so that each task sends over a connection of its own (see
   * [[RocketMQWriteSettings.effectiveMaxInFlightMessages]]); 0 otherwise. `traceTopic`: where its
   * sends are traced, if they are.
   */
  final case class Key(connection: RocketMQConnection, group: String, compressionThreshold: Int,
      lane: Long = 0L, traceTopic: Option[String] = None)

  /**
   * A pooled producer, what it learnt of its brokers' key indexes and, when its writes are traced,
   * what records them.
   */
  final class Pooled(val producer: DefaultMQProducer, val trace: Option[RocketMQSendTrace]) {
    val indexes = new RocketMQStoredCheck.Indexes
    def close(): Unit =
      try producer.shutdown()
      finally trace.foreach(_.close())
  }

  val cache = new RocketMQClientCache[Key, Pooled]("producer", newPooled, _.close())

  def borrow(settings: RocketMQWriteSettings): cache.Lease =
    cache.borrow(Key(settings.connection, settings.producerGroup, settings.compressionThreshold,
      if (settings.throughProxy) Thread.currentThread().getId else 0L, settings.traceTopic))

  private def newPooled(key: Key): Pooled = {
    val producer = newProducer(key)
    val trace =
      try key.traceTopic.map(new RocketMQSendTrace(producer, key.connection, key.group, _))
      catch { case e: Throwable => producer.shutdown(); throw e }
    new Pooled(producer, trace)
  }

  /** Producers held now (tests). */
  private[rocketmq] def size: Int = cache.size

  /** A producer that sends once per call: the message sender does its own counted retries. */
  private def newProducer(key: Key): DefaultMQProducer = {
    val producer = new DefaultMQProducer(key.connection.onBroker(key.group), key.connection.rpcHook)
    key.connection.configure(producer)
    producer.setInstanceName(RocketMQClientCache.uniqueInstanceName("spark-rocketmq-writer"))
    producer.setCompressMsgBodyOverHowmuch(key.compressionThreshold)
    producer.setRetryTimesWhenSendFailed(0)
    producer.setRetryTimesWhenSendAsyncFailed(0)
    producer.start()
    // Acknowledgements are decoded on the connection's own thread rather than handed to a codec
    // pool first (set after `start`, before the first send: a connection takes its handlers when it
    // is made). They still reach the sender on the client's callback pool, never on the
    // connection's thread: an acknowledgement may send the rows that waited for it (see
    // RocketMQMessageSender).
    val client = producer.getDefaultMQProducerImpl.getMqClientFactory
    client.getNettyClientConfig.setDisableNettyWorkerGroup(true)
    producer.setAsyncSenderExecutor(
      new InlineSends(producer.getDefaultMQProducerImpl.getAsyncSenderExecutor))
    producer
  }

  private val sendingInline = ThreadLocal.withInitial[java.lang.Boolean](() => false)

  /**
   * Runs `send` with the asynchronous sends it makes issued on the calling thread, not handed to
   * the client's send pool first: a request goes out with one thread hand-off fewer (the write
   * itself still goes through the connection's thread). The message sender makes its first attempts
   * so, from a task's thread or from the callback pool when an acknowledgement sends waiting rows;
   * neither is a connection's thread, and the client connects asynchronously. Resends, which the
   * retry scheduler makes, go through the send pool.
   */
  def inline[T](send: => T): T = {
    val before = sendingInline.get()
    sendingInline.set(true)
    try send
    finally sendingInline.set(before)
  }

  /**
   * The producer's asynchronous send pool: runs a send at once inside [[inline]], else hands it to
   * `pool`.
   */
  private[producer] final class InlineSends(pool: ExecutorService) extends AbstractExecutorService {
    override def execute(command: Runnable): Unit =
      if (sendingInline.get()) command.run() else pool.execute(command)
    override def shutdown(): Unit = pool.shutdown()
    override def shutdownNow(): java.util.List[Runnable] = pool.shutdownNow()
    override def isShutdown: Boolean = pool.isShutdown
    override def isTerminated: Boolean = pool.isTerminated
    override def awaitTermination(timeout: Long, unit: TimeUnit): Boolean =
      pool.awaitTermination(timeout, unit)
  }

  /**
   * Whether `topic` does not exist at all: the name server has no route for it while it lists live
   * brokers. (With no live broker, a missing route is an outage, not a missing topic.) The route is
   * asked for again after the live brokers, as a broker registering in between would make its own
   * topic look missing (an endpoint that does not tell its brokers, a RocketMQ 5 proxy, has them
   * live). False when the name server cannot be asked: the send is then retried as for any outage.
   */
  def topicMissing(producer: DefaultMQProducer, topic: String, timeoutMs: Long): Boolean =
    try {
      val api = producer.getDefaultMQProducerImpl.getMqClientFactory.getMQClientAPIImpl
      def routed(): Boolean =
        try { api.getTopicRouteInfoFromNameServer(topic, timeoutMs); true }
        catch {
          case e: MQClientException if e.getResponseCode == ResponseCode.TOPIC_NOT_EXIST => false
        }
      // A RocketMQ 5 proxy refuses the cluster request; it answers routes from its own name server,
      // so that no route there means no topic.
      def brokersLive(): Boolean =
        try !api.getBrokerClusterInfo(timeoutMs).getBrokerAddrTable.isEmpty
        catch { case NonFatal(e) if RocketMQRetry.refusesAdminRequest(e) => true }
      !routed() && brokersLive() && !routed()
    } catch { case NonFatal(_) => false }
}
