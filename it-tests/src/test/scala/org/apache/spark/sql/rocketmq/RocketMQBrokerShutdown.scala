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

import java.util.concurrent.{ExecutorService, ScheduledExecutorService, TimeUnit}

import org.apache.rocketmq.broker.BrokerController

/**
 * Shuts an in-process broker down without crashing the JVM it shares with the tests. RocketMQ's own
 * shutdown stops its request servers, asks its request executors to stop without waiting for them,
 * and then closes its stores, among them the RocksDB of its users and ACLs when authentication is
 * on: a request an executor had already taken (a client of an earlier test still asking) then read
 * the closed RocksDB and the test JVM died of a SIGSEGV in native code (a clean-clone run of
 * `dev/test` on 2026-11-28, in the secured suite's broker; sbt then waited for the dead JVM). So
 * the requests stop first: no new ones come in, and every request executor finishes the ones it
 * holds, before the broker's own shutdown closes anything.
 */
private[rocketmq] object RocketMQBrokerShutdown {
  private val DrainMs = 30000L

  def shutdown(broker: BrokerController): Unit = {
    Seq(broker.getRemotingServer, broker.getFastRemotingServer).filter(_ != null).foreach(
      _.shutdown())
    val executors = classOf[BrokerController].getDeclaredFields.toSeq
      .filter(f => classOf[ExecutorService].isAssignableFrom(f.getType))
      .filterNot(f =>
        classOf[ScheduledExecutorService].isAssignableFrom(f.getType)) // its own timers: left to it
      .flatMap { f => f.setAccessible(true); Option(f.get(broker).asInstanceOf[ExecutorService]) }
    executors.foreach(_.shutdown())
    val deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(DrainMs)
    executors.foreach(e =>
      e.awaitTermination(math.max(0L, deadline - System.nanoTime()), TimeUnit.NANOSECONDS))
    broker.shutdown()
  }
}
