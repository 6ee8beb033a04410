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

import org.apache.rocketmq.client.ClientConfig
import org.apache.rocketmq.client.impl.MQClientManager
import org.apache.rocketmq.client.impl.factory.MQClientInstance
import org.apache.rocketmq.common.{BoundaryType, MixAll}
import org.apache.rocketmq.common.constant.PermName
import org.apache.rocketmq.remoting.protocol.route.{BrokerData, TopicRouteData}

import org.slf4j.LoggerFactory

import org.apache.spark.sql.rocketmq.RocketMQRequestException
import org.apache.spark.sql.rocketmq.client.RocketMQOffsetReader.BrokerDown
import org.apache.spark.sql.rocketmq.common.{
  RocketMQConnection, RocketMQQueue, RocketMQQueueRange, RocketMQRetry
}
import org.apache.spark.sql.rocketmq.errors.RocketMQErrorKinds.BrokerRequest
import org.apache.spark.sql.rocketmq.errors.RocketMQErrorKinds.BrokerRequest._
import org.apache.spark.sql.rocketmq.errors.RocketMQErrors
import org.apache.spark.sql.rocketmq.options.RocketMQOptions

/**
 * The driver's view of RocketMQ metadata: which queues a topic has and which offsets they hold.
 *
 * It asks the name server for the topic's route, then each broker once for the stats of all the
 * topic's queues it hosts: a plan costs requests per broker, never per queue. Only queues that the
 * route marks readable are returned. Its client joins no consumer or producer group, so it sends no
 * heartbeats and takes part in no rebalance; it is started fully (its scheduled tasks refresh
 * routes), so that closing it stops all its threads. Routes and live brokers come from
 * [[RocketMQTopicRoutes]], the wait for brokers to index from [[RocketMQIndexingWait]].
 */
private[rocketmq] class RocketMQOffsetReader(val options: RocketMQOptions)
  extends RocketMQMetadataClient(options) with RocketMQTopicRoutes with RocketMQIndexingWait
  with RocketMQGroupOffsets {
  private val log = LoggerFactory.getLogger(getClass)

  /** Master (else replica) address of each broker group, from the latest route lookup. */
  private var brokerAddresses: Map[String, String] = Map.empty

  /** Requests sent to brokers and name server so far (tests check planning stays per broker). */
  @volatile private[rocketmq] var requestCount = 0L

  /**
   * Current offsets of every readable queue of `topics`. A topic that does not exist is an error
   * naming it, or with `allowMissing` (a running stream, where it is data loss) simply has no
   * queues.
   *
   * A broker that is down is not a topic or queue gone: while the name server lists no broker at
   * all, or a broker of `knownQueues` (the queues a stream already reads) is missing from the route
   * and from the name server's live brokers, or a routed broker does not answer, this waits and
   * asks again, for up to `retryTimeoutMs`, then fails naming the broker. Only a broker that
   * answers and denies the topic, or a live broker the route no longer lists, takes the topic's
   * queues there away.
   *
   * `awaitIndexed` (a batch read, the end of an AvailableNow stream): each master is first asked to
   * index what it has stored, so that the read sees every write the broker acknowledged before it
   * was planned.
   */
  def fetchQueueRanges(
      topics: Seq[String],
      allowMissing: Boolean = false,
      knownQueues: Set[RocketMQQueue] = Set.empty,
      awaitIndexed: Boolean = false): Map[RocketMQQueue, RocketMQQueueRange] = {
    val budget = new RocketMQRetry.Budget(retryTimeoutMs)
    indexedBrokers = if (awaitIndexed) Set.empty else null
    if (awaitIndexed) probeKnownMasters(topics)
    while (true) {
      val attempts = topics.map(topic =>
        topic -> attemptQueueRanges(topic, knownQueues.filter(_.topic == topic)))
        .map(expectGroups)
      attempts.collectFirst { case (topic, Left(unavailable)) => (topic, unavailable) } match {
        case None =>
          if (awaitIndexed) rememberMasters()
          return attempts.flatMap {
            case (_, Right(Some(ranges))) => ranges
            case _ if allowMissing => Map.empty[RocketMQQueue, RocketMQQueueRange]
            case (topic, _) => throw RocketMQErrors.topicNotFound(topic, nameServer)
          }.toMap
        case Some((topic, unavailable)) =>
          budget.nextPauseMs() match {
            case Some(pauseMs) =>
              RocketMQOffsetReader.unavailablePauses.incrementAndGet()
              log.warn(
                s"RocketMQ topic '$topic' is not available now (${unavailable.describe}); asking " +
                  "again in " +
                  s"$pauseMs ms (${budget.elapsedMs} ms of retryTimeoutMs $retryTimeoutMs spent)")
              Thread.sleep(pauseMs)
            case None if unavailable.served.isDefined =>
              throw RocketMQErrors.expectedGroupsMissing(topic, expectedGroups.get,
                unavailable.served.get,
                budget.elapsedMs)
            case None =>
              throw RocketMQErrors.brokerUnavailable(topic, unavailable.broker, nameServer,
                budget.elapsedMs,
                unavailable.cause)
          }
      }
    }
    throw new IllegalStateException("unreachable")
  }

  /**
   * One look at `topic`: its queue ranges (None: the topic does not exist), or why it cannot be
   * told now. `known`: queues of the topic a stream already reads.
   */
  private def attemptQueueRanges(topic: String, known: Set[RocketMQQueue])
      : Either[Unavailable, Option[Map[RocketMQQueue, RocketMQQueueRange]]] = {
    // None: the endpoint does not tell which brokers are live (a proxy refuses the request).
    lazy val live = liveBrokers()
    // Route, then live brokers: a broker that registered in between makes its own topic look
    // missing, so a route missing while brokers are live is asked for once more.
    val route = routeIfAny(topic).orElse(if (live.exists(_.nonEmpty)) routeIfAny(topic) else None)
    val routed = route.toSeq.flatMap(_.getBrokerDatas.asScala.map(_.getBrokerName)).toSet
    // Brokers this stream reads from that the route does not list: down if the name server does not
    // list them as live either (or cannot be asked); if it does, they are asked directly (a name
    // server that restarted forgets routes until brokers register again), and only their own denial
    // makes the queues gone.
    val unrouted = (known.map(_.brokerName) -- routed).toSeq.sorted
    val down = unrouted.find(b => !live.exists(_.contains(b)))
    // With no route and no word on live brokers, the topic is missing: the proxy's own name server
    // has no route.
    if (route.isEmpty && live.contains(Map.empty)) Left(Unavailable(None, null))
    else if (down.isDefined) Left(Unavailable(down, null))
    else
      try {
        val ranges = route.map(queueRanges(topic, _)).getOrElse(Map.empty) ++
          unrouted.flatMap(b => groupRanges(topic, live.get.apply(b), queueCount = None))
        Right(if (ranges.isEmpty) None else Some(ranges))
      } catch { case BrokerDown(broker, cause) => Left(Unavailable(Some(broker), cause)) }
  }

  private lazy val expectedGroups = options(RocketMQOptions.ExpectedBrokerGroups)

  /**
   * A look at a topic whose readable queues are not on every broker group `expectedBrokerGroups`
   * names: not yet.
   */
  private def expectGroups(attempt: (String,
          Either[Unavailable, Option[Map[RocketMQQueue, RocketMQQueueRange]]]))
      : (String, Either[Unavailable, Option[Map[RocketMQQueue, RocketMQQueueRange]]]) =
    (attempt, expectedGroups) match {
      case ((topic, Right(ranges)), Some(expected)) =>
        val served = ranges.getOrElse(Map.empty).keySet.map(_.brokerName)
        if (expected.satisfiedBy(served)) attempt
        else topic -> Left(Unavailable(None, null, Some(served)))
      case _ => attempt
    }

  /**
   * Why a topic's queues cannot be told now: a broker (None: every broker) missing or not
   * answering; or, with `served`, the broker groups that serve it now, which are not all
   * `expectedBrokerGroups` names.
   */
  private case class Unavailable(broker: Option[String], cause: Throwable,
      served: Option[Set[String]] = None) {
    def describe: String = if (served.isDefined) {
      s"expectedBrokerGroups ${expectedGroups.get.render}: " +
        s"${expectedGroups.get.describeMissing(served.get)} missing"
    } else broker.map(b =>
      s"broker '$b' " + Option(cause).map(c => s"does not answer: $c")
        .getOrElse("is missing from the route")).getOrElse("the name server lists no live broker")
  }

  /** The readable queues of `topic` in its route, with their offsets (empty: none readable). */
  private def queueRanges(topic: String, route: TopicRouteData)
      : Map[RocketMQQueue, RocketMQQueueRange] = {
    val readable: Map[String, Int] = route.getQueueDatas.asScala
      .filter(q => PermName.isReadable(q.getPerm) && q.getReadQueueNums > 0)
      .map(q => q.getBrokerName -> q.getReadQueueNums)
      .toMap
    route.getBrokerDatas.asScala.filter(b => readable.contains(b.getBrokerName)).flatMap { group =>
      groupRanges(topic, group, Some(readable(group.getBrokerName)))
    }.toMap
  }

  /**
   * The queues of `topic` on one broker group and their offsets, asked of the group's master; empty
   * when the master denies the topic (it was deleted there). A group whose master is down is asked
   * through its replicas, as RocketMQ's consumers read from them: the first that knows the topic
   * gives the ranges (marked as a replica's). A replica that does not know the topic (it copies its
   * master's topic list every few seconds) denies nothing: with no replica that knows it, the group
   * is unavailable.
   */
  private def groupRanges(topic: String, group: BrokerData, queueCount: Option[Int])
      : Seq[(RocketMQQueue, RocketMQQueueRange)] = {
    val name = group.getBrokerName
    val addresses = group.getBrokerAddrs.asScala
    brokerAddresses += name -> group.selectBrokerAddr()
    addresses.get(MixAll.MASTER_ID) match {
      case Some(master) =>
        // A proxy refuses the requests that tell how far a broker has indexed: not asked.
        if (indexedBrokers != null && !RocketMQEndpoint.knownProxy(connection)) {
          noteMaster(topic, master)
          if (!indexedBrokers.contains(master)) {
            awaitIndexing(topic, name, master)
            indexedBrokers += master
          }
        }
        queueOffsets(name, master, topic, queueCount).toSeq.flatMap(brokerRanges(topic, name, _,
          queueCount))
      case None =>
        val replicas = addresses.toSeq.sortBy(_._1).map(_._2)
        val answers = replicas.iterator.map { address =>
          try queueOffsets(name, address, topic, queueCount).toRight(
              s"replica $address does not know the topic yet")
          catch { case BrokerDown(_, cause) => Left(s"replica $address does not answer: $cause") }
        }.toSeq
        answers.collectFirst { case Right(stats) => stats } match {
          case Some(stats) => brokerRanges(topic, name, stats, queueCount).map { case (q, r) =>
              q -> r.copy(fromReplica = true)
            }
          case None => throw BrokerDown(name,
              new RocketMQErrors.NoServingBroker(name, topic,
                answers.collect { case Left(why) => why }))
        }
    }
  }

  /**
   * The ranges of `count` queues (from the route, else those the broker reports) of one broker, by
   * queue id.
   */
  private def brokerRanges(topic: String, broker: String, reported: Map[Int, RocketMQQueueRange],
      queueCount: Option[Int]): Seq[(RocketMQQueue, RocketMQQueueRange)] = {
    val count = queueCount.getOrElse(if (reported.isEmpty) 0 else reported.keys.max + 1)
    // A queue the broker has no stats for yet has never been written: it is empty.
    (0 until count).map(id =>
      RocketMQQueue(topic, broker, id) -> reported.getOrElse(id, RocketMQQueueRange(0L, 0L)))
  }

  /**
   * The offsets of `topic`'s queues on one broker, by queue id; None when the broker answers that
   * it does not have the topic (on a master: deleted, while the name server still routes it; its
   * queues there are gone). One topic-stats request where the endpoint answers it; where it is
   * refused (by a RocketMQ 5 proxy, or to credentials without admin rights: remembered for the
   * connection), the min and max offset of each of the route's `queueCount` queues, which every
   * endpoint forwards (an endpoint that refuses topic stats does not tell a deleted topic: its
   * queues are empty).
   */
  private def queueOffsets(broker: String, address: String, topic: String, queueCount: Option[Int])
      : Option[Map[Int, RocketMQQueueRange]] = {
    def perQueue(count: Int): Map[Int, RocketMQQueueRange] = {
      val client = api
      requestCount += 2L * count
      val queues = (0 until count).map(id => RocketMQQueue(topic, broker, id))
      try RocketMQQueueBounds.ask(client, address, queues.map(_.toMessageQueue(connection)),
          timeoutMs) {
          (mq, body) =>
            request(broker, QueueOffsets(RocketMQQueue(topic, broker, mq.getQueueId)),
              rebuild = false, tries = 1)(body)
        }
      catch {
        case e: RocketMQRequestException if RocketMQRetry.isRetryable(e.getCause) =>
          throw BrokerDown(broker, e.getCause)
      }
    }
    (queueCount, RocketMQEndpoint.refuses(connection, RocketMQEndpoint.TopicStats)) match {
      case (Some(count), true) => Some(perQueue(count))
      // Queues the route does not count (a group missing from it) are not asked one by one: the
      // group is unavailable.
      case (None, true) => throw BrokerDown(broker,
          new IllegalStateException(
            s"broker group '$broker' is missing from the route of topic '$topic', and " +
              s"$nameServer does not tell its queues"))
      case (_, false) =>
        try Some(request(broker, TopicStats(topic), tries = 1) {
            requestCount += 1
            api.getTopicStatsInfo(address, connection.onBroker(topic), timeoutMs)
          }.getOffsetTable.asScala.collect {
            case (mq, o) if mq.getBrokerName == broker =>
              mq.getQueueId -> RocketMQQueueRange(o.getMinOffset, o.getMaxOffset)
          }.toMap)
        catch {
          case e: RocketMQRequestException if RocketMQRetry.deniesTopic(e.getCause) => None
          case e: RocketMQRequestException if RocketMQRetry.isRetryable(e.getCause) =>
            throw BrokerDown(broker, e.getCause)
          case e: RocketMQRequestException if RocketMQRetry.refusesAdminRequest(e.getCause) =>
            RocketMQEndpoint.rememberRefusal(connection, RocketMQEndpoint.TopicStats, e.getCause)
            queueOffsets(broker, address, topic, queueCount)
        }
    }
  }

  /**
   * For each queue, the offset of its first message stored at or after `timestampMs` (its max
   * offset if there is none). One request per queue: used when a query starts, not per trigger.
   */
  def offsetsForTimestamp(queues: Iterable[RocketMQQueue], timestampMs: Long)
      : Map[RocketMQQueue, Long] =
    queues.map { queue =>
      val address = addressOf(queue)
      queue -> request(queue.brokerName, SearchOffset(queue, timestampMs)) {
        requestCount += 1
        api.searchOffset(address, queue.toMessageQueue(connection), timestampMs, BoundaryType.LOWER,
          timeoutMs)
      }
    }.toMap

  /**
   * Of the topics of `queues`, those that are compacted ([[RocketMQCompaction]]): a request per
   * topic the first time this JVM reads it.
   */
  def compactedTopics(queues: Iterable[RocketMQQueue]): Set[String] =
    queues.groupBy(_.topic).collect {
      case (topic, some)
          if RocketMQCompaction.isCompacted(api, connection,
            connection.onBroker(topic), addressOf(some.head), timeoutMs) => topic
    }.toSet

  /**
   * The address requests about `queue` go to: its group's master (else a replica), or the proxy.
   */
  private[rocketmq] def addressOf(
      queue: RocketMQQueue): String = brokerAddresses.getOrElse(queue.brokerName, {
      fetchQueueRanges(Seq(queue.topic))
      brokerAddresses.getOrElse(queue.brokerName,
        throw RocketMQErrors.topicNotFound(queue.topic, nameServer))
    })

  /**
   * A request to `broker`, made up to `tries` times (with the shared client replaced in between,
   * unless `rebuild` is off, as for requests sent from several threads at once); failed for good,
   * an error naming the broker and the request. Planning's own waits ([[fetchQueueRanges]]) try
   * once: their `retryTimeoutMs` budget starts at the first failure.
   */
  private[rocketmq] def request[T](broker: String, request: BrokerRequest, rebuild: Boolean = true,
      tries: Int = attempts)(body: => T): T =
    try RocketMQRetry.withRetries(s"$request to $broker", tries, intervalMs,
        () => if (rebuild) rebuildClient())(body)
    catch {
      case NonFatal(e) =>
        throw RocketMQErrors.unlessAccessDenied(e, connection.accessKey, request.topic)(
          RocketMQErrors.brokerRequestFailed(broker, tries, e, request))
    }

}

private[rocketmq] object RocketMQOffsetReader {

  /**
   * Pauses of planning for a topic not available now (a broker group down), in this JVM
   * (diagnostics, tests).
   */
  private[rocketmq] val unavailablePauses = new java.util.concurrent.atomic.AtomicLong()

  /** How long planning waited for brokers to index what they stored, in this JVM (diagnostics). */
  private[rocketmq] val indexingWaitMs = new java.util.concurrent.atomic.AtomicLong()

  /** A routed broker that did not answer a request, for a retryable reason. */
  private[client] case class BrokerDown(broker: String, cause: Throwable) extends Exception(cause)

  /**
   * Fails fast, on the driver, when `topic` does not exist; waits (up to `retryTimeoutMs`) while
   * the name server lists no live broker, as during a restart of the only one.
   */
  def requireTopic(options: RocketMQOptions, topic: String): Unit = {
    val reader = new RocketMQOffsetReader(options)
    try reader.awaitRoute(topic)
    finally reader.close()
  }

  /**
   * The driver's metadata clients, one per connection, shared by every reader of the JVM (a
   * streaming query holds one for its lifetime; batch plans borrow it briefly). Started fully, so
   * that closing one stops all its threads.
   */
  private[rocketmq] val clients =
    new RocketMQClientCache[RocketMQConnection, MQClientInstance]("metadata", newClient,
      _.shutdown())

  private def newClient(connection: RocketMQConnection): MQClientInstance = {
    val config = new ClientConfig()
    connection.configure(config)
    config.setInstanceName(RocketMQClientCache.uniqueInstanceName("spark-rocketmq-driver"))
    val instance =
      MQClientManager.getInstance().getOrCreateMQClientInstance(config, connection.rpcHook)
    instance.start()
    instance
  }
}
