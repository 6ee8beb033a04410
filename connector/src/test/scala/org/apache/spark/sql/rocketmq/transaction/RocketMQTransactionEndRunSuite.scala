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

import scala.collection.mutable.ArrayBuffer

import org.apache.rocketmq.common.sysflag.MessageSysFlag
import org.apache.rocketmq.remoting.InvokeCallback
import org.apache.rocketmq.remoting.exception.{RemotingConnectException, RemotingTimeoutException}
import org.apache.rocketmq.remoting.protocol.{RemotingCommand, RemotingSysResponseCode}
import org.apache.rocketmq.remoting.protocol.header.EndTransactionRequestHeader
import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.rocketmq.transaction.RocketMQTransactionEnd.Ended

/**
 * The steps of one END_TRANSACTION run against brokers played in memory: what each message ends as,
 * what is asked of which broker in which order, and what the epoch's decision log then records (as
 * the coordinator records it).
 */
class RocketMQTransactionEndRunSuite extends AnyFunSuite {

  private val Group = "spark-rocketmq-txn-q"
  private val Run = "1700000000000-abcd1234"
  private val Epoch = 3L

  /** Half messages of `partition` on (topic out, broker group) `endpoints`. */
  private def task(partition: Int, endpoints: IndexedSeq[String],
      messages: RocketMQHalfMessage*): RocketMQTaskHalfMessages =
    RocketMQTaskHalfMessages(Run, Epoch, partition, attempt = 10L + partition,
      System.currentTimeMillis(), endpoints.map("out" -> _), messages.toIndexedSeq)

  /** A message on `endpoint`'s queue `queue`; its commit-log offset names it in requests. */
  private def message(endpoint: Int, queue: Int, offset: Long, seq: Int, keyed: Boolean = false) =
    RocketMQHalfMessage(endpoint, queue, offset, commitLogOffset = offset * 100, seq, keyed)

  /**
   * Brokers whose masters are `masters` (a group missing has none), answering each request as
   * `answer` says from the request and how often its message was asked before: a response code, or
   * a failure.
   */
  private final class Brokers(answer: (EndTransactionRequestHeader, Int) => Either[Throwable, Int],
      masters: Map[String, String] = Map("broker-a" -> "a:40911", "broker-b" -> "b:40912"))
    extends RocketMQTransactionEndRun.Brokers {
    val sent = ArrayBuffer[(String, EndTransactionRequestHeader)]()

    override def masterOf(broker: String, topics: Seq[String]): String = {
      assert(topics === Seq("out"))
      masters.get(broker).orNull
    }

    override def send(address: String, request: RemotingCommand, timeoutMs: Long,
        callback: InvokeCallback): Unit = {
      val header = request.readCustomHeader().asInstanceOf[EndTransactionRequestHeader]
      val before =
        sent.count(_._2.getCommitLogOffset.longValue == header.getCommitLogOffset.longValue)
      sent += address -> header
      answer(header, before) match {
        case Right(code) =>
          callback.operationSucceed(RemotingCommand.createResponseCommand(code, ""))
        case Left(e) => callback.operationFail(e)
      }
    }

    /** The messages asked about, by commit-log offset, in the order asked. */
    def asked: Seq[Long] = sent.map(_._2.getCommitLogOffset.longValue).toSeq
  }

  private val ok: (EndTransactionRequestHeader, Int) => Either[Throwable, Int] =
    (_, _) => Right(RemotingSysResponseCode.SUCCESS)

  private def run(brokers: Brokers, tasks: IndexedSeq[RocketMQTaskHalfMessages],
      commit: Boolean = true, retryTimeoutMs: Long = 5000L,
      sendBy: RocketMQTaskHalfMessages => Long = _ => Long.MaxValue,
      commitState: Option[(String, String, Long) => Option[Boolean]] = None): IndexedSeq[Ended] =
    new RocketMQTransactionEndRun(brokers, Group, tasks, commit, retryTimeoutMs, sendBy,
      commitState, window = 4).run()

  /** Decides the epoch in `log`, ends it, and records the partitions seen all committed. */
  private def decideAndEnd(log: RocketMQDecisionLog, tasks: IndexedSeq[RocketMQTaskHalfMessages])(
      end: => IndexedSeq[Ended]): IndexedSeq[Ended] = {
    val proposed = RocketMQEpochDecision(Run, tasks.map(t => t.partition -> t.attempt).toMap)
    assert(log.decide(Epoch, proposed) === proposed)
    val ended = end
    log.markCommitted(Epoch,
      tasks.zip(ended).collect {
        case (t, e) if e.allConfirmed =>
          t.partition
      }.toSet)
    ended
  }

  test("every message confirmed: each asked of its broker group's master, a queue's keyed rows " +
    "one after another in their order; the decision log has every partition committed") {
    val keyed = Seq(4, 2, 3).map(seq => message(1, 0, 20L + seq, seq, keyed = true))
    val tasks = IndexedSeq(
      task(0, IndexedSeq("broker-a", "broker-b"),
        Seq(message(0, 1, 1, 0), message(0, 2, 2, 1)) ++ keyed: _*),
      task(1, IndexedSeq("broker-a"), (0 until 9).map(i => message(0, i % 4, 40L + i, i)): _*))
    val brokers = new Brokers(ok)
    val log = new RocketMQDecisionLog.InMemory
    val ended = decideAndEnd(log, tasks)(run(brokers, tasks))
    assert(ended === IndexedSeq(Ended(5, 0, 0, 0), Ended(9, 0, 0, 0)))
    assert(log.committed(Epoch) === Set(0, 1))
    assert(brokers.sent.size === 14 && brokers.asked.distinct.size === 14, "a message asked twice")
    brokers.sent.foreach { case (address, header) =>
      assert(header.getProducerGroup === Group && header.getTopic === "out")
      assert(header.getCommitOrRollback === MessageSysFlag.TRANSACTION_COMMIT_TYPE)
      assert(!header.getFromTransactionCheck)
      val onB = header.getBrokerName == "broker-b"
      assert(address === (if (onB) "b:40912" else "a:40911"))
      assert(onB ===
        (header.getCommitLogOffset.longValue >= 2200 && header.getCommitLogOffset.longValue < 2500))
    }
    assert(brokers.sent.filter(_._2.getBrokerName == "broker-b").map(
      _._2.getCommitLogOffset.longValue) ===
      Seq(2200L, 2300L, 2400L))
    assert(brokers.sent.head._2.getMsgId === s"$Run/$Epoch/0/10")
  }

  test("a refused commit, and a broker group without a master once the retries are spent, are " +
    "left to the check-back; the decision log leaves their partition uncommitted") {
    val tasks = IndexedSeq(
      task(0, IndexedSeq("broker-a"), message(0, 0, 1, 0), message(0, 0, 2, 1)),
      task(1, IndexedSeq("broker-b"), message(0, 0, 3, 0), message(0, 0, 4, 1, keyed = true),
        message(0, 0, 5, 2, keyed = true)))
    val brokers = new Brokers((header, _) =>
        Right(if (header.getCommitLogOffset.longValue == 200) RemotingSysResponseCode.SYSTEM_ERROR
        else RemotingSysResponseCode.SUCCESS), masters = Map("broker-a" -> "a:40911"))
    val log = new RocketMQDecisionLog.InMemory
    val ended = decideAndEnd(log, tasks)(run(brokers, tasks, retryTimeoutMs = 300L))
    assert(ended(0) === Ended(1, 1, 0, 0, left = Seq(1)))
    assert(ended(1).copy(left = ended(1).left.sorted) === Ended(0, 0, 0, 3, left = Seq(0, 1, 2)))
    assert(log.committed(Epoch) === Set.empty)
    assert(brokers.asked === Seq(100L, 200L), "a refused commit was asked again")
  }

  test("a broker that was busy, or had no connection, is asked again until it takes the commit") {
    val tasks = IndexedSeq(task(0, IndexedSeq("broker-a"), message(0, 0, 1, 0, keyed = true),
      message(0, 0, 2, 1, keyed = true), message(0, 1, 3, 2)))
    val brokers = new Brokers((header, before) =>
      (header.getCommitLogOffset.longValue, before) match {
        case (100L, 0) => Right(RemotingSysResponseCode.SYSTEM_BUSY)
        case (100L, 1) => Left(new RemotingConnectException("a:40911"))
        case _ => Right(RemotingSysResponseCode.SUCCESS)
      })
    val log = new RocketMQDecisionLog.InMemory
    val ended = decideAndEnd(log, tasks)(run(brokers, tasks))
    assert(ended === IndexedSeq(Ended(3, 0, 0, 0)))
    assert(log.committed(Epoch) === Set(0))
    assert(brokers.asked.count(_ == 100L) === 3)
    // The row after it in its queue waited for it.
    assert(brokers.asked.lastIndexOf(100L) < brokers.asked.indexOf(200L))
  }

  test("a commit whose answer never came is never asked again: it is looked up in the broker's " +
    "index until found, the rows after it in its queue waiting") {
    val tasks = IndexedSeq(task(0, IndexedSeq("broker-a"),
      (0 until 3).map(seq => message(0, 0, 1L + seq, seq, keyed = true)): _*))
    val brokers = new Brokers((header, _) =>
      if (header.getCommitLogOffset.longValue == 100)
        Left(new RemotingTimeoutException("no answer"))
      else Right(RemotingSysResponseCode.SUCCESS))
    val lookUps = ArrayBuffer[(String, String, Long)]()
    val lookUp = (topic: String, broker: String, offset: Long) => {
      lookUps += ((topic, broker, offset))
      Some(lookUps.size > 1) // found at the second look
    }
    val log = new RocketMQDecisionLog.InMemory
    val ended = decideAndEnd(log, tasks)(run(brokers, tasks, commitState = Some(lookUp)))
    assert(ended === IndexedSeq(Ended(3, 0, 0, 0, foundInIndex = 1)))
    assert(log.committed(Epoch) === Set(0))
    assert(brokers.asked === Seq(100L, 200L, 300L))
    assert(lookUps === Seq(("out", "broker-a", 100L), ("out", "broker-a", 100L)))
  }

  test("without look-ups, a commit whose answer never came is left uncertain and the rows after " +
    "it in its queue unsent") {
    val tasks = IndexedSeq(task(0, IndexedSeq("broker-a"),
      (0 until 3).map(seq => message(0, 0, 1L + seq, seq, keyed = true)): _*))
    val brokers = new Brokers((_, _) => Left(new RemotingTimeoutException("no answer")))
    val log = new RocketMQDecisionLog.InMemory
    val ended = decideAndEnd(log, tasks)(run(brokers, tasks))
    assert(ended === IndexedSeq(Ended(0, 0, 1, 2, left = Seq(0, 1, 2), unanswered = Seq(0))))
    assert(log.committed(Epoch) === Set.empty && brokers.asked === Seq(100L))
  }

  test("a task past its sendBy time asks nothing: its messages are left unsent") {
    val tasks = IndexedSeq(task(0, IndexedSeq("broker-a"), message(0, 0, 1, 0),
      message(0, 1, 2, 1, keyed = true), message(0, 1, 3, 2, keyed = true)),
      task(1, IndexedSeq("broker-a"), message(0, 0, 4, 0)))
    val brokers = new Brokers(ok)
    val ended = run(brokers, tasks, sendBy = t => if (t.partition == 0) 0L else Long.MaxValue)
    assert(ended(0).copy(left = ended(0).left.sorted) === Ended(0, 0, 0, 3, left = Seq(0, 1, 2)))
    assert(ended(1) === Ended(1, 0, 0, 0) && brokers.asked === Seq(400L))
  }

  test("a roll back whose answer never came is asked again: a second one changes nothing") {
    val tasks = IndexedSeq(task(0, IndexedSeq("broker-a"), message(0, 0, 1, 0)))
    val brokers = new Brokers((_, before) =>
      if (before == 0) Left(new RemotingTimeoutException("no answer"))
      else Right(RemotingSysResponseCode.SUCCESS))
    assert(run(brokers, tasks, commit = false) === IndexedSeq(Ended(1, 0, 0, 0)))
    assert(brokers.asked === Seq(100L, 100L))
    assert(brokers.sent.forall(
      _._2.getCommitOrRollback == MessageSysFlag.TRANSACTION_ROLLBACK_TYPE))
  }

  test("no half messages: nothing is asked") {
    val brokers = new Brokers(ok)
    assert(run(brokers, IndexedSeq(task(0, IndexedSeq("broker-a")))) === IndexedSeq(
      Ended(0, 0, 0, 0)))
    assert(brokers.sent.isEmpty)
  }
}
