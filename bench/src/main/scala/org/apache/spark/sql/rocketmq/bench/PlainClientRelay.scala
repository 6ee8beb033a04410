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

package org.apache.spark.sql.rocketmq.bench

import java.nio.charset.StandardCharsets.UTF_8
import java.time.Duration
import java.util.concurrent.{Executors, RejectedExecutionException, TimeUnit}
import java.util.concurrent.atomic.{AtomicBoolean, AtomicLong, AtomicReference}

import scala.annotation.nowarn
import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.kafka.clients.consumer.KafkaConsumer
import org.apache.kafka.clients.producer.{Callback, KafkaProducer, ProducerRecord, RecordMetadata}
import org.apache.kafka.common.TopicPartition
import org.apache.kafka.common.serialization.{ByteArrayDeserializer, ByteArraySerializer}
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer
import org.apache.rocketmq.client.consumer.listener.{
  ConsumeConcurrentlyContext, ConsumeConcurrentlyStatus,
  MessageListenerConcurrently
}
import org.apache.rocketmq.client.producer.{DefaultMQProducer, SendCallback, SendResult}
import org.apache.rocketmq.common.consumer.ConsumeFromWhere
import org.apache.rocketmq.common.message.{Message, MessageExt}

/**
 * Relays every message of a source topic to a target topic with a system's own plain clients, in
 * the bench's JVM, no Spark: the floor that broker and client stack gives a copy topic to topic on
 * this machine, beside the Spark queries. The clients keep their default settings (RocketMQ's
 * producer batches, see RocketMQRelay). Each copy's body is what the stateless query writes,
 * `<producer's time> <body>` (RocketMQ's born time, Kafka's record time, epoch ms), so that the
 * target is read and measured the same way. A send that fails is sent again until it is
 * acknowledged, or the relay closes.
 */
sealed abstract class PlainClientRelay extends AutoCloseable {
  private val acknowledged = new AtomicLong()
  private val resends = new AtomicLong()
  private val failure = new AtomicReference[Throwable]()
  private val resender = Executors.newSingleThreadScheduledExecutor { r =>
    val thread = new Thread(r, "bench-relay-resends")
    thread.setDaemon(true)
    thread
  }
  @volatile protected var closing = false

  /** The copies the target's broker acknowledged so far. */
  def relayed: Long = acknowledged.get()

  /** The sends sent again after a failure. */
  def resent: Long = resends.get()

  /**
   * Waits until `count` copies are acknowledged or `timeoutMs` passes: whether they were. Throws if
   * it failed.
   */
  def awaitRelayed(count: Long, timeoutMs: Long): Boolean = within(timeoutMs)(relayed >= count)

  final override def close(): Unit = {
    closing = true
    try closeClients()
    finally resender.shutdownNow()
  }

  /** Starts the clients; returns once the source is read from its first offset in every queue. */
  protected def open(): Unit

  protected def closeClients(): Unit

  protected def failed(e: Throwable): Unit = if (!closing) failure.compareAndSet(null, e)

  /**
   * `<producedAt> <body>`: the stateless query's `concat_ws(' ', CAST(producedAt AS STRING),
   * body)`.
   */
  protected def copyOf(producedAt: Long, body: Array[Byte]): Array[Byte] =
    s"$producedAt ${new String(body, UTF_8)}".getBytes(UTF_8)

  /**
   * Sends a copy with `send`, which calls back with None once the broker acknowledged it, or with
   * the error (it may throw instead); a failed send is sent again 10 ms later (a client that
   * refuses sends at once is not spun on).
   */
  protected def relay(send: (Option[Throwable] => Unit) => Unit): Unit = {
    val outcome = new AtomicBoolean() // a client may call back and throw: one outcome per send
    def done(error: Option[Throwable]): Unit = if (outcome.compareAndSet(false, true)) error match {
      case None => acknowledged.incrementAndGet()
      case Some(_) if !closing =>
        resends.incrementAndGet()
        try resender.schedule((() => relay(send)): Runnable, 10, TimeUnit.MILLISECONDS)
        catch { case _: RejectedExecutionException => () } // closed meanwhile
      case Some(_) => ()
    }
    try send(done)
    catch { case NonFatal(e) => done(Some(e)) }
  }

  /**
   * Polls `ready` every 50 ms until it holds or `timeoutMs` passes: whether it held. Throws if the
   * relay failed.
   */
  protected def within(timeoutMs: Long)(ready: => Boolean): Boolean = {
    val deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs)
    while (!ready && System.nanoTime() < deadline) {
      Option(failure.get()).foreach(e =>
        throw new IllegalStateException(s"the relay failed: $e", e))
      Thread.sleep(50) // polling the condition, bounded by the deadline
    }
    ready
  }
}

object PlainClientRelay {

  /** How long the consumer may take to hold every queue of the source. */
  private val ReadyTimeoutMs = 60000L

  /**
   * Starts relaying `topic` (of `queues` queues, empty) to `target` with `system`'s clients,
   * connected as `connection` says (`nameServer` or `bootstrapServers`); returns once every queue
   * of `topic` is read.
   */
  def start(system: BenchSystem, connection: Map[String, String], topic: String, target: String,
      queues: Int): PlainClientRelay = {
    val relay = system match {
      case _: RocketMQSystem => new RocketMQRelay(connection("nameServer"), topic, target, queues)
      case _: KafkaSystem => new KafkaRelay(connection("bootstrapServers"), topic, target, queues)
    }
    try { relay.open(); relay }
    catch { case NonFatal(e) => relay.close(); throw e }
  }

  /**
   * A push consumer of a fresh group from the first offset, its listener sending each copy
   * asynchronously with a producer of a fresh group (batching its sends, see `open`). Both share a
   * client instance of their own, as a relay in a process of its own would, rather than the bench's
   * producer's (by default every client of a JVM shares one).
   */
  private final class RocketMQRelay(nameServer: String, topic: String, target: String, queues: Int)
    extends PlainClientRelay {
    private val name = s"bench-relay-${System.nanoTime()}"
    private val producer = new DefaultMQProducer(s"$name-producer")
    private val consumer = new DefaultMQPushConsumer(s"$name-consumer")

    protected def open(): Unit = {
      Seq(producer, consumer).foreach { client =>
        client.setNamesrvAddr(nameServer); client.setInstanceName(name)
      }
      // One setting changed from the defaults, as for the bench's own producer (Bench.scala):
      // batching its async sends with a 1 ms hold (autoBatch). One message per request does not
      // keep 20,000 a second acknowledged here.
      producer.setAutoBatch(true)
      producer.batchMaxDelayMs(1)
      producer.start()
      consumer.subscribe(topic, "*")
      consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET)
      consumer.registerMessageListener(new MessageListenerConcurrently {
        override def consumeMessage(messages: java.util.List[MessageExt],
            context: ConsumeConcurrentlyContext): ConsumeConcurrentlyStatus = {
          messages.forEach { m =>
            val copy = new Message(target, copyOf(m.getBornTimestamp, m.getBody))
            relay(done =>
              producer.send(copy,
                new SendCallback {
                  // Any result is a copy stored: the other statuses are of sync flush and
                  // replication.
                  override def onSuccess(result: SendResult): Unit = done(None)
                  override def onException(e: Throwable): Unit = done(Some(e))
                }))
          }
          ConsumeConcurrentlyStatus.CONSUME_SUCCESS
        }
      })
      consumer.start()
      // The source's queues only: the consumer also holds its group's retry topic. Its rebalance
      // state (deprecated accessor, no public one) is what says which queues it holds.
      @nowarn("cat=deprecation") def held =
        consumer.getDefaultMQPushConsumerImpl.getRebalanceImpl.getProcessQueueTable.keySet.asScala
          .count(_.getTopic == topic)
      require(within(ReadyTimeoutMs)(held == queues),
        s"the relay's push consumer held $held of the $queues queues of $topic after " +
          s"$ReadyTimeoutMs ms")
    }

    protected def closeClients(): Unit =
      try consumer.shutdown()
      finally producer.shutdown()
  }

  /**
   * A consumer assigned every partition of the source from the beginning, polled on a thread of its
   * own, and a producer sending each copy to the same partition of the target.
   */
  private final class KafkaRelay(bootstrapServers: String, topic: String, target: String,
      queues: Int)
    extends PlainClientRelay {
    private val producer = new KafkaProducer[Array[Byte], Array[Byte]](
      KafkaProcess.props("bootstrap.servers" -> bootstrapServers), new ByteArraySerializer,
      new ByteArraySerializer)
    private val consumer = new KafkaConsumer[Array[Byte], Array[Byte]](
      KafkaProcess.props("bootstrap.servers" -> bootstrapServers), new ByteArrayDeserializer,
      new ByteArrayDeserializer)
    private val poller = new Thread(() => poll(), s"bench-relay-$topic")
    private val partitions = (0 until queues).map(new TopicPartition(topic, _)).asJava

    protected def open(): Unit = {
      consumer.assign(partitions)
      consumer.seekToBeginning(partitions)
      partitions.forEach(p =>
        consumer.position(p)) // ready: every partition's first offset looked up
      poller.setDaemon(true)
      poller.start()
    }

    private def poll(): Unit =
      try {
        while (!closing) {
          consumer.poll(Duration.ofMillis(100)).forEach { r =>
            val copy = new ProducerRecord[Array[Byte], Array[Byte]](target,
              Integer.valueOf(r.partition()), null,
              copyOf(r.timestamp(), r.value()))
            relay { done =>
              val callback: Callback = (_: RecordMetadata, e: Exception) => done(Option(e))
              producer.send(copy, callback)
            }
          }
        }
      } catch { case NonFatal(e) => failed(e) }
      finally consumer.close()

    protected def closeClients(): Unit = {
      // The poller closes the consumer as it ends (a KafkaConsumer is for one thread at a time).
      try if (poller.getState == Thread.State.NEW) consumer.close()
        else poller.join(TimeUnit.SECONDS.toMillis(10))
      finally producer.close()
    }
  }
}
