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

/**
 * Commits or rolls back half messages with END_TRANSACTION requests to the brokers that hold them,
 * through any started client instance (the one that sent them is not needed). The messages of one
 * queue are decided one after another, in the order they were sent, so that rows with a sharding
 * key keep their order; queues go in parallel on `pool` (one after another without one).
 */
private[rocketmq] object RocketMQTransactionEnd {

  private val log = LoggerFactory.getLogger(getClass)

  /**
   * Decides every half message of `task` (commit or roll back) and returns how many the broker did
   * not confirm (unreachable, timed out, or refused: a 5.x broker refuses the sender's own decision
   * once a message is older than its check immunity time, and asks the producer group instead).
   */
  def decide(client: MQClientInstance, group: String, task: RocketMQTaskHalfMessages, commit: Boolean,
      timeoutMs: Long, pool: java.util.concurrent.ExecutorService): Int = {
    if (task.messages.isEmpty) return 0
    task.endpoints.map(_._1).distinct.foreach { topic =>
      try client.updateTopicRouteInfoFromNameServer(topic)
      catch { case NonFatal(e) => log.warn(s"No route for topic $topic: $e") }
    }
    val addresses = task.endpoints.map { case (_, broker) => Option(client.findBrokerAddressInPublish(broker)) }
    val byQueue = task.messages.groupBy(m => (m.endpoint, m.queueId)).values.toSeq
    def decideQueue(messages: Seq[RocketMQHalfMessage]): Int =
      messages.count(m => !decideOne(client, group, task, m, addresses(m.endpoint), commit, timeoutMs))
    if (pool == null) byQueue.map(decideQueue).sum
    else byQueue.map(messages => pool.submit(() => decideQueue(messages))).map(_.get().intValue).sum
  }

  private def decideOne(client: MQClientInstance, group: String, task: RocketMQTaskHalfMessages,
      message: RocketMQHalfMessage, address: Option[String], commit: Boolean, timeoutMs: Long): Boolean = {
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
    address.exists { addr =>
      try {
        val request = RemotingCommand.createRequestCommand(RequestCode.END_TRANSACTION, header)
        val response = client.getMQClientAPIImpl.getRemotingClient.invokeSync(addr, request, timeoutMs)
        response != null && response.getCode == RemotingSysResponseCode.SUCCESS
      } catch { case NonFatal(_) => false }
    }
  }
}
