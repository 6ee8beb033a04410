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

import java.util.concurrent.atomic.AtomicBoolean

import scala.util.control.NonFatal

import org.slf4j.LoggerFactory

import org.apache.spark.sql.SparkSession

/**
 * What a sink learns, on the driver, of the trigger of the streaming query it writes for. Under
 * real-time mode and continuous processing each task runs for its whole batch or epoch, so a sink
 * that held rows for a fuller send request would hold them until then: there each row goes out as
 * it comes, whatever stage the sink runs in (after a stateful operator's shuffle too) and whatever
 * source feeds it. Spark tells a writer nothing of the trigger. Continuous processing is told by
 * the local property Spark sets on a continuous query's thread; real-time mode by the trigger of
 * the running query of that id (both through [[RocketMQSparkInternals]]; real-time mode's trigger
 * exists from Spark 4.1 only).
 */
private[rocketmq] object RocketMQQueryTrigger {
  private val log = LoggerFactory.getLogger(getClass)
  private val warned = new AtomicBoolean()

  /** Whether the query being planned on this thread runs under continuous processing. */
  def isContinuous(session: SparkSession): Boolean =
    "true" ==
      session.sparkContext.getLocalProperty(RocketMQSparkInternals.ContinuousProcessingProperty)

  /**
   * Whether the running streaming query `queryId` runs under real-time mode (`Trigger.RealTime`).
   */
  def isRealTime(session: SparkSession, queryId: String): Boolean =
    triggerOf(session, queryId).exists(RocketMQSparkInternals.isRealTimeTrigger)

  /** Whether a sink of query `queryId` should send each row as it comes. */
  def sendsEachRowAtOnce(session: SparkSession, queryId: String): Boolean =
    isContinuous(session) || isRealTime(session, queryId)

  private def triggerOf(session: SparkSession, queryId: String): Option[AnyRef] =
    try {
      RocketMQSparkInternals.runningExecution(session, queryId).map(
        RocketMQSparkInternals.triggerOf)
    } catch {
      case e @ (NonFatal(_) | _: LinkageError) =>
        // A Spark whose internals differ: rows then go out in fuller requests (sendBatchMessages=1
        // sends each alone).
        if (warned.compareAndSet(false, true)) {
          log.warn(s"Could not tell the trigger of streaming query $queryId (said once): $e")
        }
        None
    }
}
