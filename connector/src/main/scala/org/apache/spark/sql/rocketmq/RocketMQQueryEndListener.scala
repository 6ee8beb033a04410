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

import org.apache.spark.SparkContext
import org.apache.spark.scheduler.{SparkListener, SparkListenerEvent}
import org.apache.spark.sql.streaming.StreamingQueryListener.QueryTerminatedEvent

/**
 * Closes `resource` when the streaming query `queryId` next ends, then stops listening. Spark has no
 * hook on a streaming write for the end of its query, and the stream thread's session is a clone whose
 * query listeners hear nothing: the end is taken from the SparkContext's bus, where Spark posts every
 * query event too. (Events arrive asynchronously: a new run of the query that starts before the end of
 * the earlier one is heard may find the earlier run's resource still open; it is closed when that end
 * arrives, and the new run's next micro-batch makes its own.)
 */
private[rocketmq] final class RocketMQQueryEndListener(sc: SparkContext, queryId: String, resource: Closeable)
  extends SparkListener {

  override def onOtherEvent(event: SparkListenerEvent): Unit = event match {
    case ended: QueryTerminatedEvent if ended.id.toString == queryId =>
      try resource.close()
      finally sc.removeSparkListener(this)
    case _ =>
  }
}

private[rocketmq] object RocketMQQueryEndListener {
  def closeWhenQueryEnds(sc: SparkContext, queryId: String, resource: Closeable): Unit =
    sc.addSparkListener(new RocketMQQueryEndListener(sc, queryId, resource))
}
