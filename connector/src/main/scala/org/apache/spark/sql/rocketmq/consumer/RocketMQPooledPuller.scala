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
package org.apache.spark.sql.rocketmq.consumer

import java.util.concurrent.atomic.AtomicInteger

import scala.annotation.nowarn
import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.rocketmq.client.consumer.{DefaultMQPullConsumer, PullCallback, PullResult}
import org.apache.rocketmq.client.impl.MQClientManager
import org.apache.rocketmq.common.MixAll
import org.slf4j.LoggerFactory

import org.apache.spark.sql.rocketmq.client.RocketMQIndexing
import org.apache.spark.sql.rocketmq.common.{RocketMQQueue, RocketMQRetry}
import org.apache.spark.sql.rocketmq.consumer.RocketMQQueuePuller.Open
import org.apache.spark.sql.rocketmq.errors.RocketMQErrorKinds.GaveUp
import org.apache.spark.sql.rocketmq.errors.RocketMQErrors

/**
 * Makes a [[RocketMQQueuePuller]] on a consumer from the executor's [[RocketMQConsumerPool]]: its
 * pulls, and its callbacks that ask where the group's master is and wait for it to index.
 */
private[rocketmq] object RocketMQPooledPuller {

  private val log = LoggerFactory.getLogger(classOf[RocketMQQueuePuller])

  /**
   * How much longer than `pullTimeoutMs` an answer may take before the reader stops waiting for it.
   */
  private val AnswerGraceMs = 5000L

  /**
   * A puller whose pulls go through consumers borrowed from the executor's pool, returned on
   * close: the executor's shared one; through a RocketMQ 5 proxy, one per pull it keeps under way;
   * from a broker group the last reader of the topic found distant (by its round trip),
   * [[RocketMQConsumerPool.DistantConnections]]. Each of the last two is a connection of the task's
   * own, and each pull goes over the one with the fewest under way.
   */
  @nowarn("cat=deprecation") // see RocketMQConsumerPool
  def apply(queue: RocketMQQueue, from: Long, until: Long, settings: RocketMQReadSettings)
      : RocketMQQueuePuller = {
    val inFlight = settings.effectivePullsInFlight
    val windowKey = s"${settings.connection.nameServer}/${queue.brokerName}/${queue.topic}"
    val ownConnections =
      if (settings.throughProxy) inFlight
      else if (until != Open && inFlight > 1 && RocketMQReadAhead.distant(windowKey)) {
        RocketMQConsumerPool.DistantConnections
      } else 0
    // Built before any consumer is borrowed: a selector the client cannot build leaves none held.
    val messageQueue = queue.toMessageQueue(settings.connection)
    val pulls = new RocketMQUndecodedPulls(messageQueue, settings.selector)
    val leases = borrow(settings, until == Open, ownConnections)
    val consumer: DefaultMQPullConsumer = leases.head.client
    if (settings.sqlFilter.isDefined) {
      try leases.foreach(lease =>
          lease.once(s"sql:${queue.topic}")(RocketMQConsumerPool.prepareForSqlFilter(lease.client,
            settings.connection.onBroker(queue.topic))))
      catch {
        case NonFatal(e) =>
          leases.foreach { lease => lease.markBroken(); lease.release() }
          throw RocketMQErrors.unlessAccessDenied(e, settings.connection.accessKey, queue.topic)(
            RocketMQErrors.pullFailed(queue, from, e, GaveUp.NotRetryable))
      }
    }
    val awaiting = Array.fill(leases.size)(new AtomicInteger())
    def pullAsync(offset: Long, maxMessages: Int,
        done: Either[Throwable, RocketMQReadAhead.Answer] => Unit): Unit = {
      val lane = awaiting.indices.minBy(awaiting(_).get())
      val consumer = leases(lane).client
      awaiting(lane).incrementAndGet()
      val callback = new PullCallback {
        override def onSuccess(result: PullResult): Unit = {
          awaiting(lane).decrementAndGet()
          done(Right(pulls.answer(consumer, result)))
        }
        override def onException(e: Throwable): Unit = {
          awaiting(lane).decrementAndGet()
          done(Left(e))
        }
      }
      // An open range long-polls: at the queue's end the broker holds the pull until a message
      // arrives (for at most the consumer's suspend time, RocketMQConsumerPool.LongPollMs).
      pulls.pull(consumer, offset, maxMessages, block = until == Open, settings.pullTimeoutMs,
        callback)
    }
    val answerTimeoutMs =
      if (until == Open) RocketMQConsumerPool.LongPollAnswerTimeoutMs else settings.pullTimeoutMs
    val reads = new RocketMQReadAhead(pullAsync, until, settings.pullBatchSize, inFlight,
      settings.readAheadBytes,
      answerTimeoutMs = answerTimeoutMs + AnswerGraceMs,
      windowKey = windowKey,
      mostPulls = if (settings.throughProxy) inFlight else RocketMQReadAhead.MostPulls)
    val client = MQClientManager.getInstance().getOrCreateMQClientInstance(consumer)
    val topicOnBroker = settings.connection.onBroker(queue.topic)
    // The route as the name server gives it now; while the name server does not answer (busy, or
    // restarting), the last one the client had: a route request failing is no reason to fail the
    // read.
    def groupMaster(): Option[String] = {
      try client.updateTopicRouteInfoFromNameServer(topicOnBroker)
      catch {
        case NonFatal(e) =>
          log.warn(s"$queue: no answer from the name server for the route, using the last: $e")
      }
      Option(client.getTopicRouteTable.get(topicOnBroker)).toSeq.flatMap(_.getBrokerDatas.asScala)
        .find(_.getBrokerName == queue.brokerName).flatMap(group =>
          Option(group.getBrokerAddrs.get(MixAll.MASTER_ID)))
    }
    // Waits until the group's master has indexed what it stored; a master that cannot tell
    // (RocketMQ 4.x) or does not answer now is not waited for (the pull asked again meets the
    // outage).
    def awaitMasterIndexed(): Unit = groupMaster().foreach { address =>
      val api = client.getMQClientAPIImpl
      val timeoutMs = settings.pullTimeoutMs
      try {
        val begin = System.nanoTime()
        val short = RocketMQIndexing.await(settings.retryTimeoutMs)(
          () => RocketMQIndexing.storedEnd(api, address, timeoutMs),
          () => RocketMQIndexing.behindBytes(api, address, timeoutMs), () => ())
        val waitedMs = (System.nanoTime() - begin) / 1000000
        if (short > 0)
          throw RocketMQErrors.indexingBehind(queue.topic, queue.brokerName, short, waitedMs)
        if (waitedMs > 1000)
          log.info(
            s"$queue: broker '${queue.brokerName}' indexed what it stored after $waitedMs ms")
      } catch { case NonFatal(e) if RocketMQRetry.isRetryable(e) => () }
    }
    new RocketMQQueuePuller(queue, from, until, settings, reads, () => groupMaster(),
      () => awaitMasterIndexed(),
      () => leases.foreach(_.markBroken()), () => leases.foreach(_.release()))
  }

  /**
   * The executor's shared consumer (`own` 0), or `own` consumers of the task's own; none if one
   * cannot be had.
   */
  private def borrow(settings: RocketMQReadSettings, followsEnd: Boolean, own: Int)
      : IndexedSeq[RocketMQConsumerPool.cache.Lease] = {
    if (own == 0) return IndexedSeq(RocketMQConsumerPool.borrow(settings, followsEnd))
    val leases = IndexedSeq.newBuilder[RocketMQConsumerPool.cache.Lease]
    try {
      (0 until own).foreach(c =>
        leases += RocketMQConsumerPool.borrow(settings, followsEnd, Some(c)))
      leases.result()
    } catch {
      case NonFatal(e) =>
        leases.result().foreach(_.release())
        throw e
    }
  }
}
