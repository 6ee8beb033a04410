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

import java.io.Closeable
import java.util.concurrent.{Executors, TimeUnit}

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.rocketmq.client.impl.factory.MQClientInstance
import org.apache.rocketmq.common.MixAll

import org.slf4j.LoggerFactory

/**
 * Keeps the master of every broker group knowing the transaction group's producer. A broker checks
 * back only with the producers that sent it heartbeats, and the client sends them to the masters
 * its routes name, refreshing both every 30 s: a master elected in a failover would spend up to a
 * minute of check rounds (which count towards giving the half messages up) with nobody to ask. So
 * the masters are read from the name server every few seconds; when one changed, the routes are
 * refreshed and the heartbeats sent at once.
 */
private[transaction] final class RocketMQGroupRegistration(client: () => MQClientInstance,
    topics: Seq[String], timeoutMs: Long, run: String)
  extends Closeable {

  private val log = LoggerFactory.getLogger(getClass)
  private var registeredWith: Map[String, String] = Map.empty

  /**
   * Each broker group's master now (group name to address); the producer has sent each its
   * heartbeat.
   */
  def register(): Map[String, String] = synchronized { // the timer's thread and the coordinator's
    val brokers =
      client().getMQClientAPIImpl.getBrokerClusterInfo(timeoutMs).getBrokerAddrTable.asScala.toMap
    val masters = brokers.flatMap { case (group, data) =>
      Option(data.getBrokerAddrs.get(MixAll.MASTER_ID)).map(group -> _)
    }
    if (masters != registeredWith) {
      // Each broker registers a topic under its own name: its route names the group's brokers.
      (brokers.keys.toSeq ++ topics).foreach { topic =>
        try client().updateTopicRouteInfoFromNameServer(topic)
        catch { case NonFatal(e) => log.debug(s"No route for $topic: $e") }
      }
      client().sendHeartbeatToAllBrokerWithLock()
      if (registeredWith.nonEmpty) {
        log.info(s"Transaction run $run: the masters are now $masters (were $registeredWith); " +
          "the producer sent them its heartbeat")
      }
      registeredWith = masters
    }
    masters
  }

  private val timer = Executors.newSingleThreadScheduledExecutor(
    RocketMQTransactionCoordinator.daemonThreads(s"rocketmq-transaction-registration-$run"))

  /** Registers again every few seconds from now on, with every master elected meanwhile. */
  def start(): Unit =
    timer.scheduleWithFixedDelay(() =>
        try register()
        catch { case NonFatal(e) => log.debug(s"Could not read the brokers' masters: $e") },
      EveryMs, EveryMs, TimeUnit.MILLISECONDS)

  override def close(): Unit = timer.shutdownNow()

  private val EveryMs = 3000L
}
