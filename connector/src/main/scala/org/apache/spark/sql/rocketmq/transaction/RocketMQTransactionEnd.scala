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

import scala.util.control.NonFatal

import org.apache.rocketmq.client.impl.factory.MQClientInstance
import org.apache.rocketmq.common.sysflag.MessageSysFlag
import org.apache.rocketmq.remoting.protocol.{RemotingCommand, RemotingSysResponseCode, RequestCode}
import org.apache.rocketmq.remoting.protocol.header.EndTransactionRequestHeader

import org.slf4j.LoggerFactory

import org.apache.spark.sql.rocketmq.RocketMQRetry

/**
 * Commits or rolls back half messages with END_TRANSACTION requests to the brokers that hold them,
 * through any started client instance (the one that sent them is not needed). The messages of one
 * queue are decided one after another, in the order they were sent, so that rows with a sharding
 * key keep their order; queues go in parallel on `pool` (one after another without one).
 *
 * A broker that cannot be reached (its master killed, or restarting, or replaced by an election) is asked
 * again, with routes looked up afresh, for up to `retryTimeoutMs`: a restarted master, or the replica elected
 * in its place (it holds the same commit log, so the same offsets), then takes the decision. What is still
 * unreachable after that, the broker asks the producer group about once the messages' check immunity is over.
 */
private[rocketmq] object RocketMQTransactionEnd {

  private val log = LoggerFactory.getLogger(getClass)

  /** What a broker made of one END_TRANSACTION request. */
  private sealed trait Outcome
  private case object Confirmed extends Outcome
  /** Answered, but not with success (a 5.x broker refuses the sender's decision past the check immunity). */
  private case object Refused extends Outcome
  /** No answer: no address, no connection, or a time-out. */
  private case object Unreachable extends Outcome

  /**
   * Decides every half message of `task` (commit or roll back) and returns how many the broker did
   * not confirm (unreachable for `retryTimeoutMs`, or refused: a 5.x broker refuses the sender's own decision
   * once a message is older than its check immunity time, and asks the producer group instead).
   */
  def decide(client: MQClientInstance, group: String, task: RocketMQTaskHalfMessages, commit: Boolean,
      timeoutMs: Long, retryTimeoutMs: Long, pool: java.util.concurrent.ExecutorService): Int = {
    if (task.messages.isEmpty) return 0
    val budget = new RocketMQRetry.Budget(retryTimeoutMs)
    var refused = 0
    // Each queue's messages not decided yet, in order: a queue stops at its first unreachable message.
    var pending: Seq[Seq[RocketMQHalfMessage]] = task.messages.groupBy(m => (m.endpoint, m.queueId)).values.toSeq
    while (pending.nonEmpty) {
      task.endpoints.map(_._1).distinct.foreach { topic =>
        try client.updateTopicRouteInfoFromNameServer(topic)
        catch { case NonFatal(e) => log.warn(s"No route for topic $topic: $e") }
      }
      val addresses = task.endpoints.map { case (_, broker) => Option(client.findBrokerAddressInPublish(broker)) }
      def decideQueue(messages: Seq[RocketMQHalfMessage]): (Int, Seq[RocketMQHalfMessage]) = {
        var refusedHere = 0
        var rest = messages
        var reachable = true
        while (reachable && rest.nonEmpty) {
          decideOne(client, group, task, rest.head, addresses(rest.head.endpoint), commit, timeoutMs) match {
            case Unreachable => reachable = false
            case outcome =>
              if (outcome == Refused) refusedHere += 1
              rest = rest.tail
          }
        }
        (refusedHere, rest)
      }
      val results =
        if (pool == null) pending.map(decideQueue)
        else pending.map(messages => pool.submit(() => decideQueue(messages))).map(_.get())
      refused += results.map(_._1).sum
      pending = results.map(_._2).filter(_.nonEmpty)
      if (pending.nonEmpty) {
        budget.nextPauseMs() match {
          case Some(pauseMs) =>
            if (budget.retries == 1 || budget.retries % 10 == 0) {
              val brokers = pending.map(q => task.endpoints(q.head.endpoint)._2).distinct.sorted
              log.warn(s"Epoch ${task.epoch}, partition ${task.partition}: ${pending.map(_.size).sum} half " +
                s"messages wait for broker group(s) ${brokers.mkString(", ")} to answer (${budget.elapsedMs} ms " +
                s"of retryTimeoutMs $retryTimeoutMs); asking again in $pauseMs ms")
            }
            Thread.sleep(pauseMs)
          case None => return refused + pending.map(_.size).sum
        }
      }
    }
    refused
  }

  private def decideOne(client: MQClientInstance, group: String, task: RocketMQTaskHalfMessages,
      message: RocketMQHalfMessage, address: Option[String], commit: Boolean, timeoutMs: Long): Outcome = {
    val (topic, broker) = task.endpoints(message.endpoint)
    val header = new EndTransactionRequestHeader()
    header.setTopic(topic)
    header.setProducerGroup(group)
    header.setTranStateTableOffset(message.queueOffset)
    header.setCommitLogOffset(message.commitLogOffset)
    header.setCommitOrRollback(
      if (commit) MessageSysFlag.TRANSACTION_COMMIT_TYPE else MessageSysFlag.TRANSACTION_ROLLBACK_TYPE)
    header.setFromTransactionCheck(false)
    header.setMsgId(s"${task.run}/${task.epoch}/${task.partition}/${task.attempt}")
    header.setBrokerName(broker)
    address.fold[Outcome](Unreachable) { addr =>
      try {
        val request = RemotingCommand.createRequestCommand(RequestCode.END_TRANSACTION, header)
        val response = client.getMQClientAPIImpl.getRemotingClient.invokeSync(addr, request, timeoutMs)
        if (response != null && response.getCode == RemotingSysResponseCode.SUCCESS) Confirmed
        else if (response == null) Unreachable
        else Refused
      } catch { case NonFatal(_) => Unreachable }
    }
  }
}
