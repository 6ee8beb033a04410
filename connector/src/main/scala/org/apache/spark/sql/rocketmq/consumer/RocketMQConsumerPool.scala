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

package org.apache.spark.sql.rocketmq.consumer

import scala.annotation.nowarn

import org.apache.rocketmq.client.consumer.DefaultMQPullConsumer
import org.apache.rocketmq.client.impl.MQClientManager
import org.apache.rocketmq.common.MixAll

import org.apache.spark.SparkEnv
import org.apache.spark.sql.rocketmq.client.RocketMQClientCache
import org.apache.spark.sql.rocketmq.common.RocketMQConnection

/**
 * The pull consumers of one executor JVM, one per (connection, group). A pull consumer is stateless
 * per pull and safe for concurrent use, so every task and batch reading with the same settings
 * shares it (see [[RocketMQClientCache]] for reuse, eviction and shutdown).
 *
 * Reads use `DefaultMQPullConsumer`, deprecated since RocketMQ 4.6 but still shipped in 5.x: it
 * alone pulls an exact offset range statelessly, with no prefetch past the range (the lite pull
 * consumer prefetches and owns offsets).
 */
@nowarn("cat=deprecation")
private[rocketmq] object RocketMQConsumerPool {

  /**
   * The group pulls name unless option consumerGroup is set: one per Spark application, so that the
   * brokers list each application's reads apart and forget them with it. Pulls never commit
   * offsets.
   */
  def readerGroupOfThisApplication: String = readerGroup(
    Option(SparkEnv.get).flatMap(env => Option(env.conf.getAppId)).getOrElse("no-application"))

  /**
   * `spark-rocketmq-reader-<application id>`, with characters a group name cannot hold replaced.
   */
  def readerGroup(applicationId: String): String =
    ("spark-rocketmq-reader-" + applicationId.replaceAll("[^%|a-zA-Z0-9_-]", "_")).take(255)

  /**
   * How long a broker holds a long poll (real-time reads) at a queue's end before answering
   * "nothing new".
   */
  val LongPollMs = 5000L

  /** How long the client waits for the answer to a long poll. */
  val LongPollAnswerTimeoutMs: Long = LongPollMs + 10000L

  /**
   * What makes two reads able to share a consumer. `lane`: for a task pulling over connections of
   * its own (through a RocketMQ 5 proxy, see [[RocketMQReadSettings.asPlanned]], or from a distant
   * broker group, see [[RocketMQPooledPuller]]), the task thread and which of them; 0 otherwise.
   * `followsEnd`: readers that follow the ends of queues (real-time and continuous mode) share
   * consumers of their own (see [[newConsumer]]).
   */
  final case class Key(connection: RocketMQConnection, group: String, lane: Long = 0L,
      followsEnd: Boolean = false)

  val cache =
    new RocketMQClientCache[Key, DefaultMQPullConsumer]("consumer", newConsumer, _.shutdown())

  /**
   * Connections a task pulls over through a RocketMQ 5 proxy, one pull under way on each: the most
   * pulls it keeps under way there.
   */
  val ProxyConnections = 3

  /**
   * Connections a task pulls over from a distant broker group: one TCP connection carries only as
   * much as its window allows per round trip.
   */
  val DistantConnections = 4

  private val MostOwnConnections = math.max(ProxyConnections, DistantConnections)

  /**
   * A consumer for the calling task: the executor's shared one, or with `ownConnection` (from 0)
   * that connection of the task's own.
   */
  def borrow(settings: RocketMQReadSettings, followsEnd: Boolean = false,
      ownConnection: Option[Int] = None): cache.Lease = {
    val lane =
      ownConnection.fold(0L)(c => Thread.currentThread().getId * MostOwnConnections + c)
    cache.borrow(Key(settings.connection, settings.group, lane, followsEnd))
  }

  /** Consumers held now (tests). */
  private[rocketmq] def size: Int = cache.size

  private def newConsumer(key: Key): DefaultMQPullConsumer = {
    val consumer =
      new DefaultMQPullConsumer(key.connection.onBroker(key.group), key.connection.rpcHook)
    key.connection.configure(consumer)
    consumer.setInstanceName(RocketMQClientCache.uniqueInstanceName("spark-rocketmq-reader"))
    // Stateless pulls of assigned ranges: no rebalancing, no offset bookkeeping in the client.
    consumer.setEnableRebalance(false)
    consumer.setBrokerSuspendMaxTimeMillis(LongPollMs)
    consumer.setConsumerTimeoutMillisWhenSuspend(LongPollAnswerTimeoutMs)
    consumer.start()
    // Every pull asks for the group's master, and a replica only while the route has no master (the
    // client's own choice follows the brokers' suggestions, which can send a pull to a replica
    // whose index trails).
    val pulls = consumer.getDefaultMQPullConsumerImpl.getPullAPIWrapper
    pulls.setConnectBrokerByUser(true)
    pulls.setDefaultBrokerId(MixAll.MASTER_ID)
    if (key.followsEnd) answerOnConnectionThread(consumer)
    consumer
  }

  /**
   * A reader following a queue's end gets thousands of small answers a second (each long poll is
   * answered as soon as a message arrives). By default the client passes each answer from the
   * connection's thread to a codec pool and then to a callback pool before the waiting task has it;
   * here the connection's thread reads the frame and completes the task's wait itself: two thread
   * hand-offs fewer for every message read (docs/bench-real-time.md measures them). Bounded reads
   * keep both pools, which read their large frames side by side. Set after `start`, before the
   * first pull: a connection takes its handlers when it is made, at its first request.
   */
  private def answerOnConnectionThread(consumer: DefaultMQPullConsumer): Unit = {
    val netty =
      MQClientManager.getInstance().getOrCreateMQClientInstance(consumer).getNettyClientConfig
    netty.setDisableNettyWorkerGroup(true)
    netty.setDisableCallbackExecutor(true)
  }

  /**
   * Makes the consumer's client know `topic`'s brokers and their versions before a first pull: the
   * client refuses SQL92 pulls to a broker whose version it has not yet learned from a heartbeat.
   */
  def prepareForSqlFilter(consumer: DefaultMQPullConsumer, topic: String): Unit = {
    val client = MQClientManager.getInstance().getOrCreateMQClientInstance(consumer)
    client.updateTopicRouteInfoFromNameServer(topic)
    client.sendHeartbeatToAllBrokerWithLock()
  }
}
