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

import java.util.concurrent.{LinkedBlockingQueue, TimeUnit}

import scala.util.control.NonFatal

import org.apache.rocketmq.client.impl.factory.MQClientInstance
import org.apache.rocketmq.common.sysflag.MessageSysFlag
import org.apache.rocketmq.remoting.InvokeCallback
import org.apache.rocketmq.remoting.exception.{RemotingConnectException, RemotingTooMuchRequestException}
import org.apache.rocketmq.remoting.netty.ResponseFuture
import org.apache.rocketmq.remoting.protocol.{RemotingCommand, RemotingSysResponseCode, RequestCode, ResponseCode}
import org.apache.rocketmq.remoting.protocol.header.EndTransactionRequestHeader

import org.slf4j.LoggerFactory

import org.apache.spark.sql.rocketmq.client.RocketMQRetry

/**
 * Commits or rolls back the half messages of some task attempts with END_TRANSACTION requests to the
 * brokers that hold them, through any started client instance (the one that sent them is not needed).
 *
 * RocketMQ has no batch form of END_TRANSACTION, so every half message is one request; they are
 * pipelined: up to `window` requests in flight per broker group, answers handled as they come. Each
 * committed message takes its place in its queue when the broker handles the request, and a broker
 * handles requests on many threads: so the half messages of rows with a sharding key are committed one
 * after another per task and queue, in the order the task wrote them; the others in any order.
 *
 * A commit is never asked twice unless the broker surely did not take the first request: a broker that
 * commits one half message twice delivers it twice. Surely not taken: no connection, or the broker
 * answered that it is busy (it drops such requests before handling them). Then the broker group is
 * asked again, with routes looked up afresh, for up to `retryTimeoutMs` (a restarted master, or the
 * replica elected in its place, takes the decision). A commit whose answer never came (a time-out, a
 * connection closed after the request went out) may have been carried out: with an `index`, it is looked up in
 * the broker's index of message keys until found there (the later rows of its queue that must follow it wait;
 * see [[RocketMQUnansweredCommits]]); not found within `retryTimeoutMs`, it is left to the broker's check-back, which asks the producer group once
 * the message's check immunity is over (see [[RocketMQTransactionCheck]]), and so are those later rows. A roll
 * back may be asked twice: a second one changes nothing.
 */
private[rocketmq] object RocketMQTransactionEnd {

  private val log = LoggerFactory.getLogger(getClass)

  /** END_TRANSACTION requests in flight per broker group (the broker handles them on 16 threads or more). */
  val Window = 2048

  /**
   * How long an END_TRANSACTION may wait for its answer. A commit with no answer waits for the broker's
   * check-back (minutes): so this is long, far beyond the broker's own 3 s limit on a request's wait in its
   * queue.
   */
  val AnswerTimeoutMs = 30000L

  /** How often commits without an answer are looked up in their broker's index. */
  private val LookUpEveryNs = 1000L * 1000000L

  /** Commits not found in their broker's index that one round of look-ups asks about at most. */
  private val MissesPerRound = 64

  /** Commit requests whose answer never came, in this JVM (diagnostics, tests). */
  private[rocketmq] val unansweredCommits = new java.util.concurrent.atomic.AtomicLong()

  /**
   * What became of the half messages of one task attempt; `left` are the places ([[RocketMQHalfMessage.seq]])
   * of those left to the broker, `unanswered` of those among them whose commit went out without an answer.
   */
  final case class Ended(confirmed: Int, refused: Int, uncertain: Int, unsent: Int, left: Seq[Int] = Nil,
      unanswered: Seq[Int] = Nil) {

    /** Messages whose decision the driver did not see the broker take: left to the broker's check-back. */
    def leftToBroker: Int = refused + uncertain + unsent
    def allConfirmed: Boolean = leftToBroker == 0
  }

  /** What a broker made of one END_TRANSACTION request. */
  private sealed trait Outcome
  private case object Confirmed extends Outcome
  /** Answered, but not done (a 5.x broker refuses the sender's decision past the check immunity). */
  private case object Refused extends Outcome
  /** Surely not carried out: no address, no connection, or the broker was too busy to take it. */
  private case object NotTaken extends Outcome
  /** No answer to a request that went out: it may have been carried out. */
  private case object Uncertain extends Outcome

  /** One half message to decide; `chain` is its queue's rows that keep their order (null for the others). */
  private final class Item(val task: Int, val message: RocketMQHalfMessage, val chain: Chain)

  /** The ordered rows of one task and queue: one request in flight at a time, in order. */
  private final class Chain(val items: Array[Item]) {
    var next = 0
    def left: Int = items.length - next
  }

  /** One broker group's share: what is ready to go (unordered rows, and each chain's next row). */
  private final class Lane(val broker: String, val topics: Seq[String]) {
    val ready = new java.util.ArrayDeque[Item]()
    var inFlight = 0
    var address: String = _
    var budget: RocketMQRetry.Budget = _
    var resumeAtNs = 0L
    var gaveUp = false
    /** After a failed request: one request at a time until the broker answers again. */
    var probing = false
  }

  private final case class Answer(item: Item, outcome: Outcome)

  /**
   * Decides every half message of `tasks` (commit or roll back); returns, by task, what the brokers
   * confirmed and what is left to their check-back. No request for a task is sent after its `sendBy` time
   * (epoch millis).
   */
  def decide(client: MQClientInstance, group: String, tasks: IndexedSeq[RocketMQTaskHalfMessages], commit: Boolean,
      retryTimeoutMs: Long, sendBy: RocketMQTaskHalfMessages => Long = _ => Long.MaxValue,
      index: RocketMQMessageIndex = null, window: Int = Window): IndexedSeq[Ended] = {
    val deadlines = tasks.map(sendBy)
    val confirmed, refused, uncertain, unsent = new Array[Int](tasks.size)
    var unresolved = 0
    val left, leftUnanswered = tasks.map(_ => scala.collection.mutable.ArrayBuffer[Int]())
    /** `item` is left to the broker's check-back, counted in `kind`. */
    def leave(item: Item, kind: Array[Int]): Unit = {
      kind(item.task) += 1
      left(item.task) += item.message.seq
      if (kind eq uncertain) leftUnanswered(item.task) += item.message.seq
      unresolved -= 1
    }
    val lanes = new java.util.LinkedHashMap[String, Lane]()
    def laneOf(task: RocketMQTaskHalfMessages, message: RocketMQHalfMessage): Lane = {
      val broker = task.endpoints(message.endpoint)._2
      lanes.computeIfAbsent(broker,
        _ => new Lane(broker, tasks.flatMap(_.endpoints).filter(_._2 == broker).map(_._1).distinct))
    }
    tasks.zipWithIndex.foreach { case (task, t) =>
      val (ordered, free) = task.messages.partition(_.keyed)
      free.foreach(m => laneOf(task, m).ready.add(new Item(t, m, null)))
      ordered.groupBy(m => (m.endpoint, m.queueId)).values.foreach { rows =>
        val chain = new Chain(new Array[Item](rows.size))
        rows.sortBy(_.seq).zipWithIndex.foreach { case (m, i) => chain.items(i) = new Item(t, m, chain) }
        laneOf(task, rows.head).ready.add(chain.items(0))
      }
      unresolved += task.messages.size
    }
    if (unresolved == 0) return tasks.map(_ => Ended(0, 0, 0, 0))

    val answers = new LinkedBlockingQueue[Answer]()
    /** Commits that went out without an answer (see `lookUpUnanswered`). */
    val unanswered = new RocketMQUnansweredCommits[Item](retryTimeoutMs, MissesPerRound)
    val remoting = client.getMQClientAPIImpl.getRemotingClient

    def findAddress(lane: Lane): Unit = {
      lane.topics.foreach { topic =>
        try client.updateTopicRouteInfoFromNameServer(topic)
        catch { case NonFatal(e) => log.warn(s"No route for topic $topic: $e") }
      }
      lane.address = client.findBrokerAddressInPublish(lane.broker)
    }

    def send(lane: Lane, item: Item): Unit = {
      if (System.currentTimeMillis() > deadlines(item.task)) {
        leave(item, unsent)
        dropRestOfChain(item)
        return
      }
      lane.inFlight += 1
      val task = tasks(item.task)
      val header = new EndTransactionRequestHeader()
      header.setTopic(task.endpoints(item.message.endpoint)._1)
      header.setProducerGroup(group)
      header.setTranStateTableOffset(item.message.queueOffset)
      header.setCommitLogOffset(item.message.commitLogOffset)
      header.setCommitOrRollback(
        if (commit) MessageSysFlag.TRANSACTION_COMMIT_TYPE else MessageSysFlag.TRANSACTION_ROLLBACK_TYPE)
      header.setFromTransactionCheck(false)
      header.setMsgId(s"${task.run}/${task.epoch}/${task.partition}/${task.attempt}")
      header.setBrokerName(lane.broker)
      val callback = new InvokeCallback {
        override def operationComplete(future: ResponseFuture): Unit = ()
        override def operationSucceed(response: RemotingCommand): Unit = answers.add(Answer(item, outcomeOf(response)))
        override def operationFail(e: Throwable): Unit = answers.add(Answer(item, outcomeOf(e)))
      }
      try {
        remoting.invokeAsync(lane.address, RemotingCommand.createRequestCommand(RequestCode.END_TRANSACTION, header),
          AnswerTimeoutMs, callback)
      } catch { case NonFatal(e) => callback.operationFail(e) }
    }

    /** The rows after `item` in its chain (or none), now left to the broker. */
    def dropRestOfChain(item: Item): Unit = if (item.chain != null) {
      val chain = item.chain
      (chain.next + 1 until chain.items.length).foreach(i => leave(chain.items(i), unsent))
      chain.next = chain.items.length
    }

    def giveUp(lane: Lane): Unit = {
      lane.gaveUp = true
      while (!lane.ready.isEmpty) {
        val item = lane.ready.poll()
        leave(item, unsent)
        dropRestOfChain(item)
      }
    }

    /** The next row of `item`'s chain is ready (unless its broker group was given up). */
    def advance(lane: Lane, item: Item): Unit = if (item.chain != null) {
      item.chain.next += 1
      if (item.chain.left > 0) {
        val next = item.chain.items(item.chain.next)
        if (lane.gaveUp) { leave(next, unsent); dropRestOfChain(next) }
        else lane.ready.add(next)
      }
    }

    /** `item` was not taken: it goes first again, after a pause, while the retry budget lasts. */
    def notTaken(lane: Lane, item: Item): Unit = {
      lane.ready.addFirst(item)
      pause(lane, tasks(item.task).epoch)
    }

    /**
     * A request to `lane` failed: no new one goes there for a pause (unless it is paused already), growing
     * while the failures last; once the retry budget is spent, what is left there goes to the broker.
     */
    def pause(lane: Lane, epoch: Long): Unit =
      if (lane.resumeAtNs <= System.nanoTime()) {
        if (lane.budget == null) lane.budget = new RocketMQRetry.Budget(retryTimeoutMs)
        lane.budget.nextPauseMs() match {
          case Some(pauseMs) =>
            if (lane.budget.retries == 1 || lane.budget.retries % 10 == 0) {
              log.warn(s"Epoch $epoch: broker group ${lane.broker} does not answer END_TRANSACTION requests now " +
                s"(${lane.budget.elapsedMs} ms of retryTimeoutMs $retryTimeoutMs); asking again in $pauseMs ms")
            }
            lane.resumeAtNs = System.nanoTime() + pauseMs * 1000000L
            lane.address = null
            lane.probing = true
          case None => if (lane.inFlight == 0) giveUp(lane) else lane.resumeAtNs = Long.MaxValue
        }
      }

    def handle(answer: Answer): Unit = {
      val item = answer.item
      val lane = laneOf(tasks(item.task), item.message)
      lane.inFlight -= 1
      answer.outcome match {
        case Confirmed =>
          confirmed(item.task) += 1
          unresolved -= 1
          lane.budget = null
          lane.probing = false
          advance(lane, item)
        case Refused =>
          leave(item, refused)
          lane.probing = false
          advance(lane, item)
        case Uncertain if commit =>
          unansweredCommits.incrementAndGet()
          pause(lane, tasks(item.task).epoch) // a broker that lets requests time out: do not pile more on it
          if (index == null) { leave(item, uncertain); dropRestOfChain(item) }
          else unanswered.add(item, System.nanoTime())
        case _ => notTaken(lane, item)
      }
      if (lane.resumeAtNs == Long.MaxValue && lane.inFlight == 0) giveUp(lane)
    }

    /** Looks up the commits that went out without an answer, at most once a second (see the class doc). */
    var lastLookUpNs = 0L
    def lookUpUnanswered(): Unit = if (!unanswered.isEmpty && System.nanoTime() - lastLookUpNs > LookUpEveryNs) {
      lastLookUpNs = System.nanoTime()
      unanswered.round(lastLookUpNs) { item =>
        val (topic, broker) = tasks(item.task).endpoints(item.message.endpoint)
        index.commitState(topic, broker, item.message.commitLogOffset)
      }(found = { item =>
          confirmed(item.task) += 1
          unresolved -= 1
          advance(laneOf(tasks(item.task), item.message), item)
        },
        left = { item =>
          leave(item, uncertain)
          dropRestOfChain(item)
        })
    }

    lanes.values().forEach(findAddress)
    while (unresolved > 0) {
      lookUpUnanswered()
      val now = System.nanoTime()
      var nextResumeNs = now + 100000000L
      lanes.values().forEach { lane =>
        if (!lane.gaveUp && lane.resumeAtNs <= now && !lane.ready.isEmpty) {
          if (lane.address == null) findAddress(lane)
          if (lane.address == null) notTaken(lane, lane.ready.poll())
          else {
            val limit = if (lane.probing) 1 else window
            while (lane.inFlight < limit && !lane.ready.isEmpty) send(lane, lane.ready.poll())
          }
        }
        if (lane.resumeAtNs > now && lane.resumeAtNs < nextResumeNs) nextResumeNs = lane.resumeAtNs
      }
      if (unresolved > 0) {
        var answer = answers.poll(math.max(1L, (nextResumeNs - now) / 1000000L), TimeUnit.MILLISECONDS)
        while (answer != null) {
          handle(answer)
          answer = answers.poll()
        }
      }
    }
    tasks.indices.map(t =>
      Ended(confirmed(t), refused(t), uncertain(t), unsent(t), left(t).toSeq,
        leftUnanswered(t).toSeq))
  }

  private def outcomeOf(response: RemotingCommand): Outcome = response.getCode match {
    case RemotingSysResponseCode.SUCCESS => Confirmed
    // Dropped before it was handled: the broker's queue was full, or the request waited too long in it.
    case RemotingSysResponseCode.SYSTEM_BUSY => NotTaken
    // A replica (routes not updated yet after an election): it handles no END_TRANSACTION.
    case ResponseCode.SLAVE_NOT_AVAILABLE => NotTaken
    case _ => Refused
  }

  private def outcomeOf(e: Throwable): Outcome = if (surelyNotSent(e)) NotTaken else Uncertain

  /**
   * A request that failed this way never reached the broker: no connection, or too many requests in flight. Not a
   * `RemotingSendRequestException`: the client also fails every request still waiting for its answer that way when
   * the connection closes, requests the broker may have carried out.
   */
  private[transaction] def surelyNotSent(e: Throwable): Boolean = e match {
    case _: RemotingConnectException | _: RemotingTooMuchRequestException => true
    case _ => false
  }
}
