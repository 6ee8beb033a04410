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

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.rocketmq.client.exception.MQClientException
import org.apache.rocketmq.common.MixAll
import org.apache.rocketmq.remoting.protocol.ResponseCode
import org.apache.rocketmq.remoting.protocol.route.{BrokerData, TopicRouteData}
import org.slf4j.LoggerFactory

import org.apache.spark.sql.rocketmq.RocketMQInvalidInputException
import org.apache.spark.sql.rocketmq.common.{RocketMQRetry, RocketMQTopicSelection}
import org.apache.spark.sql.rocketmq.errors.RocketMQErrors

/**
 * What the name server tells [[RocketMQOffsetReader]] about a topic: its route, and which broker
 * groups are live, so that a broker down is told from a topic gone.
 */
private[rocketmq] trait RocketMQTopicRoutes extends RocketMQMetadataClient {
  this: RocketMQOffsetReader =>

  private lazy val routeLog = LoggerFactory.getLogger(classOf[RocketMQOffsetReader])

  /**
   * Broker groups the name server lists as live (with at least one broker up), by name; None where
   * the endpoint refuses to tell (cluster info is an admin request, which a RocketMQ 5 proxy
   * refuses, and a name server with ACL may refuse to these credentials).
   */
  protected def liveBrokers(): Option[Map[String, BrokerData]] = {
    if (RocketMQEndpoint.refuses(connection, RocketMQEndpoint.ClusterInfo)) return None
    val cluster =
      try RocketMQRetry.withRetries("cluster info", attempts, intervalMs, () => rebuildClient()) {
          requestCount += 1
          api.getBrokerClusterInfo(timeoutMs)
        }
      catch {
        case NonFatal(e) if RocketMQRetry.refusesAdminRequest(e) =>
          RocketMQEndpoint.rememberRefusal(connection, RocketMQEndpoint.ClusterInfo, e)
          return None
      }
    Some(cluster.getBrokerAddrTable.asScala.filter { case (_, data) =>
      !data.getBrokerAddrs.isEmpty
    }.toMap)
  }

  /**
   * The topics `selection` reads now: for a pattern, those of the name server's list it admits,
   * without the ones brokers name after themselves (their own and their cluster's names, the
   * cluster's reply topic), which hold no application's messages.
   */
  def topicsOf(selection: RocketMQTopicSelection): Seq[String] = selection match {
    case RocketMQTopicSelection.Named(topics) => topics
    case matching: RocketMQTopicSelection.Matching =>
      val listed =
        try RocketMQRetry.withRetries("topic list", attempts, intervalMs, () => rebuildClient()) {
            requestCount += 1
            api.getTopicListFromNameServer(timeoutMs).getTopicList.asScala.toSet[String]
          }
        catch {
          case NonFatal(e) if RocketMQRetry.refusesAdminRequest(e) =>
            throw RocketMQErrors.topicListRefused(matching.pattern.pattern, nameServer, e)
          case NonFatal(e) if RocketMQRetry.isRetryable(e) =>
            throw RocketMQErrors.nameServerUnreachable(nameServer, matching.describe, attempts,
              timeoutMs, e)
        }
      val brokersOwn = liveBrokers().fold(Set.empty[String]) { live =>
        val clusters = live.values.map(_.getCluster).toSet
        live.keySet ++ clusters ++ clusters.map(_ + "_" + MixAll.REPLY_TOPIC_POSTFIX)
      }
      (listed -- brokersOwn).toList.filter(t => connection.onBroker(connection.inQuery(t)) == t)
        .map(connection.inQuery).filter(matching.admits).sorted
  }

  /** `topic`'s route, waiting for one while the name server lists no live broker at all. */
  private[client] def awaitRoute(topic: String): TopicRouteData = {
    val budget = new RocketMQRetry.Budget(retryTimeoutMs)
    while (true) {
      routeIfAny(topic) match {
        case Some(route) => return route
        // Asked once more when brokers are live: one may have registered since the route request.
        // (or the endpoint does not tell: a proxy asks its own name server, so no route means no
        // topic).
        case None if !liveBrokers().contains(Map.empty) => return fetchRoute(topic)
        case None =>
          budget.nextPauseMs() match {
            case Some(pauseMs) =>
              routeLog.warn(
                s"The name server lists no live broker, so topic '$topic' has no route; asking " +
                  s"again in $pauseMs ms")
              Thread.sleep(pauseMs)
            case None => throw RocketMQErrors.brokerUnavailable(topic, None, nameServer,
                budget.elapsedMs, null)
          }
      }
    }
    throw new IllegalStateException("unreachable")
  }

  /** `topic`'s route; None when the name server has none. */
  protected def routeIfAny(topic: String): Option[TopicRouteData] =
    try Some(fetchRoute(topic))
    catch {
      case e: RocketMQInvalidInputException if e.getCondition == "ROCKETMQ_TOPIC_NOT_FOUND" =>
        None
    }

  private[rocketmq] def fetchRoute(topic: String): TopicRouteData = {
    try {
      RocketMQRetry.withRetries(s"route of topic '$topic'", attempts, intervalMs,
        () => rebuildClient()) {
        requestCount += 1
        api.getTopicRouteInfoFromNameServer(connection.onBroker(topic), timeoutMs)
      }
    } catch {
      case e: MQClientException if e.getResponseCode == ResponseCode.TOPIC_NOT_EXIST =>
        throw RocketMQErrors.topicNotFound(topic, nameServer)
      case NonFatal(e) if RocketMQRetry.isRetryable(e) =>
        throw RocketMQErrors.nameServerUnreachable(nameServer, topic, attempts, timeoutMs, e)
    }
  }
}
