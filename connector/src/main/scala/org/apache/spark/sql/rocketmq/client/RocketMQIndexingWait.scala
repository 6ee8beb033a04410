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

import scala.util.control.NonFatal

import org.slf4j.LoggerFactory

import org.apache.spark.sql.rocketmq.RocketMQRequestException
import org.apache.spark.sql.rocketmq.client.RocketMQOffsetReader.BrokerDown
import org.apache.spark.sql.rocketmq.common.RocketMQRetry
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

  /**
   * Returns once the master at `address` has indexed every message it had stored when asked. A
   * broker acknowledges a send once the message is in its commit log and builds the queues' indexes
   * from the log a moment later (longer on a busy machine), while offsets count indexed messages
   * only. Two requests when nothing is behind; a broker that cannot tell (RocketMQ 4.x) is not
   * waited for. Bounded by retryTimeoutMs.
   */
  protected def awaitIndexing(topic: String, broker: String, address: String): Unit = {
    def storedEnd(): Option[Long] = try {
      requestCount += 1
      RocketMQIndexing.storedEnd(api, address, timeoutMs)
    } catch {
      case NonFatal(e) if RocketMQRetry.isRetryable(e) => throw BrokerDown(broker, e)
    }
    def behind(): Long = try request(broker, IndexProgress(topic), tries = 1) {
        requestCount += 1
        RocketMQIndexing.behindBytes(api, address, timeoutMs)
      }
    catch {
      case e: RocketMQRequestException if RocketMQRetry.isRetryable(e.getCause) =>
        throw BrokerDown(broker, e.getCause)
    }
    val begin = System.nanoTime()
    var polls = 0
    storedEnd().foreach { target =>
      val short = RocketMQIndexing.await(target, retryTimeoutMs)(() => storedEnd(), () => behind(),
        () => polls += 1)
      val waitedMs = (System.nanoTime() - begin) / 1000000
      if (polls > 0) RocketMQOffsetReader.indexingWaitMs.addAndGet(waitedMs)
      if (short > 0) throw RocketMQErrors.indexingBehind(topic, broker, short, waitedMs)
      if (polls > 0) indexingLog.info(
        s"Broker '$broker' indexed what it had stored after $waitedMs ms; planning goes on")
    }
  }
}
