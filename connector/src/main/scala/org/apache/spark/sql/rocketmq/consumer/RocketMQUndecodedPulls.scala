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
package org.apache.spark.sql.rocketmq.consumer

import scala.annotation.nowarn

import org.apache.rocketmq.client.consumer.{
  DefaultMQPullConsumer, MessageSelector, PullCallback, PullResult
}
import org.apache.rocketmq.client.impl.CommunicationMode
import org.apache.rocketmq.client.impl.consumer.PullResultExt
import org.apache.rocketmq.common.filter.ExpressionType
import org.apache.rocketmq.common.message.MessageQueue
import org.apache.rocketmq.common.sysflag.PullSysFlag
import org.apache.rocketmq.remoting.protocol.filter.FilterAPI
import org.apache.rocketmq.remoting.protocol.heartbeat.SubscriptionData

/**
 * The pull consumer's asynchronous pull with its answer left as the broker sent it: the consumer
 * decodes an answer on its network thread before calling back, and an answer held ahead of the
 * reader would then be kept as many objects per message. Here the callback gets the answer
 * undecoded, and [[answer]] decodes it when the reader takes it, as the consumer itself would
 * (`PullAPIWrapper.processPullResult`, then the topic without the client's namespace).
 */
@nowarn("cat=deprecation") // DefaultMQPullConsumer: see RocketMQConsumerPool
private[consumer] final class RocketMQUndecodedPulls(queue: MessageQueue,
    selector: MessageSelector) {

  /** What the broker filters by, built once for every pull of the queue. */
  private val subscription: SubscriptionData =
    FilterAPI.build(queue.getTopic, selector.getExpression, selector.getExpressionType)

  /**
   * Issues one pull at `offset` of at most `maxMessages` through `consumer`; `block`: the broker
   * holds a pull at the queue's end until a message arrives (a long poll).
   */
  def pull(consumer: DefaultMQPullConsumer, offset: Long, maxMessages: Int, block: Boolean,
      timeoutMs: Long, callback: PullCallback): Unit = {
    val impl = consumer.getDefaultMQPullConsumerImpl
    impl.subscriptionAutomatically(queue.getTopic)
    val byTag = ExpressionType.isTagType(subscription.getExpressionType)
    impl.getPullAPIWrapper.pullKernelImpl(queue, subscription.getSubString,
      subscription.getExpressionType, if (byTag) 0L else subscription.getSubVersion, offset,
      maxMessages, Int.MaxValue, PullSysFlag.buildSysFlag(false, block, true, false), 0L,
      consumer.getBrokerSuspendMaxTimeMillis,
      if (block) consumer.getConsumerTimeoutMillisWhenSuspend else timeoutMs,
      CommunicationMode.ASYNC, callback)
  }

  /** `raw`, an undecoded answer of a pull through `consumer`, held as its bytes until taken. */
  def answer(consumer: DefaultMQPullConsumer, raw: PullResult): RocketMQReadAhead.Answer = {
    val bytes = raw match {
      case ext: PullResultExt if ext.getMessageBinary != null => ext.getMessageBinary.length.toLong
      case _ => 0L
    }
    new RocketMQReadAhead.Answer(bytes,
      () => {
        val impl = consumer.getDefaultMQPullConsumerImpl
        val result = impl.getPullAPIWrapper.processPullResult(queue, raw, subscription)
        impl.resetTopic(result.getMsgFoundList)
        result
      })
  }
}
