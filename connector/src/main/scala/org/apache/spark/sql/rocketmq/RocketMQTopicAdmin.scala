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

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.rocketmq.client.exception.MQClientException
import org.apache.rocketmq.common.{MixAll, TopicConfig}
import org.apache.rocketmq.common.constant.PermName
import org.apache.rocketmq.common.topic.TopicValidator
import org.apache.rocketmq.remoting.protocol.ResponseCode
import org.apache.rocketmq.remoting.protocol.body.ClusterInfo
import org.apache.rocketmq.remoting.protocol.route.{BrokerData, TopicRouteData}
import org.slf4j.LoggerFactory

import org.apache.spark.sql.rocketmq.client.{RocketMQEndpoint, RocketMQMetadataClient}
import org.apache.spark.sql.rocketmq.common.RocketMQRetry
import org.apache.spark.sql.rocketmq.errors.RocketMQErrorKinds.AdminRequest
import org.apache.spark.sql.rocketmq.errors.RocketMQErrorKinds.AdminRequest._
import org.apache.spark.sql.rocketmq.errors.RocketMQErrors
import org.apache.spark.sql.rocketmq.options.RocketMQOptions

/**
 * The topic administration behind [[RocketMQCatalog]]: which topics the name server knows, and
 * creating and deleting topics on the brokers, as RocketMQ's own admin tool does (a topic is
 * created, or deleted, on the master of each of its broker groups; a deleted topic's route is then
 * removed from every name server).
 *
 * It borrows the driver's metadata client of the connection, the one [[RocketMQOffsetReader]] uses,
 * and retries each request with [[RocketMQRetry]]; a request that fails for good is an error naming
 * the server and the request, or the access key when the cluster refused the credentials. Topics
 * are named as the catalog names them: the connection's namespace is applied here. Waits for
 * brokers (none registered, a group without its master, a route not there yet) are bounded by
 * `retryTimeoutMs`.
 */
private[rocketmq] class RocketMQTopicAdmin(options: RocketMQOptions)
  extends RocketMQMetadataClient(options) {
  private val log = LoggerFactory.getLogger(getClass)

  private def atNameServer: String = s"name server $nameServer"

  /**
   * The topics that hold users' messages, sorted: every topic the name server routes but RocketMQ's
   * own (see [[RocketMQTopicAdmin.holdsUserMessages]]); with a namespace, that namespace's only, by
   * their plain names.
   */
  def listTopics(): Seq[String] = {
    val all = ask(atNameServer, ListTopics)(
      api.getTopicListFromNameServer(timeoutMs)).getTopicList.asScala.toSeq
    val ownTopics = RocketMQTopicAdmin.registeredByBrokers(clusterInfo())
    val users = all.filter(RocketMQTopicAdmin.holdsUserMessages(_, ownTopics))
    val named = connection.namespace match {
      // RocketMQ names a namespaced topic namespace%topic (NamespaceUtil).
      case Some(ns) => users.filter(_.startsWith(s"$ns%")).map(connection.inQuery)
      case None => users
    }
    named.distinct.sorted
  }

  /** `topic`'s route, None when the name server has none (the topic does not exist). */
  def route(topic: String): Option[TopicRouteData] = ask(atNameServer, TopicRoute(topic)) {
    try Some(api.getTopicRouteInfoFromNameServer(connection.onBroker(topic), timeoutMs))
    catch { case e: MQClientException if e.getResponseCode == ResponseCode.TOPIC_NOT_EXIST => None }
  }

  /**
   * Creates `topic` with `queues` read and write queues on each broker group of `cluster` (None: on
   * every broker group the name server knows), and returns once the name server routes it to all of
   * them. Creating a topic that exists changes its queue counts (the caller checks first).
   */
  def createTopic(topic: String, queues: Int, cluster: Option[String]): Unit = {
    val masters = awaitMasters(topic)(info => groupsOf(topic, cluster, info))
    val config = new TopicConfig(connection.onBroker(topic), queues, queues,
      PermName.PERM_READ | PermName.PERM_WRITE)
    masters.foreach { case (group, address) =>
      ask(s"broker '$group' ($address)", CreateTopic(topic, queues)) {
        api.createTopic(address, TopicValidator.AUTO_CREATE_TOPIC_KEY_TOPIC, config, timeoutMs)
      }
    }
    awaitRouted(topic, masters.map(_._1).toSet)
  }

  /**
   * Deletes `topic` and its messages from the master of every broker group that hosts it, then its
   * route from every name server; false when the topic does not exist. Nothing is deleted while a
   * group has no master.
   */
  def deleteTopic(topic: String): Boolean = route(topic) match {
    case None => false
    case Some(routed) =>
      val groups = routed.getBrokerDatas.asScala.map(_.getBrokerName).toSeq
      val masters = awaitMasters(topic)(_ => groups)
      val onBroker = connection.onBroker(topic)
      masters.foreach { case (group, address) =>
        ask(s"broker '$group' ($address)", DeleteTopic(topic))(api.deleteTopicInBroker(address,
          onBroker, timeoutMs))
      }
      nameServer.split(';').map(_.trim).filter(_.nonEmpty).foreach { address =>
        ask(s"name server $address", DeleteRoute(topic))(api.deleteTopicInNameServer(address,
          onBroker, timeoutMs))
      }
      true
  }

  private def clusterInfo(): ClusterInfo =
    ask(atNameServer, ClusterBrokers)(api.getBrokerClusterInfo(timeoutMs))

  /**
   * The broker groups of `cluster`, or all; a cluster the name server does not know is an error
   * naming the ones it knows (unless it knows none yet: then the brokers are waited for).
   */
  private def groupsOf(topic: String, cluster: Option[String], info: ClusterInfo): Seq[String] = {
    val clusters: Map[String, java.util.Set[String]] =
      Option(info.getClusterAddrTable).map(_.asScala.toMap).getOrElse(Map.empty)
    cluster match {
      case Some(name) if clusters.nonEmpty && !clusters.contains(name) =>
        throw RocketMQErrors.invalidTableProperty(RocketMQCatalog.ClusterProperty, name, topic,
          "UNKNOWN_CLUSTER",
          "nameServer" -> nameServer, "clusters" -> clusters.keys.toSeq.sorted.mkString(", "))
      case Some(name) => clusters.get(name).map(_.asScala.toSeq).getOrElse(Nil)
      case None => Option(info.getBrokerAddrTable).map(_.asScala.keys.toSeq).getOrElse(Nil)
    }
  }

  /**
   * The master address of each broker group `pick` chooses from the name server's cluster info,
   * sorted by group. While the name server lists no group, or a picked group has no master (it is
   * restarting, or a controller is electing a new one), asks again, for up to `retryTimeoutMs`;
   * then fails naming the group.
   */
  private def awaitMasters(topic: String)(
      pick: ClusterInfo => Seq[String]): Seq[(String, String)] = {
    val budget = new RocketMQRetry.Budget(retryTimeoutMs)
    while (true) {
      val info = clusterInfo()
      val groups = Option(info.getBrokerAddrTable).map(_.asScala.toMap).getOrElse(Map.empty[String,
        BrokerData])
      val masters =
        pick(info).distinct.sorted.map(g => g -> groups.get(g).flatMap(RocketMQTopicAdmin.masterOf))
      // Some(None): no broker group at all; Some(Some(g)): group g has no master.
      val missing: Option[Option[String]] =
        if (masters.isEmpty) Some(None) else masters.collectFirst { case (g, None) => Some(g) }
      missing match {
        case None => return masters.collect { case (g, Some(address)) => g -> address }
        case Some(group) =>
          budget.nextPauseMs() match {
            case Some(pauseMs) =>
              log.warn(s"Topic '$topic' waits for " +
                group.fold("any broker to register")(g => s"a master in '$g'") +
                s"; asking the name server again in $pauseMs ms")
              Thread.sleep(pauseMs)
            case None =>
              throw RocketMQErrors.brokerUnavailable(topic, group, nameServer, budget.elapsedMs,
                group.map(g => new RocketMQErrors.NoServingBroker(g, topic, Nil)).orNull)
          }
      }
    }
    throw new IllegalStateException("unreachable")
  }

  /**
   * Returns once the name server routes `topic` to every group of `groups`: a broker registers a
   * topic it created with the name servers before it answers, but a name server may have missed the
   * registration.
   */
  private def awaitRouted(topic: String, groups: Set[String]): Unit = {
    val budget = new RocketMQRetry.Budget(retryTimeoutMs)
    while (true) {
      val routed = route(topic).toSeq.flatMap(_.getQueueDatas.asScala.map(_.getBrokerName)).toSet
      (groups -- routed).toSeq.sorted.headOption match {
        case None => return
        case Some(group) =>
          budget.nextPauseMs() match {
            case Some(pauseMs) => Thread.sleep(pauseMs)
            case None => throw RocketMQErrors.brokerUnavailable(topic, Some(group), nameServer,
                budget.elapsedMs, null)
          }
      }
    }
  }

  /**
   * One request to `server`, retried; failed for good, an error naming the server and the request.
   */
  private def ask[T](server: String, request: AdminRequest)(body: => T): T =
    try RocketMQRetry.withRetries(s"$request to $server", attempts, intervalMs,
        () => rebuildClient())(body)
    catch {
      case NonFatal(e) if RocketMQEndpoint.notSupported(e) =>
        throw RocketMQErrors.adminNotServed(server, e, request)
      case NonFatal(e) =>
        val failed = RocketMQErrors.adminRequestFailed(server, attempts, e, request)
        throw request.topic.fold(failed)(topic =>
          RocketMQErrors.unlessAccessDenied(e, connection.accessKey, topic)(failed))
    }

}

private[rocketmq] object RocketMQTopicAdmin {

  /** The address of a broker group's master, if it has one up. */
  def masterOf(group: BrokerData): Option[String] =
    Option(group.getBrokerAddrs).flatMap(addresses => Option(addresses.get(MixAll.MASTER_ID)))

  /**
   * Topics every broker registers for itself: one named after its broker group and one after its
   * cluster (when brokerTopicEnable and clusterTopicEnable are on, their defaults), and its
   * cluster's reply topic. A client cannot tell them from users' topics by name alone (a broker
   * adds them to its own JVM's system topics only).
   */
  def registeredByBrokers(info: ClusterInfo): Set[String] = {
    val clusters =
      Option(info.getClusterAddrTable).map(_.keySet.asScala.toSet).getOrElse(Set.empty[String])
    val groups =
      Option(info.getBrokerAddrTable).map(_.keySet.asScala.toSet).getOrElse(Set.empty[String])
    groups ++ clusters ++ clusters.map(c => s"${c}_${MixAll.REPLY_TOPIC_POSTFIX}")
  }

  /**
   * Whether `topic` holds users' messages: not one of RocketMQ's system topics (schedule,
   * transaction, trace, `rmq_sys_…`), not one of `ownTopics` (see [[registeredByBrokers]]), and
   * not a consumer group's retry or dead-letter topic or a light message queue.
   */
  def holdsUserMessages(topic: String, ownTopics: Set[String]): Boolean =
    !TopicValidator.isSystemTopic(topic) && !ownTopics.contains(topic) &&
      !Seq(MixAll.RETRY_GROUP_TOPIC_PREFIX, MixAll.DLQ_GROUP_TOPIC_PREFIX,
        MixAll.LMQ_PREFIX).exists(topic.startsWith)
}
