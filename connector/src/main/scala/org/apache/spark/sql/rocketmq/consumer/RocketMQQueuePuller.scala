package org.apache.spark.sql.rocketmq.consumer

import java.io.Closeable

import scala.annotation.nowarn
import scala.util.control.NonFatal

import org.apache.rocketmq.client.consumer.{DefaultMQPullConsumer, PullResult, PullStatus}
import org.apache.rocketmq.common.message.MessageExt
import org.slf4j.LoggerFactory

import org.apache.spark.sql.rocketmq.{RocketMQErrors, RocketMQQueue}
import org.apache.spark.sql.rocketmq.RocketMQErrors.DataLossReason
import org.apache.spark.sql.rocketmq.RocketMQErrors.DataLossReason._

/**
 * Pulls exactly `[from, until)` of one queue with stateless pulls through a consumer borrowed from
 * the executor's [[RocketMQConsumerPool]], never asking for a message at or past `until`; memory is
 * one pull batch. Every offset in the range is either returned, skipped by the filter (normal), or
 * reported as lost: expired before it was read, or gone with a truncated or recreated queue. Lost
 * offsets fail the read, or with `failOnDataLoss=false` are logged, counted and skipped.
 */
private[rocketmq] final class RocketMQQueuePuller(
    queue: RocketMQQueue,
    from: Long,
    until: Long,
    settings: RocketMQReadSettings)
  extends Closeable {

  private val log = LoggerFactory.getLogger(getClass)
  private val messageQueue = queue.toMessageQueue
  private val selector = settings.selector

  private val lease = RocketMQConsumerPool.borrow(settings)
  @nowarn("cat=deprecation") // see RocketMQConsumerPool
  private val consumer: DefaultMQPullConsumer = lease.client
  if (settings.sqlFilter.isDefined) {
    try lease.once(s"sql:${queue.topic}")(RocketMQConsumerPool.prepareForSqlFilter(consumer, queue.topic))
    catch {
      case NonFatal(e) =>
        lease.markBroken()
        lease.release()
        throw RocketMQErrors.pullFailed(queue, from, e)
    }
  }

  /** The next offset to ask the broker for. */
  private var pullOffset = from
  /** The offset the next returned message should have, if nothing was filtered or lost. */
  private var expectedOffset = from
  private var messages: java.util.Iterator[MessageExt] = java.util.Collections.emptyIterator()
  private var lost = 0L

  /** Offsets skipped as lost so far (only with failOnDataLoss=false). */
  def lostOffsets: Long = lost

  /** The next message of the range, or null once the range is read. */
  def next(): MessageExt = {
    while (true) {
      while (messages.hasNext) {
        val message = messages.next()
        val offset = message.getQueueOffset
        if (offset >= until) {
          messages = java.util.Collections.emptyIterator()
          pullOffset = until
          return null
        }
        if (offset >= expectedOffset) {
          if (offset > expectedOffset && !settings.filtered) dataLoss(expectedOffset, offset, SkippedByBroker)
          expectedOffset = offset + 1
          return message
        }
      }
      if (pullOffset >= until) return null
      pull()
    }
    null
  }

  private def pull(): Unit = {
    val maxMessages = math.min(settings.pullBatchSize.toLong, until - pullOffset).toInt
    val result: PullResult =
      try consumer.pull(messageQueue, selector, pullOffset, maxMessages, settings.pullTimeoutMs)
      catch {
        case NonFatal(e) =>
          lease.markBroken()
          throw RocketMQErrors.pullFailed(queue, pullOffset, e)
      }
    val next = result.getNextBeginOffset
    val before = pullOffset
    result.getPullStatus match {
      case PullStatus.FOUND =>
        // Returned messages are checked one by one against expectedOffset in next().
        messages = result.getMsgFoundList.iterator()
        pullOffset = math.min(math.max(next, pullOffset), until)
      case PullStatus.NO_MATCHED_MSG if settings.filtered =>
        // The filter skipped the whole window the broker scanned: nothing lost. (The broker gives
        // the same answer for messages being removed; with a filter the two cannot be told apart.)
        skipTo(next)
      case PullStatus.NO_MATCHED_MSG =>
        // No filter, so nothing can fail to match: the broker skipped messages it was removing.
        dataLoss(pullOffset, math.min(next, until), BeingRemoved)
        skipTo(next)
      case PullStatus.NO_NEW_MSG if next > pullOffset =>
        dataLoss(pullOffset, math.min(next, until), ConsumeQueueGone)
        skipTo(next)
      case PullStatus.NO_NEW_MSG =>
        dataLoss(pullOffset, until, Truncated(result.getMaxOffset))
        skipTo(until)
      case PullStatus.OFFSET_ILLEGAL if pullOffset < result.getMinOffset =>
        dataLoss(pullOffset, math.min(result.getMinOffset, until), Expired(result.getMinOffset))
        skipTo(result.getMinOffset)
      case PullStatus.OFFSET_ILLEGAL =>
        dataLoss(pullOffset, until, TopicRecreated(result.getMaxOffset))
        skipTo(until)
    }
    if (pullOffset == before && !messages.hasNext) {
      // Every status above moves forward; a broker answer that does not would loop forever.
      throw RocketMQErrors.pullFailed(queue, before, new IllegalStateException(
        s"the broker answered ${result.getPullStatus} with next offset $next and no messages"))
    }
  }

  /** Moves past offsets already accounted for (filtered out or reported lost). */
  private def skipTo(offset: Long): Unit = {
    pullOffset = math.min(math.max(offset, pullOffset), until)
    expectedOffset = math.max(expectedOffset, pullOffset)
  }

  private def dataLoss(lostFrom: Long, lostUntil: Long, reason: DataLossReason): Unit = {
    val error = RocketMQErrors.dataLoss(queue, lostFrom, lostUntil, reason)
    if (settings.failOnDataLoss) throw error
    log.warn(s"Skipping lost offsets: ${error.getMessage}")
    lost += math.max(0L, lostUntil - lostFrom)
    expectedOffset = math.max(expectedOffset, lostUntil)
  }

  override def close(): Unit = lease.release()
}
