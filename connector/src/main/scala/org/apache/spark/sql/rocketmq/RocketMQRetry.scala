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

package org.apache.spark.sql.rocketmq

import scala.util.control.NonFatal

import org.apache.rocketmq.client.exception.{MQBrokerException, MQClientException}
import org.apache.rocketmq.remoting.exception.{
  RemotingConnectException, RemotingSendRequestException, RemotingTimeoutException
}
import org.apache.rocketmq.remoting.protocol.{RemotingSysResponseCode, ResponseCode}
import org.slf4j.LoggerFactory

/**
 * The connector's one retry helper, for driver metadata requests (routes, topic stats, offsets).
 * Clients keep their own send and pull retries.
 *
 * Retried: a connection that could not be made or broke, a request that timed out, and broker
 * answers that mean "try later" (SYSTEM_BUSY, SYSTEM_ERROR, SERVICE_NOT_AVAILABLE). Not retried:
 * anything else, such as a topic that does not exist. Between attempts `beforeRetry` runs (the
 * offset reader rebuilds its client there); after the last attempt the last failure is rethrown.
 */
private[rocketmq] object RocketMQRetry {
  private val log = LoggerFactory.getLogger(getClass)

  def isRetryable(t: Throwable): Boolean = t match {
    case _: RemotingConnectException | _: RemotingTimeoutException | _: RemotingSendRequestException => true
    case e: MQBrokerException => retryableCode(e.getResponseCode)
    case e: MQClientException if e.getCause != null && (e.getCause ne e) => isRetryable(e.getCause)
    case e: MQClientException => retryableCode(e.getResponseCode)
    case _ => false
  }

  private def retryableCode(code: Int): Boolean =
    code == RemotingSysResponseCode.SYSTEM_BUSY || code == RemotingSysResponseCode.SYSTEM_ERROR ||
      code == ResponseCode.SERVICE_NOT_AVAILABLE

  /** Runs `body` up to `attempts` times; `what` names the request in the log. */
  def withRetries[T](what: String, attempts: Int, intervalMs: Long, beforeRetry: () => Unit = () => ())(
      body: => T): T = {
    var attempt = 1
    while (true) {
      try {
        return body
      } catch {
        case NonFatal(e) if attempt < attempts && isRetryable(e) =>
          log.warn(s"RocketMQ request '$what' failed (attempt $attempt of $attempts), retrying in $intervalMs ms: $e")
          if (intervalMs > 0) Thread.sleep(intervalMs)
          beforeRetry()
          attempt += 1
      }
    }
    throw new IllegalStateException("unreachable")
  }
}
