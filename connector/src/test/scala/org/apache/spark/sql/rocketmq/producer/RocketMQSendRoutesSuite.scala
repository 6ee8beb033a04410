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

import org.apache.rocketmq.client.exception.MQClientException
import org.apache.rocketmq.remoting.exception.{
  RemotingSendRequestException,
  RemotingTimeoutException
}
import org.scalatest.funsuite.AnyFunSuite

/** How a failed send's error is traced to the broker it went to. */
class RocketMQSendRoutesSuite extends AnyFunSuite {

  test("the addresses RocketMQ's remoting errors name, through their causes") {
    val timeout = new MQClientException("wait response timeout, cost=2394",
      new RemotingTimeoutException("wait response on the channel </127.0.0.2:37623> timeout"))
    assert(RocketMQSendRoutes.addressesIn(timeout) === Set("127.0.0.2:37623"))
    val failed = new RemotingSendRequestException("broker-host/10.0.0.7:40917")
    assert(RocketMQSendRoutes.addressesIn(failed) === Set("10.0.0.7:40917"))
    val named = new RemotingTimeoutException("wait response on the channel <broker-1:40918>")
    assert(RocketMQSendRoutes.addressesIn(named) === Set("broker-1:40918"))
    assert(RocketMQSendRoutes.addressesIn(new MQClientException("no route", null)) === Set.empty)
  }
}
