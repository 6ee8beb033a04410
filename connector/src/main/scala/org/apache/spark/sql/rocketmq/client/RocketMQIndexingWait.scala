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

import java.util.concurrent.{CompletableFuture, ConcurrentHashMap, ExecutionException}

import scala.util.control.NonFatal

import org.slf4j.LoggerFactory

import org.apache.spark.sql.rocketmq.RocketMQRequestException
import org.apache.spark.sql.rocketmq.client.RocketMQOffsetReader.BrokerDown
import org.apache.spark.sql.rocketmq.common.{RocketMQConnection, RocketMQRetry}
import org.apache.spark.sql.rocketmq.errors.RocketMQErrorKinds.BrokerRequest.IndexProgress
import org.apache.spark.sql.rocketmq.errors.RocketMQErrors

/**
 * The wait of [[RocketMQOffsetReader]], before a batch read is planned, for each master to index
 * what it stored ([[RocketMQIndexing]]), so that the read sees every write acknowledged before.
 */
private[rocketmq] trait RocketMQIndexingWait extends RocketMQMetadataClient {
  this: RocketMQOffsetReader =>

  private lazy val indexingLog = LoggerFactory.getLogger(classOf[RocketMQOffsetReader])

  /**
   * Masters that have indexed what they stored, in this call of the reader's `fetchQueueRanges`
   * (null: not waited for).
   */
  protected var indexedBrokers: Set[String] = _

  /** Indexing probes sent before the route came, by master address ([[probeKnownMasters]]). */
  private var earlyProbes = Map.empty[String, CompletableFuture[Option[Long]]]

  /** The masters of each topic's broker groups met in this call of `fetchQueueRanges`. */
  private var mastersMet = Map.empty[String, Set[String]]

  /**
   * Sends the indexing probe to the masters that last served `topics` in this JVM while the name
   * server is asked for the route: across a distant network, a round trip saved a plan. A probe's
   * answer is used only where the route names the same master.
   */
  protected def probeKnownMasters(topics: Seq[String]): Unit = {
    mastersMet = Map.empty
    earlyProbes = Map.empty
    if (RocketMQEndpoint.knownProxy(connection)) return
    val client = api
    earlyProbes = topics.flatMap(t =>
      RocketMQIndexingWait.masters.getOrDefault((connection, t),
        Set.empty)).distinct.map { address =>
      requestCount += 1
      address -> CompletableFuture.supplyAsync(
        () => RocketMQIndexing.behindBytes(client, address, timeoutMs),
        RocketMQMetadataClient.requests)
    }.toMap
  }

  /** Notes that the master at `address` serves `topic` (asked now, or earlier in this call). */
  protected def noteMaster(topic: String, address: String): Unit =
    mastersMet += topic -> (mastersMet.getOrElse(topic, Set.empty) + address)

  /** Remembers the masters this plan met, for the next plan's early probes. */
  protected def rememberMasters(): Unit = mastersMet.foreach { case (topic, addresses) =>
    RocketMQIndexingWait.masters.put((connection, topic), addresses)
  }

  /**
   * Returns once the master at `address` has indexed every message it had stored when asked. A
   * broker acknowledges a send once the message is in its commit log and builds the queues' indexes
   * from the log a moment later (longer on a busy machine), while offsets count indexed messages
   * only. One request when nothing is behind; a broker that cannot tell (RocketMQ 4.x, or a user
   * without admin rights) is not waited for. Bounded by retryTimeoutMs.
   */
  protected def awaitIndexing(topic: String, broker: String, address: String): Unit = {
    def storedEnd(): Option[Long] = try {
      requestCount += 1
      RocketMQIndexing.storedEnd(api, address, timeoutMs)
    } catch {
      case NonFatal(e) if RocketMQRetry.isRetryable(e) => throw BrokerDown(broker, e)
    }
    var early = earlyProbes.get(address)
    earlyProbes -= address
    def ask(): Option[Long] = {
      requestCount += 1
      RocketMQIndexing.behindBytes(api, address, timeoutMs)
    }
    // An early probe that failed (its client replaced since, or the broker down) is asked again.
    def behind(): Option[Long] = try request(broker, IndexProgress(topic), tries = 1) {
        early match {
          case Some(probe) =>
            early = None
            try probe.get()
            catch { case _: ExecutionException => ask() }
          case None => ask()
        }
      }
    catch {
      case e: RocketMQRequestException if RocketMQRetry.isRetryable(e.getCause) =>
        throw BrokerDown(broker, e.getCause)
    }
    val begin = System.nanoTime()
    var polls = 0
    val short = RocketMQIndexing.await(retryTimeoutMs)(() => storedEnd(), () => behind(),
      () => polls += 1)
    val waitedMs = (System.nanoTime() - begin) / 1000000
    if (polls > 0) RocketMQOffsetReader.indexingWaitMs.addAndGet(waitedMs)
    if (short > 0) throw RocketMQErrors.indexingBehind(topic, broker, short, waitedMs)
    if (polls > 0) indexingLog.info(
      s"Broker '$broker' indexed what it had stored after $waitedMs ms; planning goes on")
  }
}

private[rocketmq] object RocketMQIndexingWait {

  /** The masters each topic's last plan met, by connection and topic. */
  private val masters = new ConcurrentHashMap[(RocketMQConnection, String), Set[String]]()
}
