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

import org.apache.spark.sql.rocketmq.common.{RocketMQConnection, RocketMQRetry}
import org.apache.spark.sql.rocketmq.errors.RocketMQErrors
import org.apache.spark.sql.rocketmq.options.RocketMQOptions

/**
 * What the driver has learnt of the endpoint a connection's `nameServer` names: a name server in
 * front of brokers that serve admin requests, or a RocketMQ 5 proxy (what managed RocketMQ 5
 * services give their users), which forwards sends, pulls, offsets and time searches to the brokers
 * and answers routes itself, but refuses every admin request ("request type N not supported"). That
 * is learnt once per connection, and planning then asks for what every endpoint serves. A broker or
 * name server with ACL may refuse one admin request to credentials without admin rights
 * (NO_PERMISSION): that is learnt per connection and request, and planning does without that
 * request only. On a direct cluster that serves them, nothing changes.
 */
private[rocketmq] object RocketMQEndpoint {
  private val log = LoggerFactory.getLogger(getClass)

  /** The admin requests planning sends, each of which credentials may be refused on its own. */
  sealed abstract class AdminRequest(val name: String)
  /** The cluster's live brokers, asked of the name server. */
  case object ClusterInfo extends AdminRequest("cluster info")
  /** The offsets of all of a topic's queues on one broker. */
  case object TopicStats extends AdminRequest("topic stats")
  /** A broker's table of every group's committed offsets. */
  case object ConsumerOffsets extends AdminRequest("consumer offsets")

  /** Per connection, once an admin request was answered (false) or refused as by a proxy (true). */
  private val proxies = new ConcurrentHashMap[RocketMQConnection, java.lang.Boolean]()

  /** The admin requests refused to each connection's credentials (NO_PERMISSION). */
  private val notPermitted = ConcurrentHashMap.newKeySet[(RocketMQConnection, AdminRequest)]()

  /**
   * Planning found `connection`'s endpoint to be a RocketMQ 5 proxy (no request is sent to find
   * out).
   */
  def knownProxy(connection: RocketMQConnection): Boolean =
    proxies.get(connection) == java.lang.Boolean.TRUE

  /** `request` to this connection's endpoint was refused before: plan without it. */
  def refuses(connection: RocketMQConnection, request: AdminRequest): Boolean =
    knownProxy(connection) || notPermitted.contains((connection, request))

  /**
   * Records that `connection`'s endpoint refused `request` with `cause` (a refusal, as
   * [[RocketMQRetry.refusesAdminRequest]] tells), and logs it once: as a proxy does, then every
   * admin request counts as refused; for the credentials' rights, that request.
   */
  def rememberRefusal(connection: RocketMQConnection, request: AdminRequest, cause: Throwable)
      : Unit =
    if (notSupported(cause)) {
      if (proxies.put(connection, true) != java.lang.Boolean.TRUE) {
        log.info(s"${connection.nameServer} refuses RocketMQ admin requests (${request.name}: " +
          s"${cause.getMessage}, as a RocketMQ 5 proxy does); planning asks for what every " +
          "endpoint serves from now on")
      }
    } else if (notPermitted.add((connection, request))) {
      log.info(s"${connection.nameServer} refuses these credentials RocketMQ's ${request.name} " +
        s"request (${cause.getMessage}); planning does without it from now on")
    }

  /**
   * Whether `options`' endpoint is a RocketMQ 5 proxy: known from an earlier refusal, or asked now
   * with one admin request (the cluster's brokers), remembered for the connection either way. The
   * request is retried as other metadata requests are; an endpoint that still does not answer is
   * taken for a cluster's, unless `mustKnow` (a write a proxy would break): then this fails, saying
   * the endpoint could not be checked. Refused for the credentials' rights, it is a cluster's.
   */
  def isProxy(options: RocketMQOptions, mustKnow: Boolean = false): Boolean = {
    val connection = options.connection
    Option(proxies.get(connection)) match {
      case Some(proxy) => proxy
      case None if notPermitted.contains((connection, ClusterInfo)) => false
      case None =>
        val probe = new AdminProbe(options)
        try { probe.clusterInfo(); proxies.putIfAbsent(connection, false) }
        catch {
          case NonFatal(e) if RocketMQRetry.refusesAdminRequest(e) =>
            rememberRefusal(connection, ClusterInfo, e)
          case NonFatal(e) if mustKnow =>
            val attempts = options(RocketMQOptions.MetadataRetries)
            throw RocketMQErrors.endpointUnchecked(connection.nameServer, attempts,
              options(RocketMQOptions.RequestTimeoutMs), e)
          // Not answered now (an outage): no proxy known; the next plan asks again.
          case NonFatal(e) =>
            log.debug(s"${connection.nameServer} did not answer whether it is a proxy: $e")
        } finally probe.close()
        knownProxy(connection)
    }
  }

  /**
   * `cause` says the endpoint does not serve the request at all (REQUEST_CODE_NOT_SUPPORTED): a
   * RocketMQ 5 proxy.
   */
  def notSupported(cause: Throwable): Boolean =
    Iterator.iterate(cause)(_.getCause).takeWhile(_ != null).take(5).exists {
      case e: MQBrokerException => e.getResponseCode ==
          RemotingSysResponseCode.REQUEST_CODE_NOT_SUPPORTED
      case e: MQClientException => e.getResponseCode ==
          RemotingSysResponseCode.REQUEST_CODE_NOT_SUPPORTED
      case _ => false
    }
}

/** One admin request (the cluster's brokers) through the connection's shared metadata client. */
private final class AdminProbe(options: RocketMQOptions) extends RocketMQMetadataClient(options) {
  def clusterInfo(): Unit =
    RocketMQRetry.withRetries("cluster info", attempts, intervalMs, () => rebuildClient()) {
      api.getBrokerClusterInfo(timeoutMs)
    }
}
