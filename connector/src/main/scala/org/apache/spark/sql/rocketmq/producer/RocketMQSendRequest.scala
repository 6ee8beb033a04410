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

package org.apache.spark.sql.rocketmq.producer

import java.util.concurrent.{CompletableFuture, TimeUnit}

import org.apache.rocketmq.client.producer.{SendCallback, SendResult, SendStatus}
import org.apache.rocketmq.common.message.{Message, MessageClientIDSetter, MessageQueue}

import org.apache.spark.sql.rocketmq.common.RocketMQRetry
import org.apache.spark.sql.rocketmq.errors.RocketMQErrorKinds.GaveUp
import org.apache.spark.sql.rocketmq.errors.RocketMQErrors
import org.apache.spark.sql.rocketmq.producer.RocketMQStoredCheck.{
  CannotTell, NotAnswered, NotStored, Stored
}

/**
 * One request on its way: one message, or a batch of messages of one topic without sharding key, or
 * a batch for one queue (`queue`) of messages with sharding keys; resolves the slots of all its
 * messages exactly once. `traced`: a batch's messages, as a traced write records them.
 */
private[producer] final class RocketMQSendRequest(owner: RocketMQMessageSender, message: Message,
    count: Int,
    shardingKey: String, queue: MessageQueue, bytes: Long, holdsSlot: Boolean,
    firstKey: String = null, traced: Seq[RocketMQSendTrace.Sent] = null)
  extends SendCallback {
  import owner._
  private var budget: RocketMQRetry.Budget =
    _ // made at the first failure: most sends never need one
  private var startNanos = 0L
  private var startMs = 0L

  /** The key of the request's first message, which the brokers index. */
  private def key: String =
    if (firstKey != null) firstKey else MessageClientIDSetter.getUniqID(message)

  /** A half message's place among the task's rows (a half message is always sent alone). */
  private val seq = if (halfMessages != null) halfMessages.lastPrepared else -1

  /**
   * Messages without a sharding key are sent asynchronously, the first attempt issued on the
   * calling thread ([[RocketMQProducerPool.inline]]), and resent from the retry scheduler. Those
   * with one are sent synchronously, and resent before the task sends anything else: the client's
   * asynchronous sends run on a thread pool and would reach the queue out of order. Half messages
   * go asynchronously, with a key too: their place in the queue is made when the driver commits
   * them, in the order of [[seq]].
   */
  def start(): Unit = {
    requestCount.incrementAndGet()
    peakRequests.accumulateAndGet(openRequests.incrementAndGet(), (a, b) => math.max(a, b))
    startNanos = System.nanoTime()
    startMs = System.currentTimeMillis()
    if (firstKey == null) MessageClientIDSetter.setUniqID(message)
    RocketMQProducerPool.inline(attempt())
  }

  private def attempt(): Unit =
    if (queue != null) sendInline(producer.send(message, queue, settings.sendTimeoutMs))
    else if (shardingKey != null && halfMessages == null) {
      sendInline(producer.send(message, routes.byShardingKey, shardingKey, settings.sendTimeoutMs))
    } else {
      try {
        if (shardingKey != null)
          producer.send(message, routes.byShardingKey, shardingKey, this, settings.sendTimeoutMs)
        else producer.send(message, this, settings.sendTimeoutMs)
      } catch { case e: Throwable => onException(e) }
    }

  /**
   * Makes the request now, and again after a pause while retries last, before returning; after a
   * failure that may have stored it, only once the brokers say they did not (see [[settle]]).
   */
  private def sendInline(request: => SendResult): Unit = {
    var pauseMs = 0L
    var inDoubt: Throwable = null
    while (pauseMs >= 0) {
      if (pauseMs > 0) Thread.sleep(pauseMs)
      pauseMs = -1L
      val verdict = if (inDoubt == null) NotStored else askStored().get()
      if (verdict == Stored) acknowledged()
      else if (verdict == NotAnswered) retryPause(inDoubt).fold(fail(inDoubt, _), pauseMs = _)
      else {
        if (verdict == CannotTell) maybeDuplicatedCount.addAndGet(count)
        inDoubt = null
        try onSuccess(request)
        catch {
          case e: Throwable => retryPause(e).fold(fail(e, _),
              { pause =>
                pauseMs = pause
                if (RocketMQRetry.mayHaveBeenStored(e)) inDoubt = e
              })
        }
      }
    }
  }

  /** Whether the brokers stored this request, asked where it went (every master, if unknown). */
  private def askStored(): CompletableFuture[RocketMQStoredCheck.Verdict] = {
    val broker = Option(queue).orElse(Option(shardingKey).flatMap(k =>
      Option(routes.queueOf(message.getTopic, k)))).map(_.getBrokerName)
    storedCheck.stored(message.getTopic, key, startMs, broker)
  }

  /**
   * After a failure that may have stored the request (`cause`): sends it again only where the
   * brokers say they did not store it, asking again while they cannot answer; where no broker can
   * tell, it is sent again and counted as a possible duplicate.
   */
  private def settle(cause: Throwable): Unit =
    askStored().whenComplete { (verdict, _) =>
      Option(verdict).getOrElse(NotAnswered) match {
        case Stored => acknowledged()
        case NotAnswered => retryPause(cause) match {
            case Right(pauseMs) => RocketMQRetry.schedule(pauseMs)(settle(cause))
            case Left(gaveUp) => fail(cause, gaveUp)
          }
        case other =>
          if (other == CannotTell) maybeDuplicatedCount.addAndGet(count)
          attempt()
      }
    }

  override def onSuccess(result: SendResult): Unit =
    if (result.getSendStatus != SendStatus.SEND_OK) {
      fail(RocketMQErrors.sendStatusNotOk(topicInQuery, pinnedQueueId,
        result.getSendStatus.toString))
    } else {
      if (halfMessages != null) halfMessages.record(result, seq, shardingKey != null)
      else {
        storedCheck.acknowledged(result.getMessageQueue.getBrokerName, message.getTopic, key,
          startMs)
      }
      if (trace != null) {
        if (traced != null) trace.stored(result, startMs, traced)
        else trace.stored(result, startMs, message)
      }
      acknowledged()
    }

  /** Stored: its acknowledgement time, then its slots (once `flush` returns, every ack is in). */
  private def acknowledged(): Unit = {
    val tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos)
    ackMs.synchronized(ackMs.record(tookMs))
    resolved()
  }

  /**
   * Frees the message's slots: its bytes first, so that all slots free means all bytes free; then
   * its request's, with which rows waiting meanwhile go out.
   */
  private def resolved(): Unit = {
    openRequests.decrementAndGet()
    inFlightBytes.release(bytes.toInt)
    inFlight.release(count)
    if (holdsSlot) {
      requestSlots.release()
      sendWaitingRows()
    }
  }

  override def onException(e: Throwable): Unit = retryPause(e) match {
    case Right(pauseMs) if RocketMQRetry.mayHaveBeenStored(e) =>
      RocketMQRetry.schedule(pauseMs)(settle(e))
    case Right(pauseMs) => RocketMQRetry.schedule(pauseMs)(attempt())
    case Left(gaveUp) => fail(e, gaveUp)
  }

  /** After a failed attempt: the pause before the next one, or why there is none. */
  private def retryPause(e: Throwable): Either[GaveUp, Long] = {
    if (RocketMQRetry.isTooLarge(e)) return Left(GaveUp.TooLarge(settings.sendBatchBytes))
    if (!RocketMQRetry.isRetryable(e)) return Left(GaveUp.NotRetryable)
    // A half message that may be stored already is not sent again: both copies would be committed.
    if (halfMessages != null && RocketMQRetry.mayHaveBeenStored(e)) return Left(GaveUp.ExactlyOnce)
    if (RocketMQRetry.isNoRoute(e) && routes.topicMissing(message.getTopic)) {
      return Left(GaveUp.TopicNotFound(settings.connection.nameServer))
    }
    if (budget == null) budget = new RocketMQRetry.Budget(settings.retryTimeoutMs)
    if (settings.sendRetries.exists(budget.retries >= _))
      return Left(GaveUp.SendRetriesReached(budget.retries))
    budget.nextPauseMs() match {
      case Some(pauseMs) =>
        retryCount.incrementAndGet()
        if (budget.retries == 1 || budget.retries % 10 == 0) {
          val next =
            if (RocketMQRetry.mayHaveBeenStored(e)) "asking whether it was stored" else "resending"
          log.warn(
            s"Send to topic $topicInQuery failed (retry ${budget.retries}, ${budget.elapsedMs} " +
              s"ms into a retry budget of ${settings.retryTimeoutMs} ms); $next in $pauseMs ms: $e")
        }
        Right(pauseMs)
      case None =>
        Left(GaveUp.BudgetSpent(budget.retries, budget.elapsedMs, settings.retryTimeoutMs))
    }
  }

  private def fail(e: Throwable, gaveUp: GaveUp): Unit =
    fail(RocketMQErrors.unlessAccessDenied(e, settings.connection.accessKey, topicInQuery)(
      RocketMQErrors.sendFailed(topicInQuery, pinnedQueueId, e, gaveUp,
        if (pinnedQueueId.isEmpty) routes.groupNamedBy(e) else None)))

  /**
   * The queue a sharding key pins this send to (None: the producer picks one, or the route is
   * unknown).
   */
  private def pinnedQueueId: Option[(String, Int)] =
    Option(queue).orElse(
      Option(shardingKey).flatMap(key => Option(routes.queueOf(message.getTopic, key))))
      .map(q => (q.getBrokerName, q.getQueueId))

  /** The topic as the query names it (without the namespace the brokers see). */
  private def topicInQuery: String = settings.connection.inQuery(message.getTopic)

  private def fail(error: Throwable): Unit = {
    failedCount.addAndGet(count)
    lease.markBroken() // the next task gets a fresh producer, with fresh routes
    firstFailure.compareAndSet(null, error)
    resolved()
  }
}
