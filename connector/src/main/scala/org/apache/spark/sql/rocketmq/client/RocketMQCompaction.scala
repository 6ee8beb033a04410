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

package org.apache.spark.sql.rocketmq.client

import java.util.Optional
import java.util.concurrent.ConcurrentHashMap

import scala.util.control.NonFatal

import org.apache.rocketmq.client.exception.MQBrokerException
import org.apache.rocketmq.client.impl.MQClientAPIImpl
import org.apache.rocketmq.common.TopicConfig
import org.apache.rocketmq.common.utils.CleanupPolicyUtils
import org.apache.rocketmq.remoting.protocol.ResponseCode
import org.slf4j.LoggerFactory

import org.apache.spark.sql.rocketmq.common.RocketMQConnection

/**
 * Whether a topic is compacted (RocketMQ 5's topic attribute `cleanup.policy=COMPACTION`): its
 * brokers keep only the latest message of each key, so its queues have gaps that are not data
 * loss, and a message without keys is dropped when its file is compacted.
 *
 * A broker of the topic is asked (its topic config), once per topic and connection in a JVM: the
 * policy is set when a topic is created and cannot be changed. A broker that answers without
 * saying (one before RocketMQ 5 or a proxy, which do not know the request; a user without the
 * topic's `Get` right) makes the topic a regular one, and so is remembered; one that cannot be
 * reached now is asked again next time.
 */
private[rocketmq] object RocketMQCompaction {
  private val log = LoggerFactory.getLogger(getClass)

  /**
   * By connection (a user without the topic's `Get` right is told nothing another may be told) and
   * topic (as named on the brokers).
   */
  private val known = new ConcurrentHashMap[(RocketMQConnection, String), java.lang.Boolean]()

  /**
   * Whether `brokerTopic` (its name on the brokers) is compacted, as the broker at `address` says;
   * `address` is evaluated only when the answer is not known yet.
   */
  def isCompacted(api: MQClientAPIImpl, connection: RocketMQConnection, brokerTopic: String,
      address: => String, timeoutMs: Long): Boolean = {
    val key = (connection, brokerTopic)
    val remembered = known.get(key)
    if (remembered != null) return remembered
    try {
      val config: TopicConfig = api.getTopicConfig(address, brokerTopic, timeoutMs)
      val compacted = CleanupPolicyUtils.isCompaction(Optional.ofNullable(config))
      known.put(key, compacted)
      compacted
    } catch {
      case e: MQBrokerException if e.getResponseCode != ResponseCode.TOPIC_NOT_EXIST =>
        log.info(s"The broker does not say whether RocketMQ topic '$brokerTopic' is compacted " +
          s"(${e.getResponseCode}: ${e.getErrorMessage}): read and written as a regular topic")
        known.put(key, false)
        false
      case NonFatal(e) =>
        log.warn(s"Could not ask whether RocketMQ topic '$brokerTopic' is compacted ($e): taken " +
          "as a regular topic this time")
        false
    }
  }
}
