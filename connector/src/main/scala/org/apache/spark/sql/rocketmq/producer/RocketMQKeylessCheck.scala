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

import org.apache.rocketmq.client.impl.factory.MQClientInstance
import org.apache.rocketmq.common.message.Message

import org.apache.spark.sql.rocketmq.client.RocketMQCompaction
import org.apache.spark.sql.rocketmq.errors.RocketMQErrors

/**
 * Refuses a message without keys for a compacted topic ([[RocketMQCompaction]]): its brokers drop
 * such a message when they compact, and take it without a word in a batched send. Only a message
 * without keys makes the writer ask, once per topic.
 */
private[rocketmq] final class RocketMQKeylessCheck(settings: RocketMQWriteSettings,
    client: () => MQClientInstance) {

  /** By topic (as named on the brokers). */
  private val compacted = new java.util.HashMap[String, java.lang.Boolean]()

  /** Throws if `message`, row `row` of the task, has no keys and its topic is compacted. */
  def check(message: Message, row: Long): Unit = {
    val keys = message.getKeys
    if (keys != null && !keys.trim.isEmpty) return
    val topic = message.getTopic
    var answer = compacted.get(topic)
    if (answer == null) {
      answer = ask(topic)
      compacted.put(topic, answer)
    }
    if (answer) throw RocketMQErrors.keysRequired(topic, row)
  }

  private def ask(topic: String): Boolean = {
    val api = client().getMQClientAPIImpl
    def address: String = {
      val route = api.getTopicRouteInfoFromNameServer(topic, settings.sendTimeoutMs)
      route.getBrokerDatas.asScala.map(_.selectBrokerAddr).find(_ != null)
        .getOrElse(throw new IllegalStateException(s"no broker address for topic $topic"))
    }
    RocketMQCompaction.isCompacted(api, settings.connection, topic, address,
      settings.sendTimeoutMs)
  }
}
