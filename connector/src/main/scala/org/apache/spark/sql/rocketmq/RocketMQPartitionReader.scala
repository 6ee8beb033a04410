package org.apache.spark.sql.rocketmq


import scala.annotation.nowarn
import scala.util.control.NonFatal

import org.apache.rocketmq.client.consumer.{DefaultMQPullConsumer, MessageSelector, PullResult, PullStatus}
import org.apache.rocketmq.common.message.MessageExt
import org.slf4j.LoggerFactory

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.rocketmq.consumer.RocketMQConsumerPool
import org.apache.spark.sql.connector.metric.CustomTaskMetric
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReader, PartitionReaderFactory}

/** What an executor needs to pull: connection and pull settings, nothing secret in `toString`. */
private[rocketmq] final case class RocketMQReadSettings(
    nameServer: String,
    subExpression: String,
    pullTimeoutMs: Long,
    pullBatchSize: Int,
    failOnDataLoss: Boolean,
    sqlFilter: Option[String] = None,
    group: String = RocketMQClients.ReaderGroup,
    includeExtraColumns: Boolean = false) {

  /** With a tag or SQL filter the broker skips offsets: a gap is then normal, not data loss. */
  def filtered: Boolean = subExpression.trim != "*" || sqlFilter.isDefined

  def selector: MessageSelector = sqlFilter.map(MessageSelector.bySql).getOrElse(MessageSelector.byTag(subExpression))
}

private[rocketmq] object RocketMQReadSettings {
  def apply(options: RocketMQOptions, failOnDataLoss: Boolean): RocketMQReadSettings = RocketMQReadSettings(
    options.nameServer, options.subExpression, options.pullTimeoutMs, options.pullBatchSize, failOnDataLoss,
    options.sqlFilter, options.consumerGroup.getOrElse(RocketMQClients.ReaderGroup), options.includeExtraColumns)
}

/** Offsets `[fromOffset, untilOffset)` of one queue, read by one task. */
private[rocketmq] final case class RocketMQInputPartition(
    queue: RocketMQQueue,
    fromOffset: Long,
    untilOffset: Long,
    settings: RocketMQReadSettings,
    preferredLocation: Option[String] = None)
  extends InputPartition {
  override def preferredLocations(): Array[String] = preferredLocation.toArray
}

private[rocketmq] object RocketMQPartitionReaderFactory extends PartitionReaderFactory {
  override def createReader(partition: InputPartition): PartitionReader[InternalRow] =
    new RocketMQPartitionReader(partition.asInstanceOf[RocketMQInputPartition])
}

/**
 * Reads exactly `[fromOffset, untilOffset)` of one queue with stateless pulls, never asking for a
 * message at or past `untilOffset`; memory is one pull batch. Every offset in the range is either
 * returned, skipped by the tag filter (normal), or reported as lost: expired before it was read,
 * or gone with a truncated or recreated queue.
 */
private[rocketmq] class RocketMQPartitionReader(partition: RocketMQInputPartition)
  extends PartitionReader[InternalRow] {

  private val log = LoggerFactory.getLogger(getClass)
  private val queue = partition.queue
  private val settings = partition.settings
  private val until = partition.untilOffset
  private val messageQueue = queue.toMessageQueue
  private val converter = new RocketMQMessageToRow(queue, settings.includeExtraColumns)
  private val selector = settings.selector

  private val lease = RocketMQConsumerPool.borrow(settings)
  @nowarn("cat=deprecation") // see RocketMQClients
  private val consumer: DefaultMQPullConsumer = lease.client
  if (settings.sqlFilter.isDefined) {
    try lease.once(s"sql:${queue.topic}")(RocketMQClients.prepareForSqlFilter(consumer, queue.topic))
    catch {
      case NonFatal(e) =>
        lease.markBroken()
        lease.release()
        throw RocketMQErrors.pullFailed(queue, partition.fromOffset, e)
    }
  }

  /** The next offset to ask the broker for. */
  private var pullOffset = partition.fromOffset
  /** The offset the next returned message should have, if nothing was filtered or lost. */
  private var expectedOffset = partition.fromOffset
  private var messages: java.util.Iterator[MessageExt] = java.util.Collections.emptyIterator()
  private var current: InternalRow = _
  /** Offsets skipped as lost by this reader (failOnDataLoss=false). */
  private var lostOffsets = 0L

  override def next(): Boolean = {
    while (true) {
      while (messages.hasNext) {
        val message = messages.next()
        val offset = message.getQueueOffset
        if (offset >= until) {
          messages = java.util.Collections.emptyIterator()
          pullOffset = until
          return false
        }
        if (offset >= expectedOffset) {
          if (offset > expectedOffset && !settings.filtered) {
            dataLoss(expectedOffset, offset, "the broker returned later messages than asked for")
          }
          expectedOffset = offset + 1
          current = converter.toRow(message)
          return true
        }
      }
      if (pullOffset >= until) return false
      pullNext()
    }
    false
  }

  private def pullNext(): Unit = {
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
        dataLoss(pullOffset, math.min(next, until), "the messages were being removed as expired")
        skipTo(next)
      case PullStatus.NO_NEW_MSG if next > pullOffset =>
        dataLoss(pullOffset, math.min(next, until), "its consume-queue file is gone")
        skipTo(next)
      case PullStatus.NO_NEW_MSG =>
        dataLoss(pullOffset, until, s"the queue now ends at offset ${result.getMaxOffset}: it was truncated")
        skipTo(until)
      case PullStatus.OFFSET_ILLEGAL if pullOffset < result.getMinOffset =>
        dataLoss(pullOffset, math.min(result.getMinOffset, until),
          s"the oldest stored offset is now ${result.getMinOffset}: the messages expired")
        skipTo(result.getMinOffset)
      case PullStatus.OFFSET_ILLEGAL =>
        dataLoss(pullOffset, until,
          s"the queue now ends at offset ${result.getMaxOffset}: the topic was deleted or recreated")
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

  private def dataLoss(from: Long, to: Long, reason: String): Unit = {
    val error = RocketMQErrors.dataLoss(queue, from, to, reason)
    if (settings.failOnDataLoss) throw error
    log.warn(s"Skipping lost offsets: ${error.getMessage}")
    lostOffsets += math.max(0L, to - from)
    expectedOffset = math.max(expectedOffset, to)
  }

  override def get(): InternalRow = current

  override def currentMetricsValues(): Array[CustomTaskMetric] =
    Array(RocketMQCustomMetrics.taskMetric(RocketMQCustomMetrics.LostOffsets, lostOffsets))

  override def close(): Unit = lease.release()
}
