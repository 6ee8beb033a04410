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

package org.apache.spark.sql.rocketmq.consumer

import java.io.Closeable

import scala.util.control.NonFatal

import org.apache.rocketmq.client.consumer.{PullResult, PullStatus}
import org.apache.rocketmq.client.exception.MQBrokerException
import org.apache.rocketmq.common.message.MessageExt
import org.slf4j.LoggerFactory

import org.apache.spark.sql.rocketmq.common.{RocketMQQueue, RocketMQRetry}
import org.apache.spark.sql.rocketmq.consumer.RocketMQQueuePuller.RetryPauseMs
import org.apache.spark.sql.rocketmq.errors.RocketMQErrorKinds.{DataLossReason, GaveUp}
import org.apache.spark.sql.rocketmq.errors.RocketMQErrorKinds.DataLossReason._
import org.apache.spark.sql.rocketmq.errors.RocketMQErrors
import org.apache.spark.sql.rocketmq.errors.RocketMQErrors.NoServingBroker

/**
 * Pulls exactly `[from, until)` of one queue with stateless pulls, never asking for a message at or
 * past `until`; memory is one pull batch. Every offset in the range is either returned, skipped by
 * the filter or compacted away (normal), or reported as lost: expired before it was read, or gone
 * with a truncated or recreated queue, or skipped by the broker (a later message returned than
 * asked for, up to the end of the range). Lost offsets fail the read, or with
 * `failOnDataLoss=false` are logged, counted and skipped.
 *
 * Pulls go through `reads` ([[RocketMQReadAhead]]), which answers each with the broker's answer to
 * exactly that pull, having issued it ahead where it could guess it; [[RocketMQQueuePuller.apply]]
 * makes them with a consumer from the executor's [[RocketMQConsumerPool]]. A pull that fails for a
 * retryable reason (see [[RocketMQRetry]]) is made again after a pause, for up to `retryTimeoutMs`
 * from the first failure in a row, so that a task rides out a broker restart; other failures fail
 * the task at once. `onGiveUp` runs before a failure is thrown (the pooled consumer is then
 * replaced).
 *
 * On a cluster, pulls go to the queue's broker group: its master, or a replica while the master is
 * down. After each failure `groupMaster` asks the name server afresh where the group's master is
 * (None: it has none now), which also points the next pull there. A replica answering that it does
 * not know the topic (it copies its master's topics every few seconds) is retried like an outage;
 * only the master's denial is final. A group that stays without a master that serves the read fails
 * with ROCKETMQ_BROKER_UNAVAILABLE naming the group once `retryTimeoutMs` is spent. Even a master's
 * word that a queue ends before an offset is final only once it has indexed what it stored (a
 * restarted master rebuilds the tail of its queues from its commit log, answering meanwhile as if
 * they ended earlier): `awaitMasterIndexed` waits for that, then the offset is asked for again.
 *
 * With `until` = [[RocketMQQueuePuller.Open]] (real-time mode) the range has no end: the puller
 * follows the queue's end with long polls, which the broker holds until a message arrives, and
 * `next(deadlineNanos)` returns null once the deadline passes with nothing new. Reaching the end is
 * then normal, not a loss; a queue whose offsets went back (recreated) is a loss, and with
 * `failOnDataLoss=false` is read on from its first offset.
 */
private[rocketmq] final class RocketMQQueuePuller(
    queue: RocketMQQueue,
    from: Long,
    until: Long,
    settings: RocketMQReadSettings,
    reads: RocketMQReadAhead,
    groupMaster: () => Option[String],
    awaitMasterIndexed: () => Unit,
    onGiveUp: () => Unit,
    onClose: () => Unit)
  extends Closeable {

  private val log = LoggerFactory.getLogger(getClass)

  /** The next offset to ask the broker for. */
  private var pullOffset = from
  /** The offset the next returned message should have, if nothing was filtered or lost. */
  private var expectedOffset = from
  private var messages: java.util.Iterator[MessageExt] = java.util.Collections.emptyIterator()
  private var lost = 0L
  /** Answers in a row that asked to pull the same offset again (a replica broker's "retry"). */
  private var retriesInARow = 0
  private val retryBudget = new RocketMQRetry.Budget(settings.retryTimeoutMs)
  /** The wait for a replica that has not indexed the next offset yet (see [[awaitReplica]]). */
  private val replicaBudget = new RocketMQRetry.Budget(settings.retryTimeoutMs)
  /**
   * Whether the master has indexed what it stored since this reader last moved on (see
   * [[RocketMQPullAnswer]]).
   */
  private var masterIndexed = false
  private val open = until == RocketMQQueuePuller.Open
  /**
   * The group's master answered that the topic does not exist (deleted): with failOnDataLoss=false,
   * idle.
   */
  private var topicGone = false
  /** Whether offsets may be missing here without loss (a filter, a compacted topic). */
  private val gapsNormal = settings.gapsNormal(queue.topic)
  private val compacted = settings.compactedTopics.contains(queue.topic)

  /** Offsets skipped as lost so far (only with failOnDataLoss=false). */
  def lostOffsets: Long = lost

  /** Pulls made again after a retryable failure so far. */
  def pullRetries: Long = retryBudget.retries

  /** Pull requests made so far (issued ahead or not). */
  def pulls: Long = reads.pullCount

  /** Messages in the pull answers read so far. */
  def messagesPulled: Long = reads.messageCount

  /** Time spent waiting for the broker's answers so far, in milliseconds. */
  def pullWaitMs: Long = reads.waitMs

  /**
   * The offset after the last message returned (or skipped as filtered or lost): where reading goes
   * on.
   */
  def nextOffset: Long = expectedOffset

  /**
   * The next message of the range, or null once the range is read, or (open range only) once
   * `deadlineNanos` (a `System.nanoTime` value) passes with no message.
   */
  def next(deadlineNanos: Long = Long.MaxValue): MessageExt = {
    while (true) {
      while (messages.hasNext) {
        val message = messages.next()
        val offset = message.getQueueOffset
        if (offset >= until) {
          messages = java.util.Collections.emptyIterator()
          pullOffset = until
          return finish()
        }
        if (offset >= expectedOffset) {
          if (offset > expectedOffset && !gapsNormal)
            dataLoss(expectedOffset, offset, SkippedByBroker)
          expectedOffset = offset + 1
          return message
        }
      }
      if (pullOffset >= until) return finish()
      if (!pullNext(deadlineNanos)) return null
    }
    null
  }

  /**
   * The end of the range: offsets up to `until` that never came are lost too, but where gaps are
   * normal.
   */
  private def finish(): MessageExt = {
    if (expectedOffset < until && !gapsNormal)
      dataLoss(expectedOffset, until, SkippedByBroker)
    expectedOffset = until
    null
  }

  /** One pull, its answer taken in; false if it had none by `deadlineNanos`. */
  private def pullNext(deadlineNanos: Long): Boolean = {
    if (topicGone) {
      // Nothing more will come (until Spark plans again without the queue): wait out the deadline,
      // not spin.
      val waitNanos = math.min(deadlineNanos - System.nanoTime(), 1000000000L)
      if (waitNanos > 0) Thread.sleep(waitNanos / 1000000L, (waitNanos % 1000000L).toInt)
      return false
    }
    val result =
      pullWithRetries(pullOffset, math.min(settings.pullBatchSize.toLong, until - pullOffset).toInt,
        deadlineNanos)
    if (result == null) return false
    val before = pullOffset
    val answer =
      RocketMQPullAnswer(result.getPullStatus, result.getNextBeginOffset, result.getMinOffset,
        result.getMaxOffset)
    val at = RocketMQPullAnswer.Position(pullOffset, until, open, settings.filtered, masterIndexed,
      compacted)
    val kind = answer.classify(at, hasMaster = None) match {
      case RocketMQPullAnswer.AskRoute =>
        answer.classify(at, hasMaster = Some(groupMaster().isDefined))
      case known => known
    }
    kind match {
      case RocketMQPullAnswer.Messages =>
        // Returned messages are checked one by one against expectedOffset in next().
        messages = result.getMsgFoundList.iterator()
        pullOffset = math.min(math.max(answer.next, pullOffset), until)
      case RocketMQPullAnswer.ReplicaTrailing =>
        // Asked again after a pause, until the replica has the offsets, the master is back, or
        // retries run out.
        awaitReplica(before)
        return true
      case RocketMQPullAnswer.AwaitIndexing =>
        awaitMasterIndexed()
        masterIndexed = true
        return true
      case RocketMQPullAnswer.WentBack(reason, resumeAt) =>
        dataLoss(pullOffset, pullOffset, reason)
        pullOffset = resumeAt
        expectedOffset = pullOffset
      case RocketMQPullAnswer.Skip(to) => skipTo(to)
      case RocketMQPullAnswer.Lost(lostFrom, lostUntil, reason, resumeAt) =>
        dataLoss(lostFrom, lostUntil, reason)
        skipTo(resumeAt)
      case RocketMQPullAnswer.PullAgain | RocketMQPullAnswer.AtEnd | RocketMQPullAnswer.AskRoute =>
        ()
    }
    // Open range: the end of the queue, or a replica that asks to pull again, is waited at.
    val waiting = open && (kind == RocketMQPullAnswer.AtEnd || kind == RocketMQPullAnswer.PullAgain)
    if (pullOffset == before && !messages.hasNext && !waiting) {
      // Only the "pull again" answer leaves the offset where it was; any other such answer, or such
      // answers for longer than a pull may take, would loop forever, unless a replica gives them
      // while its group has no master.
      retriesInARow += 1
      val tooLong = retriesInARow * RetryPauseMs > settings.pullTimeoutMs
      if (answer.status != PullStatus.NO_MATCHED_MSG || tooLong && groupMaster().isDefined) {
        throw RocketMQErrors.pullAnsweredWithoutProgress(queue, before, answer.status.toString,
          answer.next,
          retriesInARow)
      }
      if (tooLong) awaitReplica(before) else Thread.sleep(RetryPauseMs)
    } else {
      if (pullOffset == before && answer.status == PullStatus.NO_MATCHED_MSG)
        Thread.sleep(RetryPauseMs)
      retriesInARow = 0
    }
    if (pullOffset != before || messages.hasNext) {
      replicaBudget.succeeded()
      masterIndexed = false
    }
    true
  }

  /**
   * After a replica's answer that `offset` is not there while its group has no master, or its "pull
   * again" answers for longer than a pull may take: the replica has not indexed `offset` yet or
   * never got it (it copies and indexes its master's log asynchronously, and the range may have
   * been planned from the master). The offset is unavailable, not lost: pauses before the next
   * pull, and once `retryTimeoutMs` is spent fails naming the group. Only the master's answer
   * counts as loss.
   */
  private def awaitReplica(offset: Long): Unit = replicaBudget.nextPauseMs() match {
    case Some(pauseMs) =>
      if (replicaBudget.retries == 1 || replicaBudget.retries % 10 == 0) {
        log.warn(s"$queue has no master, and its replica does not have offset $offset yet " +
          s"(${replicaBudget.elapsedMs} ms into a retry budget of ${settings.retryTimeoutMs} " +
          "ms); pulling again")
      }
      Thread.sleep(pauseMs)
    case None =>
      onGiveUp()
      throw RocketMQErrors.brokerUnavailable(queue.topic, Some(queue.brokerName),
        settings.connection.nameServer,
        replicaBudget.elapsedMs,
        new NoServingBroker(queue.brokerName, queue.topic,
          Seq(s"its replica has not indexed offset $offset of queue ${queue.queueId} yet")))
  }

  /** The answer to a pull, after retries; null if none came by `deadlineNanos`. */
  private def pullWithRetries(offset: Long, maxMessages: Int, deadlineNanos: Long): PullResult = {
    while (true) {
      try {
        val result = reads.pull(offset, maxMessages, deadlineNanos)
        if (result != null) retryBudget.succeeded()
        return result
      } catch {
        case NonFatal(e) if RocketMQRetry.isRetryable(e) || RocketMQRetry.deniesTopic(e) =>
          val master = groupMaster()
          if (RocketMQRetry.deniesTopic(e) && master.isDefined &&
            answeredBy(e).forall(master.contains)) {
            topicDeleted(offset)
            return null
          }
          retryBudget.nextPauseMs() match {
            case Some(pauseMs) =>
              log.warn(
                s"Pull of $queue at offset $offset failed (${retryBudget.elapsedMs} ms into a " +
                  "retry budget " +
                  s"of ${settings.retryTimeoutMs} ms); pulling again in $pauseMs ms: $e")
              Thread.sleep(pauseMs)
            case None =>
              onGiveUp()
              throw if (master.isEmpty) {
                RocketMQErrors.brokerUnavailable(queue.topic, Some(queue.brokerName),
                  settings.connection.nameServer,
                  retryBudget.elapsedMs,
                  new NoServingBroker(queue.brokerName, queue.topic, Seq(e.toString)))
              } else {
                RocketMQErrors.pullFailed(queue, offset, e,
                  GaveUp.BudgetSpent(retryBudget.retries, retryBudget.elapsedMs,
                    settings.retryTimeoutMs))
              }
          }
        case NonFatal(e) =>
          onGiveUp()
          throw RocketMQErrors.unlessAccessDenied(e, settings.connection.accessKey, queue.topic)(
            RocketMQErrors.pullFailed(queue, offset, e, GaveUp.NotRetryable))
      }
    }
    throw new IllegalStateException("unreachable")
  }

  /**
   * The group's master says the topic does not exist: it was deleted while this task read it. That
   * is the loss of the queue from `offset` on: it fails the read, or with failOnDataLoss=false the
   * range is skipped (an open one idles until Spark plans again, without the queue).
   */
  private def topicDeleted(offset: Long): Unit = {
    val error = RocketMQErrors.queueGone(queue, offset)
    if (settings.failOnDataLoss) {
      onGiveUp()
      throw error
    }
    log.warn(s"${error.getMessage} Reading on without it (failOnDataLoss=false).")
    if (open) topicGone = true
    else {
      lost += until - offset
      skipTo(until)
    }
  }

  /** The broker that gave an error answer, where the client says (it does for pulls). */
  private def answeredBy(e: Throwable): Option[String] = e match {
    case b: MQBrokerException => Option(b.getBrokerAddr)
    case _ => None
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

  override def close(): Unit = onClose()
}

private[rocketmq] object RocketMQQueuePuller {

  /**
   * The pause before pulling again after a "pull again" answer; such answers stop after
   * `pullTimeoutMs`.
   */
  private val RetryPauseMs = 20L

  /** `until` of a range with no end (real-time mode). */
  val Open: Long = Long.MaxValue

  /** A puller on a consumer borrowed from the executor's pool ([[RocketMQPooledPuller]]). */
  def apply(queue: RocketMQQueue, from: Long, until: Long, settings: RocketMQReadSettings)
      : RocketMQQueuePuller =
    RocketMQPooledPuller(queue, from, until, settings)
}
