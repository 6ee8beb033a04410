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

import org.apache.spark.sql.connector.write.{BatchWrite, DataWriterFactory, PhysicalWriteInfo, WriterCommitMessage}
import org.apache.spark.sql.rocketmq.producer.RocketMQWriteSettings

/**
 * A batch write to RocketMQ. Every task sends its rows and commits only when the broker has
 * acknowledged each of them; there is nothing to do at job level (RocketMQ has no transaction to
 * close), so a failed job may leave the messages of its successful tasks: at-least-once.
 */
private[rocketmq] class RocketMQBatchWrite(settings: RocketMQWriteSettings, columns: RocketMQWriteColumns)
  extends BatchWrite {

  override def createBatchWriterFactory(info: PhysicalWriteInfo): DataWriterFactory =
    new RocketMQDataWriterFactory(settings, columns)

  override def useCommitCoordinator(): Boolean = false

  override def commit(messages: Array[WriterCommitMessage]): Unit = ()

  override def abort(messages: Array[WriterCommitMessage]): Unit = ()
}
