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

package org.apache.spark.sql.rocketmq.common

import org.apache.rocketmq.client.common.ClientErrorCode
import org.apache.rocketmq.client.exception.{MQBrokerException, MQClientException}
import org.apache.rocketmq.remoting.exception.{
  RemotingCommandException, RemotingConnectException, RemotingException,
  RemotingSendRequestException,
  RemotingTimeoutException, RemotingTooMuchRequestException
}
import org.apache.rocketmq.remoting.protocol.{RemotingSysResponseCode, ResponseCode}
import org.scalatest.funsuite.AnyFunSuite

/** Which failures are retried, and how a retry budget spaces and ends the attempts. */
class RocketMQRetrySuite extends AnyFunSuite {

  test("failures a broker restart or a busy broker explains are retryable; the rest are final") {
    val retryable = Seq(
      new RemotingConnectException("127.0.0.1:1"),
      new RemotingTimeoutException("wait response timeout"),
      new RemotingSendRequestException("127.0.0.1:1"),
      new RemotingTooMuchRequestException("sendDefaultImpl call timeout"),
      new MQBrokerException(RemotingSysResponseCode.SYSTEM_BUSY, "busy"),
      new MQBrokerException(ResponseCode.SERVICE_NOT_AVAILABLE, "shutting down"),
      new MQClientException("The broker[broker-a] not exist", null),
      new MQClientException("No route info for this topic, t", null),
      new MQClientException("No route info of this topic: t", null)
        .setResponseCode(ClientErrorCode.NOT_FOUND_TOPIC_EXCEPTION),
      new MQClientException("Send [3] times, still failed", new RemotingConnectException("a"))
        .setResponseCode(ClientErrorCode.CONNECT_BROKER_EXCEPTION),
      new MQClientException("wrapped", new RemotingTimeoutException("deep")),
      // A send in flight when the broker was killed: the connection closed under it (seen in a CI
      // run).
      new MQClientException("unknown reason",
        new RemotingException("RemotingCommand [code=310, ...]")),
      // A route request the name server did not answer, as the client throws it (seen in a cluster
      // soak).
      new IllegalStateException(
        new RemotingTimeoutException("wait response on the channel timeout")))
    val nonRetryable = Seq(
      new MQBrokerException(ResponseCode.TOPIC_NOT_EXIST, "topic not exist"),
      new MQBrokerException(ResponseCode.NO_PERMISSION, "no permission"),
      new MQBrokerException(ResponseCode.MESSAGE_ILLEGAL, "message too large"),
      new MQClientException("The specified group name is longer than 255", null),
      new MQClientException(ResponseCode.NO_PERMISSION, "denied"),
      new RemotingCommandException("a command the client could not decode"),
      new IllegalStateException("a bug"),
      new IllegalStateException(
        new RemotingCommandException("a command the client could not decode")))
    retryable.foreach(e => assert(RocketMQRetry.isRetryable(e), e))
    nonRetryable.foreach(e => assert(!RocketMQRetry.isRetryable(e), e))
  }

  test("a send may have stored its message only when no answer came back") {
    assert(RocketMQRetry.mayHaveBeenStored(new RemotingTimeoutException("wait response timeout")))
    assert(RocketMQRetry.mayHaveBeenStored(new MQClientException("send failed",
      new RemotingTimeoutException("t"))))
    assert(RocketMQRetry.mayHaveBeenStored(new RemotingException("connection closed mid-request")))
    assert(!RocketMQRetry.mayHaveBeenStored(
      new MQBrokerException(RemotingSysResponseCode.SYSTEM_BUSY, "[OVERLOAD]")))
    assert(!RocketMQRetry.mayHaveBeenStored(new RemotingConnectException("127.0.0.1:1")))
    assert(!RocketMQRetry.mayHaveBeenStored(
      new MQClientException(ClientErrorCode.NOT_FOUND_TOPIC_EXCEPTION,
        "no route")))
  }

  test("a missing route is told apart from other retryable failures") {
    assert(RocketMQRetry.isNoRoute(new MQClientException("No route info of this topic: t", null)
      .setResponseCode(ClientErrorCode.NOT_FOUND_TOPIC_EXCEPTION)))
    assert(RocketMQRetry.isNoRoute(new MQClientException("No route info for this topic, t", null)))
    assert(!RocketMQRetry.isNoRoute(new MQClientException("The broker[b] not exist", null)))
    assert(!RocketMQRetry.isNoRoute(new RemotingConnectException("a")))
  }

  test("backoff doubles from 100 ms up to 2 s") {
    assert(
      (1 to 8).map(RocketMQRetry.backoffMs) === Seq(100, 200, 400, 800, 1600, 2000, 2000, 2000))
    assert(RocketMQRetry.backoffMs(1000) === 2000)
  }

  test("a budget counts from the first failure in a row, and its last pause ends with it") {
    var nowMs = 0L
    val budget = new RocketMQRetry.Budget(1000, () => nowMs * 1000000L)
    def fail(): Option[Long] = { val p = budget.nextPauseMs(); p.foreach(nowMs += _); p }
    assert(fail() === Some(100) && fail() === Some(200) && fail() === Some(400))
    assert(fail() === Some(300)) // 700 ms spent: what is left, not 800
    assert(fail() === None && budget.retries === 4 && budget.elapsedMs === 1000)
    // A success starts the count again; retries over the budget's life keep adding up.
    budget.succeeded()
    nowMs += 5000
    assert(fail() === Some(100) && budget.retries === 5 && budget.elapsedMs === 100)
    assert(new RocketMQRetry.Budget(0).nextPauseMs() === None)
  }
}
