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

package org.apache.spark.sql.rocketmq.common

import java.util.concurrent.TimeUnit
import java.util.concurrent.locks.LockSupport

import org.apache.spark.SparkContext

/**
 * A cap on messages and bytes a second (None: no cap), for a whole read or write
 * (`maxMessagesPerSecond`, `maxBytesPerSecond`): managed RocketMQ services sell a rate and throttle
 * above it, so a backfill should run at the rate rather than fail or retry in a storm.
 */
private[rocketmq] final case class RocketMQRateCap(messages: Option[Long], bytes: Option[Long]) {

  def isSet: Boolean = messages.isDefined || bytes.isDefined

  /**
   * Each task's part of a plan of `tasks`: the tasks that run at once split the cap evenly, so
   * that together they hold it. Those are all of them with `allAtOnce` (real-time batches,
   * continuous epochs), else at most one a core of the application.
   */
  def perPlannedTask(tasks: Int, allAtOnce: Boolean): RocketMQRateCap = {
    lazy val cores = Option(SparkContext.getActive.orNull).map(_.defaultParallelism).getOrElse(1)
    perTask(if (allAtOnce) tasks else math.min(tasks, cores))
  }

  /** Each task's part when `tasks` run at once. */
  def perTask(tasks: Int): RocketMQRateCap = {
    val n = math.max(1, tasks)
    RocketMQRateCap(messages.map(m => math.max(1L, m / n)), bytes.map(b => math.max(1L, b / n)))
  }

  /** The pace one task keeps to its part (null without a cap). */
  def newPacer(): RocketMQRateCap.Pacer = if (isSet) new RocketMQRateCap.Pacer(this) else null
}

private[rocketmq] object RocketMQRateCap {

  val None: RocketMQRateCap = RocketMQRateCap(scala.None, scala.None)

  /** Waits shorter than this are carried on to the next message rather than slept. */
  private val MinWaitNanos = TimeUnit.MILLISECONDS.toNanos(1)

  /** Time a task has not used that it may still make up: its start (connecting, first pull). */
  private val SlackNanos = TimeUnit.MILLISECONDS.toNanos(250)

  /**
   * Holds one task to its cap: each message is paid for with the time its count and size take at
   * the cap, after those before it, and the task waits while it is ahead of what it has paid. Of
   * the time not used (a task starting, or waiting for messages) a quarter of a second is made up,
   * no more: the tasks of a read hold the cap from their start, and no long burst follows a pause.
   */
  final class Pacer(cap: RocketMQRateCap) {
    private val nanosPerMessage = cap.messages.fold(0.0)(1e9 / _)
    private val nanosPerByte = cap.bytes.fold(0.0)(1e9 / _)
    private var paidUntil = System.nanoTime()

    /** Takes `messages` of `bytes` in all, waiting while the task is ahead of its cap. */
    def take(messages: Long, bytes: Long): Unit = {
      val now = System.nanoTime()
      paidUntil = math.max(paidUntil, now - SlackNanos) +
        math.max(messages * nanosPerMessage, bytes * nanosPerByte).toLong
      val ahead = paidUntil - now
      if (ahead >= MinWaitNanos) LockSupport.parkNanos(ahead)
    }
  }
}
