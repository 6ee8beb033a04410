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

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.rocketmq.client.consumer.PullStatus
import org.slf4j.LoggerFactory

import org.apache.spark.sql.rocketmq.common.RocketMQQueue
import org.apache.spark.sql.rocketmq.consumer.{RocketMQConsumerPool, RocketMQReadSettings}

/**
 * Holds a micro-batch stream to maxBytesPerTrigger. Offsets are what a batch plans, so the bytes
 * are estimated: the body bytes an offset carried in the batch before (what its tasks read over
 * the offsets it planned, so a tag filter's skipped offsets count as empty), or before any batch of
 * this run, a sample of the first messages of the queues with the most to read.
 */
private[rocketmq] final class RocketMQTriggerBytes(maxBytes: Long,
    settings: RocketMQReadSettings) {
  private val log = LoggerFactory.getLogger(getClass)
  /** What the tasks of this stream's batches read. */
  lazy val sizes: RocketMQReadSizes = RocketMQReadSizes.register()
  private var bytesPerOffset: Option[Double] = None
  private var lastPlanned = 0L

  /**
   * The most offsets the next batch may read, in all, from `from` to at most `until`: at least one,
   * so that a message larger than the limit still goes, alone.
   */
  def offsetsFor(from: Map[RocketMQQueue, Long], until: Map[RocketMQQueue, Long]): Long = {
    learn()
    if (bytesPerOffset.isEmpty) bytesPerOffset = sample(from, until)
    bytesPerOffset match {
      case Some(perOffset) if perOffset > 0 => math.max(1L, (maxBytes / perOffset).toLong)
      case Some(_) => Long.MaxValue // bodies without bytes
      case None => 1L // no sample could be read now: one offset, then learn from what it read
    }
  }

  /** Notes how many offsets the batch just planned reads. */
  def planned(offsets: Long): Unit = lastPlanned = offsets

  private def learn(): Unit = {
    val (bytes, messages) = sizes.drain()
    if (lastPlanned > 0 && messages > 0) bytesPerOffset = Some(bytes.toDouble / lastPlanned)
    lastPlanned = 0L
  }

  /** Body bytes a message carries in the first messages of the largest backlogs; None if unread. */
  private def sample(from: Map[RocketMQQueue, Long], until: Map[RocketMQQueue, Long])
      : Option[Double] = {
    val largest = until.toSeq.map { case (q, u) => q -> (u - from.getOrElse(q, u)) }
      .filter(_._2 > 0).sortBy(-_._2).take(RocketMQTriggerBytes.SampledQueues)
    if (largest.isEmpty) return None
    val lease = RocketMQConsumerPool.borrow(settings)
    try {
      val bodies = largest.flatMap { case (queue, backlog) =>
        val start = from(queue)
        val result = lease.client.pull(queue.toMessageQueue(settings.connection), "*", start,
          math.min(backlog, RocketMQTriggerBytes.SampledMessages).toInt, settings.pullTimeoutMs)
        if (result.getPullStatus != PullStatus.FOUND) Nil
        else result.getMsgFoundList.asScala.filter(m =>
          m.getQueueOffset >= start &&
            m.getQueueOffset < until(queue)).map(_.getBody.length.toLong)
      }
      if (bodies.isEmpty) None else Some(bodies.sum.toDouble / bodies.size)
    } catch {
      case NonFatal(e) =>
        log.warn(s"Could not sample message sizes for maxBytesPerTrigger: $e")
        None
    } finally lease.release()
  }
}

private[rocketmq] object RocketMQTriggerBytes {
  /** Queues sampled for a first estimate, the largest backlogs first. */
  private val SampledQueues = 8
  /** Messages sampled at the start of each of those queues. */
  private val SampledMessages = 32L
}
