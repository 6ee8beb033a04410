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

import scala.collection.mutable.ArrayBuffer
import scala.util.control.NonFatal

import org.apache.rocketmq.client.impl.factory.MQClientInstance
import org.apache.rocketmq.common.sysflag.MessageSysFlag
import org.apache.rocketmq.remoting.InvokeCallback
import org.apache.rocketmq.remoting.netty.ResponseFuture
import org.apache.rocketmq.remoting.protocol.{RemotingCommand, RequestCode}
import org.apache.rocketmq.remoting.protocol.header.EndTransactionRequestHeader

import org.apache.spark.sql.rocketmq.common.RocketMQRetry
import org.apache.spark.sql.rocketmq.transaction.RocketMQTransactionEnd._

/**
 * One call of [[RocketMQTransactionEnd.decide]], in steps: every half message is queued on its
 * broker group's lane (rows with a sharding key in a chain per task and queue); then, until none is
 * unresolved, the ready ones are sent, the answers handled as they come, and commits that got no
 * answer looked up in the brokers' index. A message ends confirmed, or left to the broker's
 * check-back as refused, uncertain (no answer) or unsent (its lane given up, or past its task's
 * `sendBy` time). `brokers` finds the masters and carries the requests; `commitState` (None: no
 * look-ups) asks a broker's index whether a commit landed, as [[RocketMQMessageIndex.commitState]].
 */
private[transaction] final class RocketMQTransactionEndRun(
    brokers: RocketMQTransactionEndRun.Brokers, group: String,
    tasks: IndexedSeq[RocketMQTaskHalfMessages], commit: Boolean, retryTimeoutMs: Long,
    sendBy: RocketMQTaskHalfMessages => Long,
    commitState: Option[(String, String, Long) => Option[Boolean]], window: Int) {

  // What became of each task's messages so far.
  private val confirmed, refused, uncertain, unsent, foundInIndex = new Array[Int](tasks.size)
  private val left, leftUnanswered = tasks.map(_ => ArrayBuffer[Int]())
  private var unresolved = 0

  private val deadlines = tasks.map(sendBy)
  private val lanes = new java.util.LinkedHashMap[String, Lane]()
  private val answers = new LinkedBlockingQueue[Answer]()
  /** Commits that went out without an answer (see `lookUpUnanswered`). */
  private val unanswered = new RocketMQUnansweredCommits[Item](retryTimeoutMs, MissesPerRound)
  private var lastLookUpNs = 0L

  def run(): IndexedSeq[Ended] = {
    queueAll()
    if (unresolved == 0) return tasks.map(_ => Ended(0, 0, 0, 0))
    lanes.values().forEach(findAddress)
    while (unresolved > 0) {
      lookUpUnanswered()
      val nextResumeNs = sendReady()
      if (unresolved > 0) handleAnswers(nextResumeNs)
    }
    tasks.indices.map(t =>
      Ended(confirmed(t), refused(t), uncertain(t), unsent(t), left(t).toSeq,
        leftUnanswered(t).toSeq, foundInIndex(t)))
  }

  /**
   * Step 1: each message on its broker group's lane; a chain's first row only, the others follow
   * it.
   */
  private def queueAll(): Unit = tasks.zipWithIndex.foreach { case (task, t) =>
    val (ordered, free) = task.messages.partition(_.keyed)
    free.foreach(m => laneOf(task, m).ready.add(new Item(t, m, null)))
    ordered.groupBy(m => (m.endpoint, m.queueId)).values.foreach { rows =>
      val chain = new Chain(new Array[Item](rows.size))
      rows.sortBy(_.seq).zipWithIndex.foreach { case (m, i) =>
        chain.items(i) = new Item(t, m, chain)
      }
      laneOf(task, rows.head).ready.add(chain.items(0))
    }
    unresolved += task.messages.size
  }

  /**
   * Step 2: sends what each lane not paused has ready, up to its window; when the next pause ends.
   */
  private def sendReady(): Long = {
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
    nextResumeNs
  }

  /** Step 3: the answers that came, waiting for the first until `untilNs` at most. */
  private def handleAnswers(untilNs: Long): Unit = {
    var answer =
      answers.poll(math.max(1L, (untilNs - System.nanoTime()) / 1000000L), TimeUnit.MILLISECONDS)
    while (answer != null) {
      handle(answer)
      answer = answers.poll()
    }
  }

  /** `item` is left to the broker's check-back, counted in `kind`. */
  private def leave(item: Item, kind: Array[Int]): Unit = {
    kind(item.task) += 1
    left(item.task) += item.message.seq
    if (kind eq uncertain) leftUnanswered(item.task) += item.message.seq
    unresolved -= 1
  }

  private def laneOf(task: RocketMQTaskHalfMessages, message: RocketMQHalfMessage): Lane = {
    val broker = task.endpoints(message.endpoint)._2
    lanes.computeIfAbsent(broker,
      _ => new Lane(broker, tasks.flatMap(_.endpoints).filter(_._2 == broker).map(_._1).distinct))
  }

  private def findAddress(lane: Lane): Unit =
    lane.address = brokers.masterOf(lane.broker, lane.topics)

  private def send(lane: Lane, item: Item): Unit = {
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
      if (commit) MessageSysFlag.TRANSACTION_COMMIT_TYPE
      else MessageSysFlag.TRANSACTION_ROLLBACK_TYPE)
    header.setFromTransactionCheck(false)
    header.setMsgId(s"${task.run}/${task.epoch}/${task.partition}/${task.attempt}")
    header.setBrokerName(lane.broker)
    val callback = new InvokeCallback {
      override def operationComplete(future: ResponseFuture): Unit = ()
      override def operationSucceed(response: RemotingCommand): Unit =
        answers.add(Answer(item, outcomeOf(response)))
      override def operationFail(e: Throwable): Unit = answers.add(Answer(item, outcomeOf(e)))
    }
    try {
      brokers.send(lane.address,
        RemotingCommand.createRequestCommand(RequestCode.END_TRANSACTION, header), AnswerTimeoutMs,
        callback)
    } catch { case NonFatal(e) => callback.operationFail(e) }
  }

  /** The rows after `item` in its chain (or none), now left to the broker. */
  private def dropRestOfChain(item: Item): Unit = if (item.chain != null) {
    val chain = item.chain
    (chain.next + 1 until chain.items.length).foreach(i => leave(chain.items(i), unsent))
    chain.next = chain.items.length
  }

  private def giveUp(lane: Lane): Unit = {
    lane.gaveUp = true
    while (!lane.ready.isEmpty) {
      val item = lane.ready.poll()
      leave(item, unsent)
      dropRestOfChain(item)
    }
  }

  /** The next row of `item`'s chain is ready (unless its broker group was given up). */
  private def advance(lane: Lane, item: Item): Unit = if (item.chain != null) {
    item.chain.next += 1
    if (item.chain.left > 0) {
      val next = item.chain.items(item.chain.next)
      if (lane.gaveUp) { leave(next, unsent); dropRestOfChain(next) }
      else lane.ready.add(next)
    }
  }

  /** `item` was not taken: it goes first again, after a pause, while the retry budget lasts. */
  private def notTaken(lane: Lane, item: Item): Unit = {
    lane.ready.addFirst(item)
    pause(lane, tasks(item.task).epoch)
  }

  /**
   * A request to `lane` failed: no new one goes there for a pause (unless it is paused already),
   * growing while the failures last; once the retry budget is spent, what is left there goes to the
   * broker.
   */
  private def pause(lane: Lane, epoch: Long): Unit =
    if (lane.resumeAtNs <= System.nanoTime()) {
      if (lane.budget == null) lane.budget = new RocketMQRetry.Budget(retryTimeoutMs)
      lane.budget.nextPauseMs() match {
        case Some(pauseMs) =>
          if (lane.budget.retries == 1 || lane.budget.retries % 10 == 0) {
            log.warn(
              s"Epoch $epoch: broker group ${lane.broker} does not answer END_TRANSACTION " +
                "requests " +
                s"now (${lane.budget.elapsedMs} ms of retryTimeoutMs $retryTimeoutMs); asking " +
                s"again in $pauseMs ms")
          }
          lane.resumeAtNs = System.nanoTime() + pauseMs * 1000000L
          lane.address = null
          lane.probing = true
        case None => if (lane.inFlight == 0) giveUp(lane) else lane.resumeAtNs = Long.MaxValue
      }
    }

  private def handle(answer: Answer): Unit = {
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
        pause(lane,
          tasks(item.task).epoch) // a broker that lets requests time out: do not pile more on it
        if (commitState.isEmpty) { leave(item, uncertain); dropRestOfChain(item) }
        else unanswered.add(item, System.nanoTime())
      case _ => notTaken(lane, item)
    }
    if (lane.resumeAtNs == Long.MaxValue && lane.inFlight == 0) giveUp(lane)
  }

  /**
   * Looks up the commits that went out without an answer, at most once a second (see the class
   * doc).
   */
  private def lookUpUnanswered(): Unit =
    if (!unanswered.isEmpty && System.nanoTime() - lastLookUpNs > LookUpEveryNs) {
      lastLookUpNs = System.nanoTime()
      unanswered.round(lastLookUpNs) { item =>
        val (topic, broker) = tasks(item.task).endpoints(item.message.endpoint)
        commitState.get(topic, broker, item.message.commitLogOffset)
      }(found = { item =>
          confirmed(item.task) += 1
          foundInIndex(item.task) += 1
          unresolved -= 1
          advance(laneOf(tasks(item.task), item.message), item)
        },
        left = { item =>
          leave(item, uncertain)
          dropRestOfChain(item)
        })
    }
}

private[transaction] object RocketMQTransactionEndRun {

  /** What a run needs of the brokers. */
  trait Brokers {

    /**
     * The address of broker group `broker`'s master, with the routes of `topics` looked up afresh;
     * null when none is known.
     */
    def masterOf(broker: String, topics: Seq[String]): String

    /** Sends `request` to `address`; `callback` hears its answer or its failure. */
    def send(address: String, request: RemotingCommand, timeoutMs: Long,
        callback: InvokeCallback): Unit
  }

  /** The brokers as the started client instance `client` reaches them. */
  def brokersOf(client: MQClientInstance): Brokers = new Brokers {
    private lazy val remoting = client.getMQClientAPIImpl.getRemotingClient

    override def masterOf(broker: String, topics: Seq[String]): String = {
      topics.foreach { topic =>
        try client.updateTopicRouteInfoFromNameServer(topic)
        catch { case NonFatal(e) => log.warn(s"No route for topic $topic: $e") }
      }
      client.findBrokerAddressInPublish(broker)
    }

    override def send(address: String, request: RemotingCommand, timeoutMs: Long,
        callback: InvokeCallback): Unit =
      remoting.invokeAsync(address, request, timeoutMs, callback)
  }
}
