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

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.write.{PhysicalWriteInfo, WriterCommitMessage}
import org.apache.spark.sql.connector.write.streaming.{StreamingDataWriterFactory, StreamingWrite}
import org.apache.spark.sql.rocketmq.errors.RocketMQErrors
import org.apache.spark.sql.rocketmq.options.RocketMQOptions
import org.apache.spark.sql.rocketmq.producer.RocketMQWriteSettings
import org.apache.spark.sql.rocketmq.transaction.RocketMQTransactionCoordinator

/**
 * A streaming query's output to RocketMQ. At-least-once: each micro-batch's tasks commit only once
 * every message they sent is acknowledged, so a batch Spark records as done is in RocketMQ; a task
 * that fails is retried, and a query restarted from its checkpoint re-runs the batch that did not
 * finish, so messages are written at least once, never silently dropped. Exactly-once (with a
 * `coordinator`): the tasks' half messages become visible when Spark commits the epoch, once. Its
 * tasks add how long their sends took to be acknowledged, and their counts, to `accumulators`,
 * which the sink's table reports.
 */
private[rocketmq] class RocketMQStreamingWrite(settings: RocketMQWriteSettings,
    columns: RocketMQWriteColumns,
    coordinator: Option[RocketMQTransactionCoordinator], queryId: String,
    accumulators: RocketMQWriteAccumulators)
  extends StreamingWrite {

  /**
   * Continuous processing and real-time mode run through here too, at-least-once. Exactly-once is
   * refused there before any task starts: a restarted continuous query ends its epochs elsewhere,
   * and a real-time batch outlives the brokers' half messages (and, with asynchronous progress,
   * ends elsewhere too).
   */
  override def createStreamingWriterFactory(info: PhysicalWriteInfo): StreamingDataWriterFactory = {
    val session = SparkSession.getActiveSession
    if (coordinator.isDefined && session.exists(RocketMQQueryTrigger.isContinuous)) {
      throw RocketMQErrors.optionNotAllowed(RocketMQOptions.DeliveryGuaranteeOption.key,
        "CONTINUOUS_EXACTLY_ONCE")
    }
    if (coordinator.isDefined && session.exists(RocketMQQueryTrigger.isRealTime(_, queryId))) {
      throw RocketMQErrors.optionNotAllowed(RocketMQOptions.DeliveryGuaranteeOption.key,
        "REAL_TIME_EXACTLY_ONCE")
    }
    // Under real-time mode and continuous processing a task runs for its whole batch or epoch: each
    // row goes out as it comes rather than waiting for a fuller request until then (see
    // RocketMQMessageSender).
    val eachAtOnce = session.exists(RocketMQQueryTrigger.sendsEachRowAtOnce(_, queryId))
    new RocketMQDataWriterFactory(
      settings.copy(sendEachAtOnce = eachAtOnce).forTasks(info.numPartitions()), columns,
      accumulators)
  }

  override def useCommitCoordinator(): Boolean = coordinator.isDefined

  override def commit(epochId: Long, messages: Array[WriterCommitMessage]): Unit =
    coordinator.foreach(_.commit(epochId, messages))

  override def abort(epochId: Long, messages: Array[WriterCommitMessage]): Unit =
    coordinator.foreach(_.abort(epochId, messages))
}
