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

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.metric.CustomTaskMetric
import org.apache.spark.sql.connector.write.{DataWriter, DataWriterFactory, WriterCommitMessage}
import org.apache.spark.sql.connector.write.streaming.StreamingDataWriterFactory
import org.apache.spark.sql.rocketmq.producer.{
  RocketMQKeylessCheck, RocketMQMessageSender, RocketMQWriteSettings
}
import org.apache.spark.sql.rocketmq.transaction.{
  RocketMQHalfMessageRecorder, RocketMQTaskHalfMessages, RocketMQTransactionEnd
}

/**
 * Creates the writers of batch and streaming writes alike (a batch job is epoch 0); the writers add
 * what they measured and counted to `accumulators` once their sends are done (null: nobody reads
 * them).
 */
private[rocketmq] class RocketMQDataWriterFactory(settings: RocketMQWriteSettings,
    columns: RocketMQWriteColumns,
    accumulators: RocketMQWriteAccumulators = null)
  extends DataWriterFactory with StreamingDataWriterFactory {
  override def createWriter(partitionId: Int, taskId: Long): DataWriter[InternalRow] =
    new RocketMQDataWriter(settings, columns, partitionId, taskId, 0L, accumulators)
  override def createWriter(partitionId: Int, taskId: Long, epochId: Long)
      : DataWriter[InternalRow] =
    new RocketMQDataWriter(settings, columns, partitionId, taskId, epochId, accumulators)
}

/**
 * Writes one task's rows, each as one message: [[RocketMQRowToMessage]] builds it and
 * [[RocketMQMessageSender]] sends it asynchronously, with a bound on messages in flight whatever
 * the partition's size. `commit()` returns only once every send of the task is acknowledged; the
 * first failure fails the task with the broker's reason, so Spark's task retry gives at-least-once
 * delivery. Exactly-once: every message is a half message of this task attempt
 * ([[RocketMQHalfMessageRecorder]]), and the commit message carries them to the driver. How long
 * requests took to be acknowledged shows as `sendAckMsP50`, `sendAckMsP99` and `sendAckMsMax`; a
 * committed task adds them, and its counts of resends, failures and possible duplicates, to
 * `accumulators` (complete only after `commit()`).
 */
private[rocketmq] class RocketMQDataWriter(settings: RocketMQWriteSettings,
    columns: RocketMQWriteColumns,
    partition: Int, attempt: Long, epoch: Long, accumulators: RocketMQWriteAccumulators = null)
  extends DataWriter[InternalRow] {

  private val converter = new RocketMQRowToMessage(settings, columns)
  private val halfMessages =
    settings.transaction.map(new RocketMQHalfMessageRecorder(_, epoch, partition, attempt))
  private var rowsWritten = 0L

  private val sender = new RocketMQMessageSender(settings, halfMessages.orNull)
  private val keyless = new RocketMQKeylessCheck(settings, () => sender.client)

  override def write(row: InternalRow): Unit = {
    val message = converter.toMessage(row, rowsWritten)
    keyless.check(message, rowsWritten)
    halfMessages.foreach(_.prepare(message))
    sender.send(message, converter.shardingKey(row))
    rowsWritten += 1
  }

  override def commit(): WriterCommitMessage = {
    sender.flush()
    if (accumulators != null) accumulators.add(sender)
    // At-least-once, no commit message: the job commit has nothing to collect (counts are in the
    // task metrics). Exactly-once, one of Spark's own classes: the driver deserializes task results
    // with Spark's class loader, which cannot see a connector that a Spark Connect session added
    // with addArtifacts (see RocketMQTaskHalfMessages).
    halfMessages.map(h => RocketMQTaskHalfMessages.toCommitMessage(h.encode())).orNull
  }

  override def abort(): Unit = {
    sender.abandon()
    for (h <- halfMessages; scope <- settings.transaction) {
      RocketMQTransactionEnd.rollBack(sender.client, h.decoded, scope.group)
    }
  }

  override def currentMetricsValues(): Array[CustomTaskMetric] =
    (Seq(
      RocketMQCustomMetrics.taskMetric(RocketMQCustomMetrics.MessagesSent, sender.sent),
      RocketMQCustomMetrics.taskMetric(RocketMQCustomMetrics.BytesSent, sender.bytesSent),
      RocketMQCustomMetrics.taskMetric(RocketMQCustomMetrics.SendRequests, sender.requests),
      RocketMQCustomMetrics.taskMetric(RocketMQCustomMetrics.SendRetries, sender.retries),
      RocketMQCustomMetrics.taskMetric(RocketMQCustomMetrics.FailedSends, sender.failedSends),
      RocketMQCustomMetrics.taskMetric(RocketMQCustomMetrics.PossibleDuplicates,
        sender.possibleDuplicates)) ++
      sender.ackLatency(RocketMQCustomMetrics.latencyTaskMetrics(RocketMQCustomMetrics.SendAckMsP50,
        RocketMQCustomMetrics.SendAckMsP99, RocketMQCustomMetrics.SendAckMsMax, _))).toArray

  override def close(): Unit = sender.close()
}
