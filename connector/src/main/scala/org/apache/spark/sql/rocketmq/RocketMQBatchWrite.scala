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

import org.apache.spark.sql.connector.write.{
  BatchWrite, DataWriterFactory, PhysicalWriteInfo, WriterCommitMessage
}
import org.apache.spark.sql.rocketmq.producer.RocketMQWriteSettings
import org.apache.spark.sql.rocketmq.transaction.RocketMQTransactionCoordinator

/**
 * A batch write to RocketMQ. At-least-once: every task sends its rows and commits only when the
 * broker has acknowledged each of them, and there is nothing to do at job level, so a failed job
 * may leave the messages of its successful tasks. Exactly-once (`coordinator` makes one): tasks
 * send half messages, and the job commits the kept attempts' or rolls back all of them.
 */
private[rocketmq] class RocketMQBatchWrite(settings: RocketMQWriteSettings,
    columns: RocketMQWriteColumns,
    coordinator: () => Option[RocketMQTransactionCoordinator],
    accumulators: RocketMQWriteAccumulators)
  extends BatchWrite {

  private lazy val transactions = coordinator()

  override def createBatchWriterFactory(info: PhysicalWriteInfo): DataWriterFactory =
    new RocketMQDataWriterFactory(settings.forTasks(info.numPartitions()), columns, accumulators)

  override def useCommitCoordinator(): Boolean = settings.transaction.isDefined

  override def commit(messages: Array[WriterCommitMessage]): Unit = transactions.foreach { c =>
    try c.commit(0L, messages)
    finally c.close()
  }

  override def abort(messages: Array[WriterCommitMessage]): Unit = transactions.foreach { c =>
    try c.abort(0L, messages)
    finally c.close()
  }
}
