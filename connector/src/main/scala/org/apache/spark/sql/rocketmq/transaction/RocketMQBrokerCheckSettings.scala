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

import scala.util.control.NonFatal

import org.apache.rocketmq.client.impl.factory.MQClientInstance

import org.slf4j.LoggerFactory

import org.apache.spark.sql.rocketmq.errors.RocketMQErrors
import org.apache.spark.sql.rocketmq.options.RocketMQOptionKind
import org.apache.spark.sql.rocketmq.producer.RocketMQStatedChecks

/**
 * How a broker group checks back on half messages: a round every `intervalMs`
 * (`transactionCheckInterval`), and a message given up after `maxChecks` rounds
 * (`transactionCheckMax`). Every round counts, also those in which the message is still immune (its
 * transaction timeout not over) and is only put back in the queue (RocketMQ issue #8311): a half
 * message lives `lifeMs` after it is sent whatever its timeout, and a timeout near that leaves no
 * check-back at all: the broker gives the rows up without asking anybody.
 */
private[rocketmq] final case class RocketMQBrokerCheckSettings(broker: String, intervalMs: Long,
    maxChecks: Int,
    source: RocketMQBrokerCheckSettings.Source = RocketMQBrokerCheckSettings.Asked) {

  /** How long after it is sent the broker gives a half message up. */
  def lifeMs: Long = intervalMs * maxChecks

  /**
   * How many check-backs the broker makes about a message immune for `timeoutMs` before it gives it
   * up.
   */
  def checksAfter(timeoutMs: Long): Long = maxChecks - (timeoutMs + intervalMs - 1) / intervalMs

  /**
   * The longest transaction timeout that leaves [[RocketMQBrokerCheckSettings.MinCheckBacks]]
   * check-backs.
   */
  def longestTimeoutMs: Long = (maxChecks - RocketMQBrokerCheckSettings.MinCheckBacks) * intervalMs

  /**
   * The shortest transaction timeout: two check intervals. The driver commits within the first half
   * of it; only a round in the second half, while the messages are immune, can read those commits
   * and drop the copies an earlier round made of the messages (after the immunity the broker asks
   * about each copy).
   */
  def shortestTimeoutMs: Long = 2 * intervalMs

  /**
   * Fails, naming the option, when a transaction timeout of `timeoutMs` is shorter than two check
   * intervals, or leaves too few check-backs.
   */
  def requireCheckBacks(option: String, value: String, timeoutMs: Long): Unit = {
    if (timeoutMs < shortestTimeoutMs) {
      throw RocketMQErrors.invalidOption(option, value, "TRANSACTION_TIMEOUT_UNDER_CHECKS",
        "broker" -> broker,
        "interval" -> RocketMQOptionKind.Duration.render(intervalMs),
        "shortest" -> RocketMQOptionKind.Duration.render(shortestTimeoutMs))
    }
    if (checksAfter(timeoutMs) < RocketMQBrokerCheckSettings.MinCheckBacks) {
      throw RocketMQErrors.invalidOption(option, value, "TRANSACTION_TIMEOUT_OVER_CHECKS",
        "broker" -> broker,
        "lifeS" -> (lifeMs / 1000).toString, "maxChecks" -> maxChecks.toString,
        "intervalS" -> (intervalMs / 1000).toString,
        "checks" -> math.max(0L, checksAfter(timeoutMs)).toString,
        "longest" -> RocketMQOptionKind.Duration.render(longestTimeoutMs),
        "minChecks" -> RocketMQBrokerCheckSettings.MinCheckBacks.toString)
    }
  }
}

private[rocketmq] object RocketMQBrokerCheckSettings {
  private val log = LoggerFactory.getLogger(classOf[RocketMQBrokerCheckSettings])

  /** Check-backs a transaction timeout must leave: time for a restarted query to answer. */
  val MinCheckBacks = 3

  /** Where settings come from, as the sink's progress says (`brokerChecks`). */
  sealed abstract class Source(val name: String)
  /** Each broker group said its own. */
  case object Asked extends Source("asked")
  /** The user stated them (options), for every group. */
  case object Stated extends Source("stated")
  /**
   * A group would not say: RocketMQ 5's defaults are assumed, and the timeout check may guard
   * nothing.
   */
  case object Assumed extends Source("assumed")

  /**
   * RocketMQ 5's defaults (4.9 checks every 60 s: its messages live longer), assumed where a broker
   * won't say.
   */
  def defaults(broker: String): RocketMQBrokerCheckSettings =
    RocketMQBrokerCheckSettings(broker, 30000L, 15, Assumed)

  /**
   * The settings of the broker group (of `masters`, group name to master address) that gives half
   * messages up soonest. What the user `stated` is taken as it is; the rest is asked of each group
   * (an admin request, which a user with least privilege may not make), and RocketMQ 5's defaults
   * are assumed, with a warning, for a group that does not say. None when `masters` is empty.
   */
  def strictest(client: MQClientInstance, masters: Map[String, String],
      stated: RocketMQStatedChecks,
      timeoutMs: Long): Option[RocketMQBrokerCheckSettings] =
    masters.toSeq.sorted.map { case (group, address) =>
      (stated.intervalMs, stated.maxChecks) match {
        case (Some(interval), Some(max)) =>
          RocketMQBrokerCheckSettings(group, interval, max, Stated)
        case _ =>
          val told = asked(client, group, address, timeoutMs)
          RocketMQBrokerCheckSettings(group, stated.intervalMs.getOrElse(told.intervalMs),
            stated.maxChecks.getOrElse(told.maxChecks), told.source)
      }
    }.sortBy(_.lifeMs).headOption

  private def asked(client: MQClientInstance, group: String, address: String, timeoutMs: Long)
      : RocketMQBrokerCheckSettings =
    try {
      val config = client.getMQClientAPIImpl.getBrokerConfig(address, timeoutMs)
      val defaulted = defaults(group)
      RocketMQBrokerCheckSettings(group,
        Option(config.getProperty("transactionCheckInterval")).map(_.trim.toLong).getOrElse(
          defaulted.intervalMs),
        Option(config.getProperty("transactionCheckMax")).map(_.trim.toInt).getOrElse(
          defaulted.maxChecks))
    } catch {
      case NonFatal(e) =>
        log.warn(
          s"Broker group $group does not say how it checks back on half messages ($e): assuming " +
            "RocketMQ 5's defaults (every 30 s, 15 times), so the transactionTimeout check may " +
            "guard nothing. " +
            "State the brokers' settings with the options brokerTransactionCheckInterval and " +
            "brokerTransactionCheckMax.")
        defaults(group)
    }
}
