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

import scala.jdk.CollectionConverters._

import org.apache.rocketmq.client.impl.producer.TopicPublishInfo
import org.apache.rocketmq.client.producer.{DefaultMQProducer, MessageQueueSelector}
import org.apache.rocketmq.common.constant.PermName
import org.apache.rocketmq.common.message.{Message, MessageQueue}

/**
 * What a [[RocketMQMessageSender]] asks of its producer's routes: the queue a sharding key picks,
 * and whether a topic without a route does not exist.
 */
private[rocketmq] final class RocketMQSendRoutes(producer: DefaultMQProducer,
    requestTimeoutMs: Long) {

  /**
   * Topics found missing, and when each was last asked about, so that an outage costs few requests.
   */
  private val topicChecks = new java.util.concurrent.ConcurrentHashMap[String, (Long, Boolean)]()

  /**
   * Whether `topic` does not exist (not merely unrouted during an outage); asked at most once a
   * second.
   */
  def topicMissing(topic: String): Boolean = {
    val now = System.nanoTime()
    topicChecks.compute(topic,
      (_, last) =>
        if (last != null && now - last._1 < 1000000000L) last
        else (now, RocketMQProducerPool.topicMissing(producer, topic, requestTimeoutMs)))._2
  }

  /**
   * The broker group of an address `failure` (or a cause) names, as RocketMQ's remoting errors
   * name the connection they failed on: which group a send the producer routed went to.
   */
  def groupNamedBy(failure: Throwable): Option[String] = {
    val addresses = RocketMQSendRoutes.addressesIn(failure)
    producer.getDefaultMQProducerImpl.getMqClientFactory.getTopicRouteTable.values.asScala
      .flatMap(_.getBrokerDatas.asScala).collectFirst {
        case group if group.getBrokerAddrs.values.asScala.exists(addresses) => group.getBrokerName
      }
  }

  /**
   * The queue `shardingKey` picks among the topic's queues the producer knows now (the choice
   * [[byShardingKey]] makes when a message is sent alone), or null if it knows none.
   */
  def queueOf(topic: String, shardingKey: String): MessageQueue = {
    val info = producer.getDefaultMQProducerImpl.getTopicPublishInfoTable.get(topic)
    if (info == null || !info.ok()) null
    else RocketMQSendRoutes.queueForKey(topic, info, shardingKey)
  }

  /**
   * Picks the queue of a message sent alone with a sharding key, once the producer knows the
   * topic's route.
   */
  val byShardingKey: MessageQueueSelector =
    (_: java.util.List[MessageQueue], message: Message, key: Any) =>
      RocketMQSendRoutes.queueForKey(message.getTopic,
        producer.getDefaultMQProducerImpl.getTopicPublishInfoTable.get(message.getTopic), key)
}

private[rocketmq] object RocketMQSendRoutes {

  /** An address in a remoting error's text: `<host:port>`, `</ip:port>` or `<host/ip:port>`. */
  private val Address = "<(?:[^<>/\\s]*/)?([^<>/\\s]+:\\d+)>".r

  /** The addresses `failure` and its causes name in their messages. */
  private[producer] def addressesIn(failure: Throwable): Set[String] =
    Iterator.iterate(failure)(_.getCause).takeWhile(_ != null).take(8)
      .flatMap(e => Option(e.getMessage)).flatMap(Address.findAllMatchIn).map(_.group(1)).toSet

  /**
   * The queue `key` picks among all the writable queues of `topic`'s route, in the order RocketMQ's
   * producer lists them (by broker group name, then queue id). The same key always picks the same
   * queue while the topic's queue count does not change: a group whose master is down keeps its
   * queues in the list (RocketMQ's producer leaves them out), so its keys wait for it (sends fail
   * there and are retried) instead of moving to another group's queue.
   */
  def queueForKey(topic: String, info: TopicPublishInfo, key: Any): MessageQueue = {
    val queues =
      info.getTopicRouteData.getQueueDatas.asScala.filter(q => PermName.isWriteable(q.getPerm))
        .sortBy(_.getBrokerName).flatMap(q =>
          (0 until q.getWriteQueueNums).map(new MessageQueue(topic, q.getBrokerName, _)))
    queues(Math.floorMod(key.hashCode, queues.size))
  }
}
