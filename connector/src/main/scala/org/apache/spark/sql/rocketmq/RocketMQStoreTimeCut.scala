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

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.rocketmq.client.consumer.PullStatus
import org.slf4j.LoggerFactory

import org.apache.spark.sql.rocketmq.common.RocketMQQueue
import org.apache.spark.sql.rocketmq.consumer.{RocketMQConsumerPool, RocketMQReadSettings}

/**
 * Where a store time cuts a queue's planned range `[from, until)`: at the first message stored at
 * or after that time. The broker's time index gives an answer, which is not always that offset:
 * - a 4.9 broker answers the offset whose store time is nearest, which may be the message just
 *   before the time, or, among messages stored in the same millisecond, not the first of them;
 * - a 5.x broker answers 0 (clamped to the queue's min offset) when its look-up fails. So each
 *   answer is checked on the side where a wrong one would lose rows, by the store time of one
 *   message: a lower cut (rows from it on are read) by the message before it, which must be stored
 *   before the time; an upper cut (rows before it are read) by the message at it, which must be
 *   stored at or after the time. A wrong answer is replaced by a binary search of the range. A
 *   store time that cannot be read leaves that side of the range uncut: the partition reader
 *   filters every message by its store time anyway, so only the plan's size suffers. Store times
 *   rise with the offset within a queue (the broker stamps messages in the order it appends them).
 */
private[rocketmq] object RocketMQStoreTimeCut {

  /**
   * The offset in `[from, until]` where store time `timeMs` cuts the range, given the broker's
   * `answer`; `lower` for a lower bound (the range becomes `[cut, until)`), else an upper one
   * (`[from, cut)`). `storeTime(offset)` reads the store time of the message at `offset` (None when
   * it cannot).
   */
  def cut(timeMs: Long, from: Long, until: Long, answer: Long, lower: Boolean)(
      storeTime: Long => Option[Long])
      : Long = {
    val guess = math.min(until, math.max(from, answer))
    def storedBefore(offset: Long): Boolean = storeTime(offset).getOrElse(throw Unreadable) < timeMs
    // The first offset in [a, b) stored at or after the time, b if none.
    def search(a: Long, b: Long): Long = {
      var (low, high) = (a, b)
      while (low < high) {
        val middle = low + (high - low) / 2
        if (storedBefore(middle)) low = middle + 1 else high = middle
      }
      low
    }
    try {
      if (lower) {
        if (guess > from && !storedBefore(guess - 1)) search(from, guess - 1) else guess
      } else if (guess < until && storedBefore(guess)) search(guess + 1, until)
      else guess
    } catch { case Unreadable => if (lower) from else until }
  }

  private object Unreadable extends RuntimeException(null, null, false, false)
}

/**
 * Reads the store time of single messages by their offsets, for [[RocketMQStoreTimeCut]]: one pull
 * of one message through a consumer borrowed from the reader's pool (as the partition readers
 * pull).
 */
private[rocketmq] final class RocketMQStoreTimes(settings: RocketMQReadSettings) extends Closeable {
  private val log = LoggerFactory.getLogger(getClass)
  private var lease: RocketMQConsumerPool.cache.Lease = _

  /** The store time of the message at `offset` of `queue`, None when it cannot be read now. */
  def at(queue: RocketMQQueue, offset: Long): Option[Long] =
    try {
      if (lease == null) lease = RocketMQConsumerPool.borrow(settings)
      val result = lease.client.pull(queue.toMessageQueue(settings.connection), "*", offset, 1,
        settings.pullTimeoutMs)
      if (result.getPullStatus != PullStatus.FOUND) None
      else result.getMsgFoundList.asScala.find(_.getQueueOffset == offset).map(_.getStoreTimestamp)
    } catch {
      case NonFatal(e) =>
        log.debug(s"Could not read the store time at offset $offset of $queue: $e")
        None
    }

  override def close(): Unit = if (lease != null) {
    lease.release()
    lease = null
  }
}
