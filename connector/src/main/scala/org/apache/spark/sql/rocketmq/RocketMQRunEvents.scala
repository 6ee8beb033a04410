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

import java.lang.ref.WeakReference
import java.util.{Collections, WeakHashMap}

import scala.util.control.NonFatal

import org.slf4j.LoggerFactory

import org.apache.spark.SparkContext
import org.apache.spark.scheduler.{SparkListener, SparkListenerApplicationEnd, SparkListenerEvent}
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.rocketmq.transaction.RocketMQTransactionRuns
import org.apache.spark.sql.streaming.StreamingQueryListener
import org.apache.spark.sql.streaming.StreamingQueryListener.{
  QueryProgressEvent, QueryStartedEvent, QueryTerminatedEvent
}

/**
 * What Spark says of streaming query runs, passed to [[RocketMQTransactionRuns]]: a run's start as
 * soon as it is posted (a session's query listeners hear it in the stream thread, before any
 * batch), and its end from the SparkContext's bus (where every session's query events go, later).
 */
private[rocketmq] object RocketMQRunEvents {

  /**
   * The run id of query `queryId` when called from its stream thread (Spark names the thread's job
   * group after the run); else the query id, which stands for the run.
   */
  def runIdOf(queryId: String): String =
    Option(SparkContext.getActive.orNull)
      .filter(_.getLocalProperty(RocketMQSparkInternals.QueryIdProperty) == queryId)
      .flatMap(sc => Option(sc.getLocalProperty(RocketMQSparkInternals.JobGroupProperty)))
      .getOrElse(queryId)

  private val contexts =
    Collections.newSetFromMap(new WeakHashMap[SparkContext, java.lang.Boolean]())
  private val sessions =
    Collections.newSetFromMap(new WeakHashMap[SparkSession, java.lang.Boolean]())

  /** When a run started, as Spark stamps its start event (an ISO-8601 instant); unknown: never. */
  private def startMs(start: QueryStartedEvent): Long =
    try java.time.Instant.parse(start.timestamp).toEpochMilli
    catch { case NonFatal(_) => Long.MinValue }

  /**
   * Starts runs a session's listener did not hear start, and ends runs, as `sc`'s bus says; ends
   * them all when the driver stops (registered once per SparkContext).
   */
  def listenForEnds(sc: SparkContext): Unit = if (contexts.synchronized(contexts.add(sc))) {
    sc.addSparkListener(new SparkListener {
      override def onOtherEvent(event: SparkListenerEvent): Unit = event match {
        // Heard late: only a resume made before this start is this run's (the session's own
        // listener, where there is one, has passed it on already).
        case start: QueryStartedEvent =>
          RocketMQTransactionRuns.started(start.id.toString, start.runId.toString, startMs(start))
        case ended: QueryTerminatedEvent => RocketMQTransactionRuns.ended(ended.runId.toString)
        case _ =>
      }

      override def onApplicationEnd(end: SparkListenerApplicationEnd): Unit =
        RocketMQTransactionRuns.endAll()
    })
  }

  /**
   * Starts runs when `session` starts a query (registered once per session, which it holds weakly:
   * servers make many sessions), and resumes the catalog sinks of restarted exactly-once streams.
   */
  def listenForStarts(session: SparkSession): Unit =
    if (!session.sparkContext.isStopped && sessions.synchronized(sessions.add(session))) {
      try session.streams.addListener(new RunStarts(new WeakReference(session)))
      catch {
        case NonFatal(e) =>
          log.warn(
            s"Not listening to the queries of a Spark session ($e): an exactly-once stream into " +
              "a RocketMQ catalog table restarted there answers the broker's check-backs from " +
              "its first micro-batch")
      }
    }

  private val log = LoggerFactory.getLogger(getClass)

  private final class RunStarts(
      session: WeakReference[SparkSession]) extends StreamingQueryListener {
    override def onQueryStarted(event: QueryStartedEvent): Unit = {
      RocketMQTransactionRuns.started(event.id.toString, event.runId.toString)
      Option(session.get).foreach(RocketMQSinkRun.resumeCatalog(_, event.id.toString,
        event.runId.toString))
    }
    override def onQueryProgress(event: QueryProgressEvent): Unit = ()
    override def onQueryTerminated(event: QueryTerminatedEvent): Unit = ()
  }
}
