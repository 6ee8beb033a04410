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

import java.util.Properties

import org.apache.spark.sql.rocketmq.{RocketMQBrokerProcess, RocketMQPlainClients}

/**
 * One side of the comparison as the Spark queries see it: how to make a topic, and the source and
 * sink options and column names of its connector. The queries themselves are the same for both
 * sides.
 */
sealed trait BenchSystem {
  def name: String
  def format: String
  def createTopic(topic: String, queues: Int): Unit
  def sourceOptions(topic: String): Map[String, String]
  def sinkOptions(topic: String): Map[String, String]

  /** The source column holding the message body, and the sink column a body is written from. */
  def bodyColumn: String

  /** The source column holding the time the producer stamped on the message. */
  def producedAtColumn: String

  /** Returns once everything acknowledged to a producer can be read. */
  def awaitReadable(): Unit

  /**
   * Creates a topic whose messages carry the time the broker stored them, read as the source's time
   * column: RocketMQ's `storeTimestamp` always does; a Kafka topic does with
   * `message.timestamp.type=LogAppendTime`.
   */
  def createStoreTimedTopic(topic: String, queues: Int): Unit

  /** How many messages `topic` holds: the sum of its queues' end offsets. */
  def storedMessages(topic: String): Long
}

final class RocketMQSystem(val broker: RocketMQBrokerProcess) extends BenchSystem {
  val name = "rocketmq"
  val format = "rocketmq"
  def createTopic(topic: String, queues: Int): Unit = broker.createTopic(topic, queues)
  def sourceOptions(topic: String): Map[String, String] =
    Map("nameServer" -> broker.nameServer, "topic" -> topic)
  def sinkOptions(topic: String): Map[String, String] = sourceOptions(topic)
  val bodyColumn = "body"
  val producedAtColumn = "bornTimestamp"
  def awaitReadable(): Unit =
    broker.awaitIndexed() // a send is acknowledged before the broker indexes it
  def createStoreTimedTopic(topic: String, queues: Int): Unit = createTopic(topic, queues)
  def storedMessages(topic: String): Long = broker.maxOffsets(topic).values.sum

  /**
   * Sets the broker's four pull limits (messages and bytes one pull may return from memory and from
   * disk) while it runs, as `mqadmin updateBrokerConfig` does; the broker reads them on every pull.
   */
  def setPullLimits(clients: RocketMQPlainClients, limits: RocketMQSystem.PullLimits): Unit = {
    val properties = new Properties()
    properties.setProperty("maxTransferCountOnMessageInMemory", limits.memoryMessages.toString)
    properties.setProperty("maxTransferBytesOnMessageInMemory", limits.memoryBytes.toString)
    properties.setProperty("maxTransferCountOnMessageInDisk", limits.diskMessages.toString)
    properties.setProperty("maxTransferBytesOnMessageInDisk", limits.diskBytes.toString)
    val api = clients.producer.getDefaultMQProducerImpl.getMqClientFactory.getMQClientAPIImpl
    api.updateBrokerConfig(broker.brokerAddress, properties, 10000)
    val now = api.getBrokerConfig(broker.brokerAddress, 10000)
    properties.stringPropertyNames().forEach { key =>
      require(now.getProperty(key) == properties.getProperty(key),
        s"the broker kept $key=${now.getProperty(key)}, not ${properties.getProperty(key)}")
    }
  }
}

object RocketMQSystem {

  /** How much one pull may return: messages and bytes, from memory and from disk. */
  final case class PullLimits(memoryMessages: Int, memoryBytes: Int, diskMessages: Int,
      diskBytes: Int) {
    override def toString: String =
      s"$memoryMessages / ${memoryBytes / 1024} KiB from memory, $diskMessages / " +
        s"${diskBytes / 1024} KiB from disk"
  }

  /** RocketMQ's defaults, which the bench's broker keeps except while measuring raised limits. */
  val DefaultPullLimits: PullLimits = PullLimits(32, 256 * 1024, 8, 64 * 1024)

  /** Raised as far as the test suites once raised them. */
  val RaisedPullLimits: PullLimits = PullLimits(1024, 4 * 1024 * 1024, 1024, 4 * 1024 * 1024)
}

final class KafkaSystem(val broker: KafkaProcess) extends BenchSystem {
  val name = "kafka"
  val format = "kafka"
  def createTopic(topic: String, queues: Int): Unit = broker.createTopic(topic, queues)
  def sourceOptions(topic: String): Map[String, String] =
    Map("kafka.bootstrap.servers" -> broker.bootstrapServers, "subscribe" -> topic)
  /**
   * Idempotence off, as for the plain producer (see [[KafkaProcess.producer]]): Spark's Kafka sink
   * with the default idempotent producer stalled the same way here (a streaming write's records
   * expired after 120 s). Both sinks are then at-least-once, as this connector's is.
   */
  def sinkOptions(topic: String): Map[String, String] =
    Map("kafka.bootstrap.servers" -> broker.bootstrapServers, "topic" -> topic,
      "kafka.enable.idempotence" -> "false")
  val bodyColumn = "value"
  val producedAtColumn = "timestamp"
  def awaitReadable(): Unit = () // an acknowledged record is readable
  def createStoreTimedTopic(topic: String, queues: Int): Unit =
    broker.createTopic(topic, queues, Map("message.timestamp.type" -> "LogAppendTime"))
  def storedMessages(topic: String): Long = broker.endOffsets(topic)
}
