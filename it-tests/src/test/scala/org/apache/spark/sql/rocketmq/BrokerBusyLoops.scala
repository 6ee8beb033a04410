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

package org.apache.spark.sql.rocketmq

import scala.jdk.CollectionConverters._

import org.apache.rocketmq.broker.BrokerController
import org.apache.rocketmq.broker.transaction.TransactionMetricsFlushService
import org.apache.rocketmq.broker.transaction.queue.{
  TransactionalMessageBridge, TransactionalMessageServiceImpl
}

/**
 * Two service threads of RocketMQ 5.5's broker (5.5.1 too) spin on a core instead of waiting: the
 * flush of the transaction metrics for its whole first interval (10 s) after every start, and the
 * batching of transaction op records (the commit and roll-back marks the check service reads) for
 * as long as the broker runs, from one interval (3 s) after the last transaction on an op queue.
 * Beside Spark on a two-core machine they halved the speed of everything else: the Python tests'
 * broker spun through their whole run. Test brokers run the same two services doing the same work
 * at the same moments, waiting in between: what a client sees does not change.
 */
private[rocketmq] object BrokerBusyLoops {

  /** Between the broker's `initialize()`, which starts both, and its `start()`. */
  def pace(broker: BrokerController): Unit = {
    // close() stops the op batching thread and writes the metrics the new service reads back.
    broker.getTransactionalMessageService.close()
    broker.setTransactionalMessageService(
      new PacedOpBatching(new TransactionalMessageBridge(broker, broker.getMessageStore)))
    val field = classOf[BrokerController].getDeclaredField("transactionMetricsFlushService")
    field.setAccessible(true)
    field.get(broker).asInstanceOf[TransactionMetricsFlushService].shutdown()
    val flush = new PacedMetricsFlush(broker)
    field.set(broker, flush)
    flush.start()
  }

  /**
   * Its batching asks to run again at once (0) while an op queue still holds a full batch, and also
   * whenever some op queue's last write is more than the interval old, which an idle queue's always
   * is: then it waits a little instead. A mark taken meanwhile goes out at the next round.
   */
  private final class PacedOpBatching(bridge: TransactionalMessageBridge)
    extends TransactionalMessageServiceImpl(bridge) {

    override def batchSendOpMessage(): Long = {
      val next = super.batchSendOpMessage()
      val full = bridge.getBrokerController.getBrokerConfig.getTransactionOpMsgMaxSize
      if (next != 0L || getDeleteContext.values.asScala.exists(_.getTotalSize.get >= full)) next
      else System.currentTimeMillis() + IdlePollMs
    }
  }

  /** Writes the transaction metrics once an interval, as the broker's own service does. */
  private final class PacedMetricsFlush(broker: BrokerController)
    extends TransactionMetricsFlushService(broker) {

    override def run(): Unit =
      while (!isStopped) {
        waitForRunning(broker.getBrokerConfig.getTransactionMetricFlushInterval)
        if (!isStopped) broker.getTransactionalMessageService.getTransactionMetrics.persist()
      }
  }

  private val IdlePollMs = 20L
}
