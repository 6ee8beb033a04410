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

import java.io.Closeable
import java.util.concurrent.{
  ArrayBlockingQueue, Executors, ExecutorService, ThreadFactory, ThreadPoolExecutor, TimeUnit
}

import scala.util.control.NonFatal

import org.apache.rocketmq.client.producer.{TransactionListener, TransactionMQProducer}

import org.slf4j.LoggerFactory

import org.apache.spark.sql.connector.write.WriterCommitMessage
import org.apache.spark.sql.rocketmq.client.RocketMQClientCache
import org.apache.spark.sql.rocketmq.common.RocketMQConnection
import org.apache.spark.sql.rocketmq.options.{RocketMQOptionKind, RocketMQOptions}
import org.apache.spark.sql.rocketmq.producer.RocketMQTransactionScope

/**
 * The driver's side of an exactly-once write. Spark commits an epoch (a micro-batch, or the one
 * epoch of a batch job) with the commit messages of its tasks, one attempt per partition; the
 * coordinator then
 *   1. records the decision, which attempts the epoch keeps ([[RocketMQDecisionLog]]), unless the
 *      epoch has one already: then this is a copy Spark ran again after a restart, and all of it is
 *      rolled back;
 * 2. commits the kept half messages itself (END_TRANSACTION), for tasks whose first send is less
 *    than half the transaction timeout old, and records the partitions whose commits the broker all
 *    confirmed. The rest, and whatever a crash left undecided, the broker asks about once their
 *    check immunity (the transaction timeout) is over. It runs a producer of the write's
 *    transaction group that answers those questions from the decisions: commit a message of an
 *    attempt its epoch kept, unless the driver committed that partition itself (the broker then
 *    asks about a copy); roll back one of an attempt it did not keep, or of an earlier run that
 *    never decided its epoch; unknown while this run may still decide.
 */
private[rocketmq] final class RocketMQTransactionCoordinator(
    settings: RocketMQCoordinatorSettings, scope: RocketMQTransactionScope,
    decisions: RocketMQDecisionLog,
    waitForCheckBacks: Boolean = false)
  extends Closeable {

  import RocketMQTransactionCoordinator._

  /** Answers the broker's check-backs; looks messages up through the coordinator's own client. */
  private val index = new RocketMQMessageIndex(() => client, settings.requestTimeoutMs)
  private val check =
    new RocketMQTransactionCheck(scope, decisions, index, settings.connection.onBroker,
      (origin, message, answer) =>
        if (waitForCheckBacks) checkBacks.answered(origin, message, answer))

  /**
   * A batch write's messages left to the broker's check-back, awaited until each is in its topic.
   */
  private lazy val checkBacks: RocketMQCheckBackWait =
    new RocketMQCheckBackWait(scope, index, settings)

  private val checkExecutor = newCheckExecutor(scope.run)
  private val callbackExecutor = newCallbackExecutor(scope.run)
  private val producer: TransactionMQProducer =
    startProducer(scope.group, settings.connection, check, checkExecutor, callbackExecutor)

  private def client = producer.getDefaultMQProducerImpl.getMqClientFactory

  /** Keeps every group's master, one elected in a failover too, knowing this producer. */
  private val registration =
    new RocketMQGroupRegistration(() => client,
      settings.topic.map(settings.connection.onBroker).toSeq, settings.requestTimeoutMs, scope.run)

  private val masters: Map[String, String] =
    try {
      val found = registration.register()
      registration.start()
      found
    } catch {
      case NonFatal(e) =>
        log.warn(s"Could not register transaction group ${scope.group} yet: $e")
        Map.empty
    }

  /**
   * How the brokers check back (the group that gives half messages up soonest): a transaction
   * timeout must leave them time to ask, or rows left to them are given up unasked. Checked before
   * anything is sent.
   */
  val brokerChecks: RocketMQBrokerCheckSettings =
    try {
      val strictest =
        RocketMQBrokerCheckSettings.strictest(client, masters, settings.statedBrokerChecks,
          settings.requestTimeoutMs)
          .getOrElse(RocketMQBrokerCheckSettings.defaults("(every group)"))
      strictest.requireCheckBacks(RocketMQOptions.TransactionTimeoutOption.key,
        RocketMQOptionKind.TransactionTimeout.render(scope.timeoutMs), scope.timeoutMs)
      strictest
    } catch {
      case NonFatal(e) =>
        registration.close()
        producer.shutdown()
        checkExecutor.shutdownNow()
        callbackExecutor.shutdownNow()
        throw e
    }

  /** Spark commits `epoch`: decide it, then commit what it keeps (or roll back a second copy). */
  def commit(epoch: Long, messages: Array[WriterCommitMessage]): Unit = {
    val tasks = messages.toSeq.flatMap(m => RocketMQTaskHalfMessages.fromCommitMessage(m))
    val proposed = RocketMQEpochDecision(scope.run, tasks.map(t => t.partition -> t.attempt).toMap)
    val decision = decisions.decide(epoch, proposed)
    if (decision != proposed) {
      log.warn(
        s"Epoch $epoch was committed before (run ${decision.run}); rolling back this run's copy " +
          s"of it (${tasks.map(_.messages.size).sum} messages)")
      rollBack(tasks)
      return
    }
    val started = System.nanoTime()
    // The driver commits a task's messages while the broker still takes its decisions: not past
    // their check immunity (the transaction timeout after the first send), with a margin for
    // requests under way then.
    val now = System.currentTimeMillis()
    val (direct, later) =
      tasks.partition(t => t.firstSendMs < 0 || now - t.firstSendMs < scope.timeoutMs / 2)
    val ended =
      RocketMQTransactionEnd.decide(client, scope.group, direct.toIndexedSeq, commit = true,
        settings.retryTimeoutMs,
        sendBy = t =>
          if (t.firstSendMs < 0) Long.MaxValue
          else t.firstSendMs +
            scope.timeoutMs - commitMarginMs(scope.timeoutMs), index = index)
    decisions.markCommitted(epoch,
      direct.zip(ended).collect { case (t, e) if e.allConfirmed => t.partition }.toSet)
    val firstSends = tasks.map(_.firstSendMs).filter(_ >= 0)
    lastEpoch = EpochCommit(epoch, tasks.map(_.messages.size).sum,
      later.map(_.messages.size).sum + ended.map(_.leftToBroker).sum,
      if (firstSends.isEmpty) 0L else firstSends.min, (System.nanoTime() - started) / 1000000L,
      ended.map(_.foundInIndex).sum)
    lastInThisDriver = lastEpoch
    if (lastEpoch.leftToBroker > 0) {
      log.warn(s"Epoch $epoch: ${lastEpoch.leftToBroker} of ${lastEpoch.messages} half messages " +
        "are left for the " +
        s"broker to commit when it checks back (${ended.map(_.refused).sum} refused past the " +
        s"transaction timeout, ${ended.map(_.uncertain).sum} without an answer, " +
        s"${ended.map(_.unsent).sum + later.map(_.messages.size).sum}" +
        s" not asked). ${brokerWindow(lastEpoch.firstSendMs)}")
      // A batch job has no later run to answer the broker: it waits for the check-backs itself.
      if (waitForCheckBacks) {
        /**
         * The half messages of the tasks committed directly whose places `of` their outcome names.
         */
        def messages(of: RocketMQTransactionEnd.Ended => Seq[Int]) =
          direct.zip(ended).flatMap { case (t, e) =>
            val wanted = of(e).toSet
            t.messages.filter(m => wanted.contains(m.seq)).map(t -> _)
          }
        checkBacks.await(epoch, messages(_.left) ++ later.flatMap(t => t.messages.map(t -> _)),
          messages(_.unanswered), lastEpoch.firstSendMs + giveUpAfterMs + brokerChecks.intervalMs)
      }
    }
  }

  /**
   * When the broker starts asking about half messages first sent at `firstSendMs`, and when (with
   * its default check settings) it gives them up: what a user must know about rows left to the
   * check-back.
   */
  private def brokerWindow(firstSendMs: Long): String =
    "The broker checks back from " +
      s"${java.time.Instant.ofEpochMilli(firstSendMs + scope.timeoutMs)} (the " +
      s"transaction timeout, ${scope.timeoutMs} ms, after the first send); a query of this " +
      "checkpoint must be running to answer before about " +
      s"${java.time.Instant.ofEpochMilli(firstSendMs + giveUpAfterMs)}, when broker " +
      s"group ${brokerChecks.broker} gives the messages up (${brokerChecks.maxChecks} check " +
      s"rounds, one each ${brokerChecks.intervalMs / 1000} s, counted from the send)"

  /** How long after a half message's first send the brokers give it up. */
  private def giveUpAfterMs: Long = brokerChecks.lifeMs

  /** The last epoch this coordinator committed: its size, and what it left to the broker. */
  @volatile var lastEpoch: EpochCommit = EpochCommit(-1L, 0, 0, 0L, 0L)

  /**
   * Epochs an earlier run decided but did not see all committed, still within the broker's check
   * window: found once, when the run starts; this run answers the broker about them.
   */
  val leftByEarlierRuns: Seq[RocketMQDecisionLog.Unconfirmed] =
    try {
      val found =
        decisions.unconfirmed(System.currentTimeMillis() - giveUpAfterMs).filter(_.run != scope.run)
      found.foreach { e =>
        log.warn(s"Epoch ${e.epoch} of an earlier run (${e.run}) was decided at " +
          s"${java.time.Instant.ofEpochMilli(e.decidedMs)}, but its driver did not see the " +
          "commits of partitions " +
          s"${e.partitions.toSeq.sorted.mkString(", ")} confirmed: the broker commits what is " +
          "missing when it checks " +
          s"back, and this run answers it. ${brokerWindow(e.decidedMs - scope.timeoutMs / 2)}")
      }
      found
    } catch {
      case NonFatal(e) =>
        log.warn(s"Could not look for epochs earlier runs left undecided: $e"); Nil
    }

  /** For the streaming query's progress (the sink's metrics), as text. */
  def progressMetrics: Map[String, String] = {
    val (commits, rollBacks, unknowns, _) = check.summary
    Map("epochHalfMessages" -> lastEpoch.messages.toString,
      "epochCommitMs" -> lastEpoch.commitMs.toString,
      "epochLeftToCheckBack" -> lastEpoch.leftToBroker.toString,
      "checkBackFrom" ->
        (if (lastEpoch.leftToBroker == 0) ""
         else
           java.time.Instant.ofEpochMilli(lastEpoch.firstSendMs + scope.timeoutMs).toString),
      "epochsLeftByEarlierRuns" -> leftByEarlierRuns.size.toString,
      "brokerChecks" ->
        s"${brokerChecks.source.name}: ${brokerChecks.maxChecks} x ${brokerChecks.intervalMs} ms",
      "checkBacksCommitted" -> commits.toString, "checkBacksRolledBack" -> rollBacks.toString,
      "checkBacksUnknown" -> unknowns.toString)
  }

  /** Spark aborts `epoch`: roll back what its tasks reported (the others the broker asks about). */
  def abort(epoch: Long, messages: Array[WriterCommitMessage]): Unit =
    rollBack(
      messages.toSeq.flatMap(m => Option(m).flatMap(RocketMQTaskHalfMessages.fromCommitMessage)))

  private def rollBack(tasks: Seq[RocketMQTaskHalfMessages]): Unit =
    RocketMQTransactionEnd.decide(client, scope.group, tasks.toIndexedSeq, commit = false,
      settings.retryTimeoutMs)

  override def close(): Unit = {
    registration.close()
    try producer.shutdown()
    finally {
      checkExecutor.shutdownNow()
      callbackExecutor.shutdownNow()
    }
  }
}

private[rocketmq] object RocketMQTransactionCoordinator {
  private val log = LoggerFactory.getLogger(classOf[RocketMQTransactionCoordinator])

  /**
   * One committed epoch: its half messages, how many of them the driver left to the broker's
   * check-back, the first send of its tasks, how long the driver's commit took, and how many
   * commits without an answer it found done in the brokers' index.
   */
  final case class EpochCommit(epoch: Long, messages: Int, leftToBroker: Int, firstSendMs: Long,
      commitMs: Long, foundInIndex: Int = 0)

  /**
   * The epoch committed last by any coordinator of this driver (the bench reads the commit's time
   * here).
   */
  @volatile private[rocketmq] var lastInThisDriver: EpochCommit = EpochCommit(-1L, 0, 0, 0L, 0L)

  /**
   * Check-backs come one request per half message: an epoch left to the broker is thousands at
   * once, and the client's default (one thread, 2,000 waiting, the rest dropped) would let the
   * broker count checks never answered, until it gives the messages up.
   */
  private def newCheckExecutor(run: String): ThreadPoolExecutor =
    new ThreadPoolExecutor(CheckThreads, CheckThreads, 60L, TimeUnit.SECONDS,
      new ArrayBlockingQueue[Runnable](CheckQueue),
      daemonThreads(s"rocketmq-transaction-check-$run"),
      // A full queue holds the client's request thread up until a check-back can wait: none is
      // dropped.
      (r: Runnable, executor: ThreadPoolExecutor) =>
        if (!executor.isShutdown) executor.getQueue.put(r))

  /**
   * Where the answers to the client's own requests are handed over (each hand-over is a queue
   * insert).
   */
  private[rocketmq] def newCallbackExecutor(run: String): ExecutorService =
    Executors.newFixedThreadPool(CallbackThreads,
      daemonThreads(s"rocketmq-transaction-answers-$run"))

  private[transaction] def daemonThreads(name: String): ThreadFactory = (r: Runnable) => {
    val thread = new Thread(r, name)
    thread.setDaemon(true)
    thread
  }

  /**
   * The producer of transaction group `group`, on a client of its own: `check` answers the broker's
   * check-backs on `checkExecutor`, and the answers to every request of the client (its queries,
   * route updates and commits, synchronous ones too) are handed over on `callbackExecutor`. The
   * client's default for those is the pool that also takes the broker's check-back requests in,
   * which a full `checkExecutor` holds up: every look-up and commit would then time out while the
   * broker asks about thousands of messages.
   */
  private[rocketmq] def startProducer(group: String, connection: RocketMQConnection,
      check: TransactionListener,
      checkExecutor: ExecutorService, callbackExecutor: ExecutorService): TransactionMQProducer = {
    val producer = new TransactionMQProducer(group, connection.rpcHook)
    connection.configure(producer)
    producer.setInstanceName(RocketMQClientCache.uniqueInstanceName("spark-rocketmq-transactions"))
    producer.setTransactionListener(check)
    producer.setExecutorService(checkExecutor)
    producer.start()
    producer.setCallbackExecutor(callbackExecutor)
    producer
  }

  /**
   * Threads answering check-backs, and check-backs waiting for one (about 1.5 KiB each with a 1 KiB
   * body).
   */
  private val CheckThreads = 4
  private val CheckQueue = 10000
  /**
   * Threads handing over the answers to every request of the transaction client (each hand-over is
   * a queue insert).
   */
  private val CallbackThreads = 2

  /**
   * The driver sends no commit in the last quarter (at most the last minute) of a message's check
   * immunity: a request still under way when the immunity ends could meet the broker's check-back,
   * and the message would be committed twice.
   */
  private def commitMarginMs(timeoutMs: Long): Long = math.min(60000L, timeoutMs / 4)
}
