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

import java.util.concurrent.{Executors, ScheduledExecutorService, TimeUnit}

import scala.util.control.NonFatal

import org.apache.rocketmq.client.common.ClientErrorCode
import org.apache.rocketmq.client.exception.{MQBrokerException, MQClientException}
import org.apache.rocketmq.remoting.exception.{
  RemotingConnectException, RemotingException, RemotingSendRequestException,
  RemotingTimeoutException,
  RemotingTooMuchRequestException
}
import org.apache.rocketmq.remoting.protocol.{RemotingSysResponseCode, ResponseCode}
import org.slf4j.LoggerFactory

/**
 * The connector's one retry helper: which failures are worth another attempt, and how attempts are
 * spaced.
 *
 * Retryable is what a broker restart or a busy broker explains: a connection that could not be made
 * or broke, a request that timed out, a broker answering "try later" (SYSTEM_BUSY, SYSTEM_ERROR,
 * SERVICE_NOT_AVAILABLE), and a client that finds no route or no address for a broker (the name
 * server drops a broker the moment its connection closes, and lists it again once it registers).
 * Anything else, such as a topic the broker denies or a message it refuses, is final.
 *
 * Two ways to retry: [[withRetries]] makes a fixed number of attempts (driver requests to the name
 * server, where an unreachable address must fail fast); a [[RocketMQRetry.Budget]] retries for a
 * time (`retryTimeoutMs`, long enough to ride out a broker restart), pausing with [[backoffMs]].
 */
private[rocketmq] object RocketMQRetry {
  private val log = LoggerFactory.getLogger(getClass)

  def isRetryable(t: Throwable): Boolean = t match {
    case _ if isAccessDenied(t) || isTooLarge(t) => false
    case _: RemotingConnectException | _: RemotingTimeoutException |
        _: RemotingSendRequestException | _: RemotingTooMuchRequestException => true
    // The client fails every request still in flight on a connection that closed (a broker killed
    // mid-request) with a plain RemotingException; its subclasses (a bad command) are final.
    case e: RemotingException if e.getClass == classOf[RemotingException] => true
    case e: MQBrokerException => retryableCode(e.getResponseCode)
    case e: MQClientException
        if e.getCause != null && (e.getCause ne e) && isRetryable(e.getCause) => true
    case e: MQClientException => retryableCode(e.getResponseCode) || brokerOrRouteMissing(e)
    // A route request the name server did not answer: the client wraps the remoting failure this
    // way (in a pull or send that first looks the route up, too).
    case e: IllegalStateException if e.getCause.isInstanceOf[RemotingException] =>
      isRetryable(e.getCause)
    case _ => false
  }

  /**
   * Whether a send was refused as larger than the broker's `maxMessageSize` (a batch counts whole;
   * a batch the broker answers with SYSTEM_ERROR, which otherwise means a passing fault) or the
   * client's.
   */
  def isTooLarge(t: Throwable): Boolean =
    Iterator.iterate(t)(_.getCause).takeWhile(_ != null).take(5).exists {
      case e: MQBrokerException => sizeExceeded(e.getResponseCode, e.getErrorMessage)
      case e: MQClientException => sizeExceeded(e.getResponseCode, e.getErrorMessage)
      case _ => false
    }

  private def sizeExceeded(code: Int, message: String): Boolean = message != null && (
    code == RemotingSysResponseCode.SYSTEM_ERROR && message.contains("size exceeded") ||
      code == ResponseCode.MESSAGE_ILLEGAL &&
      (message.contains("body length limit") || message.contains("over max value")))

  /**
   * Whether a failed send may have stored its message all the same: it went out and no answer came
   * back (a timeout, a connection lost mid-request). An error answer from the broker (busy, flow
   * control, not available) or a request that never left means that it was not stored.
   */
  def mayHaveBeenStored(t: Throwable): Boolean =
    Iterator.iterate(t)(_.getCause).takeWhile(_ != null).take(5).exists {
      case _: RemotingTimeoutException | _: RemotingSendRequestException => true
      case e: RemotingException if e.getClass == classOf[RemotingException] => true
      case e: MQClientException =>
        e.getResponseCode == ClientErrorCode.ACCESS_BROKER_TIMEOUT ||
        e.getResponseCode == ClientErrorCode.REQUEST_TIMEOUT_EXCEPTION
      case _ => false
    }

  private def retryableCode(code: Int): Boolean =
    code == RemotingSysResponseCode.SYSTEM_BUSY || code == RemotingSysResponseCode.SYSTEM_ERROR ||
      code == ResponseCode.SERVICE_NOT_AVAILABLE ||
      code == ClientErrorCode.CONNECT_BROKER_EXCEPTION ||
      code == ClientErrorCode.ACCESS_BROKER_TIMEOUT ||
      code == ClientErrorCode.BROKER_NOT_EXIST_EXCEPTION ||
      code == ClientErrorCode.NOT_FOUND_TOPIC_EXCEPTION ||
      code == ClientErrorCode.REQUEST_TIMEOUT_EXCEPTION

  /**
   * The client's own "no address for this broker" and "no route for this topic" failures carry no
   * code on some paths (pulls, sends to a chosen queue): they are known by their wording.
   */
  private def brokerOrRouteMissing(e: MQClientException): Boolean = {
    val message = Option(e.getErrorMessage).getOrElse("")
    (message.startsWith("The broker[") && message.contains("] not exist")) ||
    message.startsWith("No route info for this topic") ||
    message.startsWith("No route info of this topic")
  }

  /**
   * The broker refused the request's credentials, or what they allow (RocketMQ answers both with
   * NO_PERMISSION): retrying cannot help, and the error should name the access key.
   */
  def isAccessDenied(t: Throwable): Boolean =
    Iterator.iterate(t)(_.getCause).takeWhile(_ != null).take(5).exists {
      case e: MQBrokerException => e.getResponseCode == ResponseCode.NO_PERMISSION ||
        deniedInWords(e.getErrorMessage)
      case e: MQClientException => e.getResponseCode == ResponseCode.NO_PERMISSION ||
        deniedInWords(e.getErrorMessage)
      case _ => false
    }

  /**
   * A broker with ACL 2.0 answers a pull the user's rights do not allow with SYSTEM_ERROR, not
   * NO_PERMISSION: only its words ("User:x has no permission to access Group:g") tell it from a
   * busy broker.
   */
  private def deniedInWords(message: String): Boolean =
    message != null && message.contains(" has no permission to access ")

  /**
   * The endpoint refused an admin request it does not serve to this client: a RocketMQ 5 proxy
   * answers every admin request "request type N not supported" (REQUEST_CODE_NOT_SUPPORTED), and a
   * broker with ACL on answers NO_PERMISSION to credentials without admin rights. Planning then
   * asks for what every endpoint forwards.
   */
  def refusesAdminRequest(t: Throwable): Boolean =
    Iterator.iterate(t)(_.getCause).takeWhile(_ != null).take(5).exists {
      case e: MQBrokerException => refusalCode(e.getResponseCode)
      case e: MQClientException => refusalCode(e.getResponseCode)
      case _ => false
    }

  private def refusalCode(code: Int): Boolean =
    code == RemotingSysResponseCode.REQUEST_CODE_NOT_SUPPORTED || code == ResponseCode.NO_PERMISSION

  /**
   * A broker answered that it does not have the topic (from a master: deleted; from a replica: not
   * yet copied).
   */
  def deniesTopic(t: Throwable): Boolean = t match {
    case e: MQBrokerException => e.getResponseCode == ResponseCode.TOPIC_NOT_EXIST
    case e: MQClientException => e.getResponseCode == ResponseCode.TOPIC_NOT_EXIST
    case _ => false
  }

  /** A client that found no route for a topic: an outage, or a topic that does not exist. */
  def isNoRoute(t: Throwable): Boolean = t match {
    case e: MQClientException =>
      e.getResponseCode == ClientErrorCode.NOT_FOUND_TOPIC_EXCEPTION ||
      Option(e.getErrorMessage).exists(_.startsWith("No route info")) ||
      (e.getCause != null && (e.getCause ne e) && isNoRoute(e.getCause))
    case _ => false
  }

  /** The pause before retry number `retry` (1, 2, ...): 100 ms, doubling, at most 2 s. */
  def backoffMs(retry: Int): Long =
    math.min(MaxBackoffMs, FirstBackoffMs << math.min(retry - 1, 10))

  private val FirstBackoffMs = 100L
  private val MaxBackoffMs = 2000L

  /**
   * The time budget of one operation's retries, counted from its first failure in a row: after each
   * retryable failure [[nextPauseMs]] says how long to pause before the next attempt, or None once
   * `budgetMs` is spent. A success starts the count afresh. Not thread-safe: one per operation.
   */
  final class Budget(budgetMs: Long, nanoTime: () => Long = () => System.nanoTime()) {
    private var firstFailureNs = 0L
    private var failures = 0
    private var total = 0L

    /** Retries allowed so far, over the budget's life. */
    def retries: Long = total

    /** Milliseconds since the first failure of the current run of failures. */
    def elapsedMs: Long = if (failures == 0) 0L else (nanoTime() - firstFailureNs) / 1000000L

    def nextPauseMs(): Option[Long] = {
      if (failures == 0) firstFailureNs = nanoTime()
      failures += 1
      val left = budgetMs - elapsedMs
      if (left <= 0) None
      else {
        total += 1
        Some(math.min(backoffMs(failures), left))
      }
    }

    def succeeded(): Unit = failures = 0
  }

  /** Runs delayed retries of asynchronous operations (sends whose callback must not sleep). */
  lazy val scheduler: ScheduledExecutorService =
    Executors.newSingleThreadScheduledExecutor { (r: Runnable) =>
      val thread = new Thread(r, "rocketmq-spark-retry")
      thread.setDaemon(true)
      thread
    }

  def schedule(delayMs: Long)(task: => Unit): Unit = {
    scheduler.schedule((() => task): Runnable, delayMs, TimeUnit.MILLISECONDS)
    ()
  }

  /** Runs `body` up to `attempts` times; `what` names the request in the log. */
  def withRetries[T](what: String, attempts: Int, intervalMs: Long,
      beforeRetry: () => Unit = () => ())(
      body: => T): T = {
    var attempt = 1
    while (true) {
      try {
        return body
      } catch {
        case NonFatal(e) if attempt < attempts && isRetryable(e) =>
          log.warn(
            s"RocketMQ request '$what' failed (attempt $attempt of $attempts), retrying in " +
              s"$intervalMs ms: $e")
          if (intervalMs > 0) Thread.sleep(intervalMs)
          beforeRetry()
          attempt += 1
      }
    }
    throw new IllegalStateException("unreachable")
  }
}
