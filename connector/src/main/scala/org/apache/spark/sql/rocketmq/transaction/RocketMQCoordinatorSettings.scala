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

package org.apache.spark.sql.rocketmq.transaction

import org.apache.spark.sql.rocketmq.common.RocketMQConnection
import org.apache.spark.sql.rocketmq.producer.{RocketMQStatedChecks, RocketMQWriteSettings}

/**
 * What the driver's coordinator of an exactly-once write needs of the write's settings: the
 * `connection` its transaction producer uses, the `topic` the option names (None: each row's topic
 * column), to look its route up and to name it in errors, how long one request to a broker may take
 * (`requestTimeoutMs`), and how long a commit or rollback may be retried (`retryTimeoutMs`), and
 * the brokers' check-back settings the user stated (`statedBrokerChecks`).
 */
private[rocketmq] final case class RocketMQCoordinatorSettings(
    connection: RocketMQConnection, topic: Option[String], requestTimeoutMs: Long,
    retryTimeoutMs: Long,
    statedBrokerChecks: RocketMQStatedChecks = RocketMQStatedChecks(None, None))

private[rocketmq] object RocketMQCoordinatorSettings {

  /** What the coordinator of an exactly-once write takes of its `settings`. */
  def of(settings: RocketMQWriteSettings): RocketMQCoordinatorSettings =
    RocketMQCoordinatorSettings(settings.connection, settings.topic,
      requestTimeoutMs = settings.sendTimeoutMs, retryTimeoutMs = settings.retryTimeoutMs,
      settings.statedBrokerChecks)
}
