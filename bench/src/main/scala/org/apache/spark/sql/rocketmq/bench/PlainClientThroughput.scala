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

import java.time.Duration
import java.util.concurrent.{CountDownLatch, Executors, Semaphore, TimeUnit}
import java.util.concurrent.atomic.{AtomicLong, AtomicReference}

import scala.jdk.CollectionConverters._

import org.apache.kafka.clients.consumer.KafkaConsumer
import org.apache.kafka.clients.producer.{Callback, ProducerRecord, RecordMetadata}
import org.apache.kafka.common.TopicPartition
import org.apache.kafka.common.serialization.ByteArrayDeserializer
import org.apache.rocketmq.client.consumer.{PullCallback, PullResult, PullStatus}
import org.apache.rocketmq.client.producer.{SendCallback, SendResult}
import org.apache.rocketmq.common.message.{
  Message, MessageAccessor, MessageConst, MessageDecoder, MessageQueue
}
import org.apache.rocketmq.common.sysflag.MessageSysFlag
import org.apache.rocketmq.remoting.InvokeCallback
import org.apache.rocketmq.remoting.netty.ResponseFuture
import org.apache.rocketmq.remoting.protocol.{RemotingCommand, RequestCode}
import org.apache.rocketmq.remoting.protocol.header.EndTransactionRequestHeader

import org.apache.spark.sql.rocketmq.RocketMQPlainClients

/**
 * The raw clients' figures, no Spark: what each broker gives a plain producer and consumer on this
 * machine, the ceiling the connectors are measured against. Readers use `threads` threads (as many
 * as Spark's local tasks), each over its share of the queues.
 */
final class PlainClientThroughput(results: BenchResults, messages: Int, bodyBytes: Int, queues: Int,
    runs: Int,
    threads: Int) {
  private val body = Array.fill[Byte](bodyBytes)('x')

  /**
   * RocketMQ's producer, asynchronous, `batch` messages per request (1: one message per request).
   */
  def rocketmqWrite(system: RocketMQSystem, clients: RocketMQPlainClients, batch: Int): Unit = {
    val label = if (batch == 1) "plain producer (async, one message per request)"
    else "plain producer (async, batches)"
    results.add(Figure("write", label, system.name, "msg/s",
      Measure.rates(messages, runs) { _ =>
        val topic = s"bench-pw-${System.nanoTime()}"
        system.createTopic(topic, queues)
        () => {
          val requests = (messages + batch - 1) / batch
          val done = new CountDownLatch(requests)
          val window = new Semaphore(1024 / batch + 1) // requests in flight
          val failure = new AtomicReference[Throwable]()
          val callback = new SendCallback {
            def onSuccess(r: SendResult): Unit = { window.release(); done.countDown() }
            def onException(e: Throwable): Unit = {
              failure.compareAndSet(null, e); window.release(); done.countDown()
            }
          }
          (0 until messages).grouped(batch).foreach { ids =>
            window.acquire()
            val batchMessages = ids.map(_ => new Message(topic, body))
            if (batch == 1) clients.producer.send(batchMessages.head, callback, 10000)
            else clients.producer.send(batchMessages.asJava, callback, 10000)
          }
          done.await()
          Option(failure.get()).foreach(e => throw e)
        }
      }))
    results.addCpu(label, system.name)
  }

  /**
   * The most RocketMQ's transactions give on this machine, no Spark: every message a half message
   * sent alone (the broker takes no batch of them), asynchronously, 1,024 in flight; then every one
   * committed with its own END_TRANSACTION request (there is no batch form either), 2,048 in
   * flight. The figure is the whole, sends and commits; the commits alone are a figure of their
   * own, in seconds.
   */
  def rocketmqTransactionalWrite(system: RocketMQSystem, clients: RocketMQPlainClients): Unit = {
    val label = "plain transactional producer (async half messages, pipelined commits)"
    val commitSeconds = scala.collection.mutable.ArrayBuffer[Double]()
    results.add(Figure("write", label, system.name, "msg/s",
      Measure.rates(messages, runs) { _ =>
        val topic = s"bench-ptw-${System.nanoTime()}"
        system.createTopic(topic, queues)
        () => {
          val halves = sendHalfMessages(clients, topic)
          val started = System.nanoTime()
          commitAll(clients, topic, halves)
          commitSeconds += (System.nanoTime() - started) / 1e9
        }
      }))
    results.addCpu(label, system.name)
    results.add(Figure("write",
      f"plain transactional producer: the commits of $messages%,d half messages",
      system.name, "s", commitSeconds.takeRight(runs).toSeq))
  }

  private def sendHalfMessages(clients: RocketMQPlainClients, topic: String): Seq[SendResult] = {
    val stored = new java.util.concurrent.ConcurrentLinkedQueue[SendResult]()
    val done = new CountDownLatch(messages)
    val window = new Semaphore(1024)
    val failure = new AtomicReference[Throwable]()
    val callback = new SendCallback {
      def onSuccess(r: SendResult): Unit = { stored.add(r); window.release(); done.countDown() }
      def onException(e: Throwable): Unit = {
        failure.compareAndSet(null, e); window.release(); done.countDown()
      }
    }
    (0 until messages).foreach { _ =>
      window.acquire()
      val message = new Message(topic, body)
      MessageAccessor.putProperty(message, MessageConst.PROPERTY_TRANSACTION_PREPARED, "true")
      MessageAccessor.putProperty(message, MessageConst.PROPERTY_PRODUCER_GROUP,
        "bench-plain-transactions")
      MessageAccessor.putProperty(message, MessageConst.PROPERTY_CHECK_IMMUNITY_TIME_IN_SECONDS,
        "600")
      clients.producer.send(message, callback, 30000)
    }
    done.await()
    Option(failure.get()).foreach(e => throw e)
    stored.asScala.toSeq
  }

  private def commitAll(clients: RocketMQPlainClients, topic: String, halves: Seq[SendResult])
      : Unit = {
    val client = clients.producer.getDefaultMQProducerImpl.getMqClientFactory
    val window = new Semaphore(2048)
    val done = new CountDownLatch(halves.size)
    val failed = new AtomicLong()
    halves.foreach { stored =>
      val header = new EndTransactionRequestHeader()
      header.setTopic(topic)
      header.setProducerGroup("bench-plain-transactions")
      header.setTranStateTableOffset(stored.getQueueOffset)
      header.setCommitLogOffset(MessageDecoder.decodeMessageId(stored.getOffsetMsgId).getOffset)
      header.setCommitOrRollback(MessageSysFlag.TRANSACTION_COMMIT_TYPE)
      header.setFromTransactionCheck(false)
      header.setMsgId(stored.getMsgId)
      header.setBrokerName(stored.getMessageQueue.getBrokerName)
      window.acquire()
      client.getMQClientAPIImpl.getRemotingClient.invokeAsync(
        client.findBrokerAddressInPublish(stored.getMessageQueue.getBrokerName),
        RemotingCommand.createRequestCommand(RequestCode.END_TRANSACTION, header), 30000,
        new InvokeCallback {
          override def operationComplete(future: ResponseFuture): Unit = ()
          override def operationSucceed(response: RemotingCommand): Unit = {
            if (response.getCode != 0) failed.incrementAndGet()
            window.release()
            done.countDown()
          }
          override def operationFail(e: Throwable): Unit = {
            failed.incrementAndGet(); window.release(); done.countDown()
          }
        })
    }
    done.await()
    require(failed.get() == 0, s"${failed.get()} commits not confirmed")
  }

  /**
   * RocketMQ's pull consumer: `synchronous` pulls one at a time per thread (the naive loop),
   * otherwise one asynchronous pull in flight per queue, every queue at once. `how` ends the
   * figure's name (the endpoint the clients reach, where it is not the broker's name server).
   */
  def rocketmqRead(system: RocketMQSystem, clients: RocketMQPlainClients, topic: String,
      synchronous: Boolean, how: String = ""): Unit = {
    val consumer = clients.consumer
    val all = consumer.fetchSubscribeMessageQueues(topic).asScala.toSeq.sortBy(_.getQueueId)
    val label = (if (synchronous) "plain pull loop (sync)" else "plain consumer (async)") + how
    results.add(Figure("read", label, system.name, "msg/s",
      Measure.rates(messages, runs) { _ => () =>
        val read = new AtomicLong()
        if (synchronous) {
          inThreads(all) { mq =>
            var offset = consumer.minOffset(mq)
            val end = consumer.maxOffset(mq)
            while (offset < end) {
              val result = consumer.pull(mq, "*", offset, 32, 10000)
              require(result.getPullStatus == PullStatus.FOUND,
                s"$mq at $offset: ${result.getPullStatus}")
              read.addAndGet(result.getMsgFoundList.size())
              offset = result.getNextBeginOffset
            }
          }
        } else {
          val done = new CountDownLatch(all.size)
          val failure = new AtomicReference[Throwable]()
          def pullFrom(mq: MessageQueue, offset: Long, end: Long): Unit =
            if (offset >= end) done.countDown()
            else consumer.pull(mq, "*", offset, 32,
              new PullCallback {
                def onSuccess(result: PullResult): Unit =
                  if (result.getPullStatus != PullStatus.FOUND)
                    onException(new IllegalStateException(s"$mq: $result"))
                  else {
                    read.addAndGet(result.getMsgFoundList.size())
                    pullFrom(mq, result.getNextBeginOffset, end)
                  }
                def onException(e: Throwable): Unit = {
                  failure.compareAndSet(null, e); done.countDown()
                }
              }, 10000)
          all.foreach(mq => pullFrom(mq, consumer.minOffset(mq), consumer.maxOffset(mq)))
          done.await()
          Option(failure.get()).foreach(e => throw e)
        }
        require(read.get() == messages, s"read ${read.get()} messages, not $messages")
      }))
    results.addCpu(label, system.name)
  }

  def kafkaWrite(system: KafkaSystem): Unit = {
    val label = "plain producer (async, batches)"
    results.add(Figure("write", label, system.name, "msg/s",
      Measure.rates(messages, runs) { _ =>
        val topic = s"bench-pw-${System.nanoTime()}"
        system.createTopic(topic, queues)
        () => {
          val producer = KafkaProcess.producer(system.broker.bootstrapServers)
          val failure = new AtomicReference[Throwable]()
          val callback: Callback =
            (_: RecordMetadata, e: Exception) => if (e != null) failure.compareAndSet(null, e)
          try (0 until messages).foreach(_ =>
              producer.send(new ProducerRecord(topic, body), callback))
          finally producer.close()
          Option(failure.get()).foreach(e => throw e)
        }
      }))
    results.addCpu(label, system.name)
  }

  def kafkaRead(system: KafkaSystem, topic: String): Unit = {
    val label = "plain consumer (async)"
    results.add(Figure("read", label, system.name, "msg/s",
      Measure.rates(messages, runs) { _ => () =>
        val read = new AtomicLong()
        val partitions = (0 until queues).map(new TopicPartition(topic, _))
        inThreads(partitions.grouped((queues + threads - 1) / threads).toSeq) { share =>
          val consumer = new KafkaConsumer[Array[Byte], Array[Byte]](KafkaProcess.props(
              "bootstrap.servers" -> system.broker.bootstrapServers,
              "enable.auto.commit" -> "false"),
            new ByteArrayDeserializer, new ByteArrayDeserializer)
          try {
            consumer.assign(share.asJava)
            consumer.seekToBeginning(share.asJava)
            val end = consumer.endOffsets(share.asJava).asScala
            def behind = share.exists(tp => consumer.position(tp) < end(tp))
            val deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5)
            while (behind) {
              require(System.nanoTime() < deadline, s"$share: not read to the end within 5 minutes")
              read.addAndGet(consumer.poll(Duration.ofSeconds(1)).count())
            }
          } finally consumer.close()
        }
        require(read.get() == messages, s"read ${read.get()} messages, not $messages")
      }))
    results.addCpu(label, system.name)
  }

  /**
   * Runs `work` over `items` on `threads` threads (item i on thread i mod threads); rethrows a
   * failure.
   */
  private def inThreads[T](items: Seq[T])(work: T => Unit): Unit = {
    val pool = Executors.newFixedThreadPool(threads)
    try {
      val futures = items.indices.groupBy(_ % threads).values.map { indices =>
        pool.submit[Unit](() => indices.foreach(i => work(items(i))))
      }
      futures.foreach(_.get())
    } finally {
      pool.shutdown()
      pool.awaitTermination(1, TimeUnit.MINUTES)
    }
  }
}
