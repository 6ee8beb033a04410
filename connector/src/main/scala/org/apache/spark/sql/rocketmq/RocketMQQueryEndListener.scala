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

import java.io.Closeable

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.streaming.StreamingQueryListener
import org.apache.spark.sql.streaming.StreamingQueryListener.{QueryProgressEvent, QueryStartedEvent,
  QueryTerminatedEvent}

/**
 * Closes `resource` when one run of a streaming query ends: the run `runId` if known, else the next
 * run of query `queryId` to end. Spark has no hook on a streaming write for the end of its query.
 */
private[rocketmq] final class RocketMQQueryEndListener(
    session: SparkSession, queryId: String, runId: Option[String], resource: Closeable)
  extends StreamingQueryListener {

  override def onQueryStarted(event: QueryStartedEvent): Unit = ()

  override def onQueryProgress(event: QueryProgressEvent): Unit = ()

  override def onQueryTerminated(event: QueryTerminatedEvent): Unit =
    if (runId.fold(event.id.toString == queryId)(_ == event.runId.toString)) {
      try resource.close() finally session.streams.removeListener(this)
    }
}

private[rocketmq] object RocketMQQueryEndListener {

  /**
   * Closes `resource` when the query whose stream thread calls this ends: Spark names a run's jobs
   * after its run id (the job group), which is set before the query builds its write.
   */
  def closeWhenQueryEnds(session: SparkSession, queryId: String, resource: Closeable): Unit = {
    val runId = Option(session.sparkContext.getLocalProperty("spark.jobGroup.id"))
    session.streams.addListener(new RocketMQQueryEndListener(session, queryId, runId, resource))
  }
}
