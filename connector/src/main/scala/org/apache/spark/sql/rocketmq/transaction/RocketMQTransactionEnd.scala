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

import org.apache.rocketmq.client.impl.factory.MQClientInstance
import org.apache.rocketmq.remoting.exception.{
  RemotingConnectException, RemotingTooMuchRequestException
}
import org.apache.rocketmq.remoting.protocol.{
  RemotingCommand, RemotingSysResponseCode, ResponseCode
}

import org.slf4j.LoggerFactory

import org.apache.spark.sql.rocketmq.common.RocketMQRetry

/**
 * Commits or rolls back the half messages of some task attempts with END_TRANSACTION requests to
 * the brokers that hold them, through any started client instance (the one that sent them is not
 * needed).
 *
 * RocketMQ has no batch form of END_TRANSACTION, so every half message is one request; they are
 * pipelined: up to `window` requests in flight per broker group, answers handled as they come. Each
 * committed message takes its place in its queue when the broker handles the request, and a broker
 * handles requests on many threads: so the half messages of rows with a sharding key are committed
 * one after another per task and queue, in the order the task wrote them; the others in any order.
 *
 * A commit is never asked twice unless the broker surely did not take the first request: a broker
 * that commits one half message twice delivers it twice. Surely not taken: no connection, or the
 * broker answered that it is busy (it drops such requests before handling them). Then the broker
 * group is asked again, with routes looked up afresh, for up to `retryTimeoutMs` (a restarted
 * master, or the replica elected in its place, takes the decision). A commit whose answer never
 * came (a time-out, a connection closed after the request went out) may have been carried out: with
 * an `index`, it is looked up in the broker's index of message keys until found there (the later
 * rows of its queue that must follow it wait; see [[RocketMQUnansweredCommits]]); not found within
 * `retryTimeoutMs`, it is left to the broker's check-back, which asks the producer group once the
 * message's check immunity is over (see [[RocketMQTransactionCheck]]), and so are those later rows.
 * A roll back may be asked twice: a second one changes nothing.
 */
private[rocketmq] object RocketMQTransactionEnd {

  private[transaction] val log = LoggerFactory.getLogger(getClass)

  /**
   * END_TRANSACTION requests in flight per broker group (the broker handles them on 16 threads or
   * more).
   */
  val Window = 2048

  /**
   * How long an END_TRANSACTION may wait for its answer. A commit with no answer waits for the
   * broker's check-back (minutes): so this is long, far beyond the broker's own 3 s limit on a
   * request's wait in its queue.
   */
  val AnswerTimeoutMs = 30000L

  /** How often commits without an answer are looked up in their broker's index. */
  private[transaction] val LookUpEveryNs = 1000L * 1000000L

  /** Commits not found in their broker's index that one round of look-ups asks about at most. */
  private[transaction] val MissesPerRound = 64

  /** Commit requests whose answer never came, in this JVM (diagnostics, tests). */
  private[rocketmq] val unansweredCommits = new java.util.concurrent.atomic.AtomicLong()

  /**
   * What became of the half messages of one task attempt; `left` are the places
   * ([[RocketMQHalfMessage.seq]]) of those left to the broker, `unanswered` of those among them
   * whose commit went out without an answer. `foundInIndex` of the confirmed were found committed
   * in the broker's index after their commit went unanswered (by that commit, or by the broker's
   * check-back).
   */
  final case class Ended(confirmed: Int, refused: Int, uncertain: Int, unsent: Int,
      left: Seq[Int] = Nil,
      unanswered: Seq[Int] = Nil,
      foundInIndex: Int = 0) {

    /**
     * Messages whose decision the driver did not see the broker take: left to the broker's
     * check-back.
     */
    def leftToBroker: Int = refused + uncertain + unsent
    def allConfirmed: Boolean = leftToBroker == 0
  }

  /** What a broker made of one END_TRANSACTION request. */
  private[transaction] sealed trait Outcome
  private[transaction] case object Confirmed extends Outcome
  /**
   * Answered, but not done (a 5.x broker refuses the sender's decision past the check immunity).
   */
  private[transaction] case object Refused extends Outcome
  /** Surely not carried out: no address, no connection, or the broker was too busy to take it. */
  private[transaction] case object NotTaken extends Outcome
  /** No answer to a request that went out: it may have been carried out. */
  private[transaction] case object Uncertain extends Outcome

  /**
   * One half message to decide; `chain` is its queue's rows that keep their order (null for the
   * others).
   */
  private[transaction] final class Item(val task: Int, val message: RocketMQHalfMessage,
      val chain: Chain)

  /** The ordered rows of one task and queue: one request in flight at a time, in order. */
  private[transaction] final class Chain(val items: Array[Item]) {
    var next = 0
    def left: Int = items.length - next
  }

  /** One broker group's share: what is ready to go (unordered rows, and each chain's next row). */
  private[transaction] final class Lane(val broker: String, val topics: Seq[String]) {
    val ready = new java.util.ArrayDeque[Item]()
    var inFlight = 0
    var address: String = _
    var budget: RocketMQRetry.Budget = _
    var resumeAtNs = 0L
    var gaveUp = false
    /** After a failed request: one request at a time until the broker answers again. */
    var probing = false
  }

  private[transaction] final case class Answer(item: Item, outcome: Outcome)

  /**
   * Decides every half message of `tasks` (commit or roll back); returns, by task, what the brokers
   * confirmed and what is left to their check-back. No request for a task is sent after its
   * `sendBy` time (epoch millis).
   */
  def decide(client: MQClientInstance, group: String, tasks: IndexedSeq[RocketMQTaskHalfMessages],
      commit: Boolean,
      retryTimeoutMs: Long, sendBy: RocketMQTaskHalfMessages => Long = _ => Long.MaxValue,
      index: RocketMQMessageIndex = null, window: Int = Window): IndexedSeq[Ended] =
    new RocketMQTransactionEndRun(RocketMQTransactionEndRun.brokersOf(client), group, tasks, commit,
      retryTimeoutMs, sendBy, Option(index).map(i => i.commitState _), window).run()

  /**
   * Rolls back the half messages `task` sent, through `client`; returns how many were not
   * confirmed. A failing task does not wait for a broker that cannot answer: the broker asks the
   * producer group later.
   */
  def rollBack(client: MQClientInstance, task: RocketMQTaskHalfMessages, group: String): Int =
    decide(client, group, IndexedSeq(task), commit = false, retryTimeoutMs = 0L).head.leftToBroker

  private[transaction] def outcomeOf(response: RemotingCommand): Outcome = response.getCode match {
    case RemotingSysResponseCode.SUCCESS => Confirmed
    // Dropped before it was handled: the broker's queue was full, or the request waited too long in
    // it.
    case RemotingSysResponseCode.SYSTEM_BUSY => NotTaken
    // A replica (routes not updated yet after an election): it handles no END_TRANSACTION.
    case ResponseCode.SLAVE_NOT_AVAILABLE => NotTaken
    case _ => Refused
  }

  private[transaction] def outcomeOf(e: Throwable): Outcome =
    if (surelyNotSent(e)) NotTaken else Uncertain

  /**
   * A request that failed this way never reached the broker: no connection, or too many requests in
   * flight. Not a `RemotingSendRequestException`: the client also fails every request still waiting
   * for its answer that way when the connection closes, requests the broker may have carried out.
   */
  private[transaction] def surelyNotSent(e: Throwable): Boolean = e match {
    case _: RemotingConnectException | _: RemotingTooMuchRequestException => true
    case _ => false
  }
}
