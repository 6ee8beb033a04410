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

package org.apache.spark.sql.rocketmq.transaction
import org.apache.spark.sql.rocketmq.producer.RocketMQTransactionScope

import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicLong

import scala.util.control.NonFatal

import org.apache.rocketmq.client.producer.{LocalTransactionState, TransactionListener}
import org.apache.rocketmq.common.message.{Message, MessageExt}

import org.slf4j.LoggerFactory

/**
 * Answers a broker's check-back about a half message of an exactly-once write (the broker asks once
 * the message's check immunity, the transaction timeout, is over and no decision reached it), from
 * the decisions kept by the driver ([[RocketMQDecisionLog]]):
 * - an attempt its epoch did not keep, or of an earlier run that never decided its epoch: roll
 *   back;
 *   - an epoch not decided yet by this run: unknown (the broker asks again);
 * - an attempt its epoch kept, of a partition whose commits the driver saw confirmed, every one:
 *   roll back (the broker asks about a copy it made of a message already committed);
 * - an attempt its epoch kept otherwise (the driver left it to the broker, or died while
 *   committing, or a request's answer never came): commit, unless the message is already in its
 *   topic. The broker is asked by the message's key (its index of keys, on by default); a broker
 *   that cannot tell (its index off) gets a commit, and an error in the log: a row may then be
 *   delivered twice. Each epoch the broker asks about is logged once, with what was answered (see
 *   [[summary]]); `answered` hears of every answer about a message of this connector.
 */
private[rocketmq] final class RocketMQTransactionCheck(
    scope: RocketMQTransactionScope, decisions: RocketMQDecisionLog, index: RocketMQMessageIndex,
    onBroker: String => String,
    answered: (RocketMQHalfMessageRecorder.Origin, MessageExt, LocalTransactionState) => Unit)
  extends TransactionListener {

  import RocketMQTransactionCheck._

  private val epochsAsked = new ConcurrentHashMap[Long, AtomicLong]()
  private val committed, rolledBack, unknown, lookups = new AtomicLong()
  /**
   * When the answers so far were last logged (System.nanoTime): a minute apart while the broker
   * asks.
   */
  private val lastReport = new AtomicLong(System.nanoTime())

  /** What was answered so far: commits, roll backs, unknowns, and index look-ups made. */
  def summary: (Long, Long, Long, Long) =
    (committed.get(), rolledBack.get(), unknown.get(), lookups.get())

  override def executeLocalTransaction(message: Message, arg: Any): LocalTransactionState =
    LocalTransactionState.UNKNOW // never called: this producer sends nothing

  override def checkLocalTransaction(message: MessageExt): LocalTransactionState = {
    val property = message.getProperty(RocketMQHalfMessageRecorder.TransactionProperty)
    val answer = RocketMQHalfMessageRecorder.origin(property) match {
      case None => LocalTransactionState.ROLLBACK_MESSAGE
      case Some(origin) =>
        try answerFor(origin, message)
        catch {
          case NonFatal(e) =>
            log.warn(s"Cannot answer for $property yet: $e"); LocalTransactionState.UNKNOW
        }
    }
    (answer match {
      case LocalTransactionState.COMMIT_MESSAGE => committed
      case LocalTransactionState.ROLLBACK_MESSAGE => rolledBack
      case _ => unknown
    }).incrementAndGet()
    RocketMQHalfMessageRecorder.origin(property).foreach { origin =>
      answered(origin, message, answer)
      val asked = epochsAsked.computeIfAbsent(origin.epoch, _ => new AtomicLong())
      if (asked.getAndIncrement() == 0) {
        log.warn(
          s"The broker checks back about epoch ${origin.epoch} of run ${origin.run} (its half " +
            "messages were " +
            s"left to the broker, or are copies the broker keeps); first answer: $answer. " +
            s"Answers so far (commit, roll back, unknown, look-ups): $summary")
      }
    }
    log.debug(s"Check-back for $property (queue offset ${message.getQueueOffset}): $answer")
    val now = System.nanoTime()
    val last = lastReport.get()
    if (now - last >= ReportEveryNs && lastReport.compareAndSet(last, now)) {
      log.warn(
        s"Check-backs answered so far by run ${scope.run} (commit, roll back, unknown, " +
          s"look-ups): $summary")
    }
    answer
  }

  private def answerFor(origin: RocketMQHalfMessageRecorder.Origin, message: MessageExt)
      : LocalTransactionState =
    decisions.read(origin.epoch) match {
      case Some(decision) if !decision.names(origin) => LocalTransactionState.ROLLBACK_MESSAGE
      case Some(_) if decisions.committed(origin.epoch).contains(origin.partition) =>
        LocalTransactionState.ROLLBACK_MESSAGE
      case Some(_) =>
        lookups.incrementAndGet()
        index.delivered(message, onBroker(message.getTopic)) match {
          case Some(true) => LocalTransactionState.ROLLBACK_MESSAGE
          case Some(false) => LocalTransactionState.COMMIT_MESSAGE
          case None => LocalTransactionState.UNKNOW
        }
      case None
          if RocketMQTransactionScope.startOf(origin.run) <
            RocketMQTransactionScope.startOf(scope.run) =>
        LocalTransactionState.ROLLBACK_MESSAGE // a run that ended without deciding this epoch
      case None => LocalTransactionState.UNKNOW
    }
}

private[rocketmq] object RocketMQTransactionCheck {
  private val log = LoggerFactory.getLogger(classOf[RocketMQTransactionCheck])
  private val ReportEveryNs = 60L * 1000 * 1000 * 1000
}
