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
import org.apache.spark.sql.rocketmq.producer.RocketMQStatedChecks

import org.scalatest.funsuite.AnyFunSuite

/**
 * A broker's check rounds, counted from the send (immune rounds included): what a transaction
 * timeout leaves.
 */
class RocketMQBrokerCheckSettingsSuite extends AnyFunSuite {

  private val rocketmq5 = RocketMQBrokerCheckSettings.defaults("g")
  private val rocketmq49 = RocketMQBrokerCheckSettings("g", 60000L, 15)

  test(
    "a half message lives transactionCheckMax rounds from its send; the immune rounds are used " +
      "up first") {
    assert(rocketmq5.lifeMs === 450000L && rocketmq49.lifeMs === 900000L)
    assert(rocketmq5.checksAfter(60000L) === 13 && rocketmq5.checksAfter(61000L) === 12)
    assert(rocketmq5.checksAfter(120000L) === 11 && rocketmq49.checksAfter(120000L) === 13)
    // The old default (10 min): no check-back at all on RocketMQ 5, five on 4.9.
    assert(rocketmq5.checksAfter(600000L) === -5 && rocketmq49.checksAfter(600000L) === 5)
    assert(rocketmq5.longestTimeoutMs === 360000L && rocketmq49.longestTimeoutMs === 720000L)
  }

  test(
    "a timeout leaving fewer than 3 check-backs is refused, naming the option, the value and the " +
      "longest") {
    rocketmq5.requireCheckBacks("transactionTimeout", "6min", 360000L)
    val e =
      intercept[Exception](rocketmq5.requireCheckBacks("transactionTimeout", "10min", 600000L))
    assert(e.getMessage.contains("'10min'") && e.getMessage.contains("'transactionTimeout'") &&
        e.getMessage.contains("leaves it 0 check-backs") && e.getMessage.contains("Use at most 6m"),
      e.getMessage)
    rocketmq49.requireCheckBacks("transactionTimeout", "10min", 600000L)
  }

  test("a timeout under two check intervals is refused, naming the interval and the shortest") {
    rocketmq5.requireCheckBacks("transactionTimeout", "60s", 60000L)
    val e = intercept[Exception](rocketmq5.requireCheckBacks("transactionTimeout", "59s", 59000L))
    assert(e.getMessage.contains("'59s'") && e.getMessage.contains("every 30s") &&
        e.getMessage.contains("Use at least 1m"), e.getMessage)
    // Brokers that check every 2 s take a timeout of 4 s.
    RocketMQBrokerCheckSettings("g", 2000L, 15).requireCheckBacks("transactionTimeout", "4s", 4000L)
    intercept[Exception](RocketMQBrokerCheckSettings("g", 2000L, 15).requireCheckBacks("t", "3s",
      3000L))
  }

  test(
    "settings the user states are taken for every group; a group that will not say is assumed, " +
      "and said so") {
    val masters = Map("b" -> "127.0.0.1:1", "a" -> "127.0.0.1:2")
    val stated = RocketMQBrokerCheckSettings.strictest(null, masters,
      RocketMQStatedChecks(Some(10000L), Some(6)), 1000L)
    assert(stated === Some(RocketMQBrokerCheckSettings("a", 10000L, 6,
      RocketMQBrokerCheckSettings.Stated)))
    // No client to ask with: the request fails as a least-privilege user's does.
    val assumed = RocketMQBrokerCheckSettings.strictest(null, masters,
      RocketMQStatedChecks(None, Some(4)), 1000L)
    assert(assumed === Some(RocketMQBrokerCheckSettings("a", 30000L, 4,
      RocketMQBrokerCheckSettings.Assumed)))
    assert(RocketMQBrokerCheckSettings.strictest(null, masters, RocketMQStatedChecks(None, None),
      1000L)
      .map(_.source) === Some(RocketMQBrokerCheckSettings.Assumed))
  }
}
