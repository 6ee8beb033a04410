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

import org.apache.spark.sql.rocketmq.RocketMQBrokerProcess

/**
 * One side of the comparison as the Spark queries see it: how to make a topic, and the source and sink
 * options and column names of its connector. The queries themselves are the same for both sides.
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
}

final class RocketMQSystem(val broker: RocketMQBrokerProcess) extends BenchSystem {
  val name = "rocketmq"
  val format = "rocketmq"
  def createTopic(topic: String, queues: Int): Unit = broker.createTopic(topic, queues)
  def sourceOptions(topic: String): Map[String, String] = Map("nameServer" -> broker.nameServer, "topic" -> topic)
  def sinkOptions(topic: String): Map[String, String] = sourceOptions(topic)
  val bodyColumn = "body"
  val producedAtColumn = "bornTimestamp"
  def awaitReadable(): Unit = broker.awaitIndexed() // a send is acknowledged before the broker indexes it
}

final class KafkaSystem(val broker: KafkaProcess) extends BenchSystem {
  val name = "kafka"
  val format = "kafka"
  def createTopic(topic: String, queues: Int): Unit = broker.createTopic(topic, queues)
  def sourceOptions(topic: String): Map[String, String] =
    Map("kafka.bootstrap.servers" -> broker.bootstrapServers, "subscribe" -> topic)
  def sinkOptions(topic: String): Map[String, String] =
    Map("kafka.bootstrap.servers" -> broker.bootstrapServers, "topic" -> topic)
  val bodyColumn = "value"
  val producedAtColumn = "timestamp"
  def awaitReadable(): Unit = () // an acknowledged record is readable
}
