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

import java.util.UUID

/**
 * What the half messages of one exactly-once write share: the producer group the broker asks about
 * them (`group`, as the brokers name it), the run of the query that sent them (a new one each time
 * the query starts: `<start millis>-<random>`, so runs order by start), and how long the broker
 * leaves them to the driver before it checks back (`timeoutMs`).
 */
private[rocketmq] final case class RocketMQTransactionScope(group: String, run: String,
    timeoutMs: Long)

private[rocketmq] object RocketMQTransactionScope {
  def newRun(): String = s"${System.currentTimeMillis()}-${UUID.randomUUID().toString.take(8)}"

  /** The start time of a run, or -1 for text that is not a run. */
  def startOf(run: String): Long =
    try run.substring(0, run.indexOf('-')).toLong
    catch { case _: RuntimeException => -1L }
}

/**
 * The brokers' `transactionCheckInterval` and `transactionCheckMax`, where the user stated them.
 */
private[rocketmq] final case class RocketMQStatedChecks(intervalMs: Option[Long],
    maxChecks: Option[Int])
