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

import java.util.concurrent.{CountDownLatch, TimeUnit}

import org.apache.spark.SparkContext
import org.apache.spark.scheduler.{SparkListener, SparkListenerEvent}

/**
 * Holds the delivery of `sc`'s listener events (those of its shared queue: every listener added
 * with `addSparkListener`) from now until `release()`, as a driver whose listeners are busy
 * delivers them late; `release()` then waits until every event held has been delivered.
 */
final class HeldListenerBus(sc: SparkContext) {
  private val held = new CountDownLatch(1)
  private object Hold extends SparkListenerEvent

  private val holder = new SparkListener {
    override def onOtherEvent(event: SparkListenerEvent): Unit =
      if (event eq Hold) held.await(120, TimeUnit.SECONDS)
  }
  sc.addSparkListener(holder)
  sc.listenerBus.post(Hold)

  def release(): Unit = if (held.getCount > 0) {
    held.countDown()
    sc.listenerBus.waitUntilEmpty()
    sc.removeSparkListener(holder)
  }
}
