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

import java.util.concurrent.ConcurrentHashMap

import scala.util.control.NonFatal

import org.apache.rocketmq.client.exception.{MQBrokerException, MQClientException}
import org.apache.rocketmq.remoting.protocol.RemotingSysResponseCode

import org.slf4j.LoggerFactory

/**
 * What the driver has learnt of the endpoint a connection's `nameServer` names: a name server in front of brokers
 * that serve admin requests, or a RocketMQ 5 proxy (what managed RocketMQ 5 services give their users), which
 * forwards sends, pulls, offsets and time searches to the brokers and answers routes itself, but refuses every admin
 * request ("request type N not supported"). Brokers with ACL refuse admin requests to credentials without admin
 * rights too. Planning asks for what every endpoint serves where an admin request is refused, once per connection:
 * on a direct cluster nothing changes.
 */
private[rocketmq] object RocketMQEndpoint {
  private val log = LoggerFactory.getLogger(getClass)

  /** The endpoint's answer to an admin request, per connection, once one was refused or answered. */
  sealed trait AdminAnswer
  /** Admin requests are served. */
  case object Served extends AdminAnswer
  /** Refused as not supported: a RocketMQ 5 proxy. */
  case object ProxyRefused extends AdminAnswer
  /** Refused for the credentials' rights (NO_PERMISSION). */
  case object NotPermitted extends AdminAnswer

  private val answers = new ConcurrentHashMap[RocketMQConnection, AdminAnswer]()

  /** Planning found `connection`'s endpoint to be a RocketMQ 5 proxy (no request is sent to find out). */
  def knownProxy(connection: RocketMQConnection): Boolean = answers.get(connection) == ProxyRefused

  /** An admin request to this connection's endpoint was refused before: plan without admin requests. */
  def refusesAdmin(connection: RocketMQConnection): Boolean =
    Option(answers.get(connection)).exists(_ != Served)

  /**
   * Records that `connection`'s endpoint refused an admin request with `cause` (a refusal, as
   * [[RocketMQRetry.refusesAdminRequest]] tells), and logs it once.
   */
  def rememberRefusal(connection: RocketMQConnection, request: String, cause: Throwable): Unit = {
    val answer = if (notSupported(cause)) ProxyRefused else NotPermitted
    if (answers.put(connection, answer) != answer) {
      log.info(s"${connection.nameServer} refuses RocketMQ admin requests ($request: ${cause.getMessage}" +
        (if (answer == ProxyRefused) ", as a RocketMQ 5 proxy does" else ", for these credentials") +
        "); planning asks for what every endpoint serves from now on")
    }
  }

  /**
   * Whether `options`' endpoint is a RocketMQ 5 proxy: known from an earlier refusal, or asked now
   * with one admin request (the cluster's brokers), remembered for the connection either way. The
   * request is retried as other metadata requests are; an endpoint that still does not answer is
   * taken for a cluster's, unless `mustKnow` (a write a proxy would break): then this fails, saying
   * the endpoint could not be checked.
   */
  def isProxy(options: RocketMQOptions, mustKnow: Boolean = false): Boolean = {
    val connection = options.connection
    Option(answers.get(connection)) match {
      case Some(answer) => answer == ProxyRefused
      case None =>
        val probe = new AdminProbe(options)
        try { probe.clusterInfo(); answers.putIfAbsent(connection, Served) }
        catch {
          case NonFatal(e) if RocketMQRetry.refusesAdminRequest(e) => rememberRefusal(connection, "cluster info", e)
          case NonFatal(e) if mustKnow =>
            val attempts = options(RocketMQOptions.MetadataRetries)
            throw RocketMQErrors.endpointUnchecked(connection.nameServer, attempts,
              options(RocketMQOptions.RequestTimeoutMs), e)
          // Not answered now (an outage): no proxy known; the next plan asks again.
          case NonFatal(e) => log.debug(s"${connection.nameServer} did not answer whether it is a proxy: $e")
        } finally probe.close()
        Option(answers.get(connection)).contains(ProxyRefused)
    }
  }

  /** `cause` says the endpoint does not serve the request at all (REQUEST_CODE_NOT_SUPPORTED): a RocketMQ 5 proxy. */
  def notSupported(cause: Throwable): Boolean =
    Iterator.iterate(cause)(_.getCause).takeWhile(_ != null).take(5).exists {
      case e: MQBrokerException => e.getResponseCode == RemotingSysResponseCode.REQUEST_CODE_NOT_SUPPORTED
      case e: MQClientException => e.getResponseCode == RemotingSysResponseCode.REQUEST_CODE_NOT_SUPPORTED
      case _ => false
    }

  /** For tests: forget what was learnt of every endpoint. */
  private[rocketmq] def forget(): Unit = answers.clear()
}

/** One admin request (the cluster's brokers) through the connection's shared metadata client. */
private final class AdminProbe(options: RocketMQOptions) extends RocketMQMetadataClient(options) {
  def clusterInfo(): Unit =
    RocketMQRetry.withRetries("cluster info", attempts, intervalMs, () => rebuildClient()) {
      api.getBrokerClusterInfo(timeoutMs)
    }
}
