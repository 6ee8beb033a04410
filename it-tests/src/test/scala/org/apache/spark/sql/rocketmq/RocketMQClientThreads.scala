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

import org.apache.rocketmq.client.impl.MQClientManager

/**
 * What the RocketMQ clients of this JVM cost: client instances, and live threads of the kinds the
 * client names its own pools, by name with digits removed. Spark's pools and the in-JVM broker's
 * server threads are not counted: they grow to their own caps regardless of the connector.
 */
object RocketMQClientThreads {
  private val Prefixes =
    Seq("NettyClient", "NettyClientScan", "MQClientFactory", "PullMessageService",
      "RebalanceService", "ClientHouseKeepingService", "AsyncSenderExecutor",
      "NettyClientPublicExecutor")

  /**
   * Pools of the remoting client that start threads on demand, with their cap per remoting client:
   * they may warm up, within the cap. A remoting client is counted by its one selector thread:
   * every client instance has one, and so does each the in-JVM broker keeps (to register with the
   * name server, for instance), whose pools carry the same names.
   */
  private val OnDemandPools = Map("NettyClientScan_thread" -> 10, "NettyClientWorkerThread_" -> 4)

  /** The client instances of this JVM, by client id. */
  def instances: Set[String] =
    MQClientManager.getInstance().getFactoryTable.keySet.toArray(Array.empty[String]).toSet

  def kinds: Map[String, Int] =
    Thread.getAllStackTraces.keySet.toArray(Array.empty[Thread]).toSeq.map(_.getName)
      .filter(n => Prefixes.exists(n.startsWith))
      .groupBy(_.replaceAll("[0-9]+", "#")).map { case (k, v) => k -> v.size }

  /**
   * Problems between two readings: instances grew, a kind of client thread grew (on-demand pools
   * may warm up within their caps), or no client thread was found at all (stale names).
   */
  def growth(before: (Set[String], Map[String, Int]), after: (Set[String], Map[String, Int]))
      : Seq[String] = {
    def onDemand(kind: String) = OnDemandPools.keys.find(kind.startsWith)
    val grown = after._2.collect {
      case (k, n) if n > before._2.getOrElse(k, 0) && onDemand(k).isEmpty =>
        s"$k: ${before._2.getOrElse(k, 0)} -> $n"
    }.toSeq
    val remotingClients = after._2.filter(_._1.startsWith("NettyClientSelector_")).values.sum
    val overCap = OnDemandPools.toSeq.flatMap { case (pool, cap) =>
      val n = after._2.filter(_._1.startsWith(pool)).values.sum
      if (n > cap * remotingClients)
        Some(s"$pool: $n threads for $remotingClients remoting clients")
      else None
    }
    val instances = if (after._1 == before._1) Nil
    else
      Seq(
        s"client instances ${before._1.size} -> ${after._1.size} (new: " +
          s"${(after._1 -- before._1).mkString(", ")}; " +
          s"closed: ${(before._1 -- after._1).mkString(", ")})")
    instances ++ grown ++ overCap ++
      (if (before._2.isEmpty)
         Seq("no RocketMQ client threads found: the thread name prefixes are stale")
       else Nil)
  }

  def reading: (Set[String], Map[String, Int]) = (instances, kinds)
}
