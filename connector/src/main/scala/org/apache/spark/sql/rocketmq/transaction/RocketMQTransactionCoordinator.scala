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
import java.util.concurrent.{ExecutorService, Executors}

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.rocketmq.client.producer.{LocalTransactionState, TransactionListener, TransactionMQProducer}
import org.apache.rocketmq.common.message.{Message, MessageExt}

import org.slf4j.LoggerFactory

import org.apache.spark.sql.connector.write.WriterCommitMessage
import org.apache.spark.sql.rocketmq.RocketMQClientCache
import org.apache.spark.sql.rocketmq.producer.RocketMQWriteSettings

/**
 * The driver's side of an exactly-once write. Spark commits an epoch (a micro-batch, or the one
 * epoch of a batch job) with the commit messages of its tasks, one attempt per partition; the
 * coordinator then
 *   1. records the decision, which attempts the epoch keeps ([[RocketMQDecisionLog]]), unless the
 *      epoch has one already: then this is a copy Spark ran again after a restart, and all of it is
 *      rolled back;
 *   2. commits the kept half messages itself (END_TRANSACTION), for tasks whose first send is less
 *      than half the transaction timeout old, and records the partitions whose commits the broker
 *      all confirmed. The rest, and whatever a crash left undecided, the broker asks about once their
 *      check immunity (the transaction timeout) is over.
 * It runs a producer of the write's transaction group that answers those questions from the
 * decisions: commit a message of an attempt its epoch kept, unless the driver committed that
 * partition itself (the broker then asks about a copy); roll back one of an attempt it did not keep,
 * or of an earlier run that never decided its epoch; unknown while this run may still decide.
 */
private[rocketmq] final class RocketMQTransactionCoordinator(
    settings: RocketMQWriteSettings, scope: RocketMQTransactionScope, decisions: RocketMQDecisionLog)
  extends Closeable {

  import RocketMQTransactionCoordinator._

  private val pool: ExecutorService = Executors.newFixedThreadPool(4,
    (r: Runnable) => {
      val thread = new Thread(r, s"rocketmq-transaction-end-${scope.run}")
      thread.setDaemon(true)
      thread
    })

  private val producer: TransactionMQProducer = {
    val p = new TransactionMQProducer(scope.group, settings.connection.rpcHook)
    settings.connection.configure(p)
    p.setInstanceName(RocketMQClientCache.uniqueInstanceName("spark-rocketmq-transactions"))
    p.setTransactionListener(CheckBack)
    p.start()
    p
  }

  private def client = producer.getDefaultMQProducerImpl.getMqClientFactory

  // The broker asks a producer of the group it knows from heartbeats, which go to the brokers the client
  // has routes to: look up the topic each broker registers under its own name, then send them now.
  try {
    val brokers = client.getMQClientAPIImpl.getBrokerClusterInfo(settings.sendTimeoutMs).getBrokerAddrTable
    (brokers.keySet().asScala.toSeq ++ settings.topic.map(settings.connection.onBroker)).foreach { topic =>
      try client.updateTopicRouteInfoFromNameServer(topic)
      catch { case NonFatal(e) => log.debug(s"No route for $topic: $e") }
    }
    client.sendHeartbeatToAllBrokerWithLock()
  } catch { case NonFatal(e) => log.warn(s"Could not register transaction group ${scope.group} yet: $e") }

  /** Spark commits `epoch`: decide it, then commit what it keeps (or roll back a second copy). */
  def commit(epoch: Long, messages: Array[WriterCommitMessage]): Unit = {
    val tasks = messages.toSeq.flatMap(m => RocketMQTaskHalfMessages.fromCommitMessage(m))
    val proposed = RocketMQEpochDecision(scope.run, tasks.map(t => t.partition -> t.attempt).toMap)
    val decision = decisions.decide(epoch, proposed)
    if (decision != proposed) {
      log.warn(s"Epoch $epoch was committed before (run ${decision.run}); rolling back this run's copy of it " +
        s"(${tasks.map(_.messages.size).sum} messages)")
      tasks.foreach(t => end(t, commit = false))
      return
    }
    afterDecisionHook(epoch)
    val now = System.currentTimeMillis()
    val (direct, later) = tasks.partition(t => t.firstSendMs < 0 || now - t.firstSendMs < scope.timeoutMs / 2)
    val unconfirmed = direct.map(t => t.partition -> end(t, commit = true))
    decisions.markCommitted(epoch, unconfirmed.collect { case (partition, 0) => partition }.toSet)
    val leftToBroker = later.map(_.messages.size).sum + unconfirmed.map(_._2).sum
    if (leftToBroker > 0) {
      log.warn(s"Epoch $epoch: $leftToBroker of ${tasks.map(_.messages.size).sum} half messages are left for the " +
        s"broker to commit when it checks back (their transaction timeout is ${scope.timeoutMs} ms)")
    }
  }

  /** Spark aborts `epoch`: roll back what its tasks reported (the others the broker asks about). */
  def abort(epoch: Long, messages: Array[WriterCommitMessage]): Unit =
    messages.toSeq.flatMap(m => Option(m).flatMap(RocketMQTaskHalfMessages.fromCommitMessage))
      .foreach(t => end(t, commit = false))

  private def end(task: RocketMQTaskHalfMessages, commit: Boolean): Int =
    RocketMQTransactionEnd.decide(client, scope.group, task, commit, settings.sendTimeoutMs, settings.retryTimeoutMs,
      pool)

  /** Answers the broker's check-back from the decisions (see the class comment). */
  private object CheckBack extends TransactionListener {
    override def executeLocalTransaction(message: Message, arg: Any): LocalTransactionState =
      LocalTransactionState.UNKNOW // never called: this producer sends nothing

    override def checkLocalTransaction(message: MessageExt): LocalTransactionState = {
      val answer = RocketMQHalfMessageRecorder.origin(
        message.getProperty(RocketMQHalfMessageRecorder.TransactionProperty)) match {
        case None => LocalTransactionState.ROLLBACK_MESSAGE
        case Some(origin) =>
          try {
            decisions.read(origin.epoch) match {
              case Some(decision) =>
                // A copy of a message the driver committed itself (the broker copies what it looks at) is
                // rolled back; so is any message of an attempt the epoch did not keep.
                if (decision.names(origin) && !decisions.committed(origin.epoch).contains(origin.partition)) {
                  LocalTransactionState.COMMIT_MESSAGE
                } else LocalTransactionState.ROLLBACK_MESSAGE
              case None if RocketMQTransactionScope.startOf(origin.run) < RocketMQTransactionScope.startOf(scope.run) =>
                LocalTransactionState.ROLLBACK_MESSAGE // a run that ended without deciding this epoch
              case None => LocalTransactionState.UNKNOW
            }
          } catch { case NonFatal(e) => log.warn(s"Cannot answer for $origin yet: $e"); LocalTransactionState.UNKNOW }
      }
      // Rare (a slow epoch, or one a crashed driver decided): worth a line each, with the half message's place.
      log.warn(
        s"Broker check-back for half message ${message.getProperty(RocketMQHalfMessageRecorder.TransactionProperty)}" +
          s" (queue offset ${message.getQueueOffset}, check ${message.getProperty("TRANSACTION_CHECK_TIMES")}): $answer")
      answer
    }
  }

  override def close(): Unit = {
    try producer.shutdown()
    finally pool.shutdownNow()
  }
}

private[rocketmq] object RocketMQTransactionCoordinator {
  private val log = LoggerFactory.getLogger(classOf[RocketMQTransactionCoordinator])

  /**
   * Tests only: the JVM system property `rocketmq.spark.test.haltAfterDecision` set to an epoch makes
   * the driver halt (as a kill would) right after recording that epoch's decision, before it commits
   * anything, so that a test reaches the one point where only the broker's check-back can finish.
   */
  private def afterDecisionHook(epoch: Long): Unit =
    if (sys.props.get("rocketmq.spark.test.haltAfterDecision").contains(epoch.toString)) {
      log.warn(s"Halting after the decision of epoch $epoch (rocketmq.spark.test.haltAfterDecision)")
      Runtime.getRuntime.halt(137)
    }
}
