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

import java.util.UUID

import org.apache.spark.TaskContext
import org.apache.spark.sql.{DataFrame, SaveMode, SQLContext}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write.WriterCommitMessage
import org.apache.spark.sql.rocketmq.errors.RocketMQErrors
import org.apache.spark.sql.rocketmq.options.RocketMQOptions
import org.apache.spark.sql.sources.BaseRelation
import org.apache.spark.sql.types.StructType

/**
 * `DataFrameWriter.save()` into RocketMQ: checks the save mode, the options and the columns on the
 * driver, then runs [[RocketMQDataWriter]] on every partition. A task that fails is retried by
 * Spark (at-least-once); the job fails if any task finally fails. Exactly-once: the tasks send half
 * messages, which the driver commits when every task has succeeded.
 */
private[rocketmq] object RocketMQRelationWrite {

  def write(sqlContext: SQLContext, mode: SaveMode, options: RocketMQOptions, data: DataFrame)
      : BaseRelation = {
    mode match {
      case SaveMode.Append | SaveMode.ErrorIfExists =>
      case other => throw RocketMQErrors.saveModeNotSupported(other.name())
    }
    val write = RocketMQWrite.plan(options, data.schema, UUID.randomUUID().toString,
      checkpointLocation = None)
    val accumulators = RocketMQWriteAccumulators.register()
    val rdd = data.queryExecution.toRdd
    val factory = new RocketMQDataWriterFactory(write.settings.forTasks(rdd.getNumPartitions),
      write.columns, accumulators)
    RocketMQWrite.batchCoordinator(write.settings) match {
      case None => rdd.foreachPartition(rows => writePartition(factory, rows))
      case Some(coordinator) =>
        // Exactly-once: each task reports its half messages; the job commits them once all tasks
        // are done.
        try coordinator.commit(0L,
            rdd.mapPartitions(rows => Iterator.single(writePartition(factory, rows))).collect())
        finally coordinator.close()
    }
    reportCounts(options, accumulators.counts)
    new WrittenRelation(sqlContext, data.schema)
  }

  private def writePartition(factory: RocketMQDataWriterFactory, rows: Iterator[InternalRow])
      : WriterCommitMessage = {
    val context = TaskContext.get()
    val writer = factory.createWriter(context.partitionId(), context.taskAttemptId())
    try {
      rows.foreach(writer.write)
      writer.commit()
    } catch {
      case e: Throwable =>
        writer.abort()
        throw e
    } finally writer.close()
  }

  /**
   * `save()` runs no plan node that shows SQL metrics: its tasks' counts go to the log, a warning
   * when messages may be stored twice.
   */
  private def reportCounts(options: RocketMQOptions, counts: Map[String, Long]): Unit = {
    val text = counts.toSeq.sorted.map { case (k, v) => s"$k=$v" }.mkString(", ")
    val topic = options.rawValue(RocketMQOptions.Topic).getOrElse("(from the topic column)")
    if (counts.getOrElse(RocketMQCustomMetrics.PossibleDuplicates, 0L) > 0) {
      log.warn(s"The write to $topic resent messages that may have been stored already: $text")
    } else log.info(s"The write to $topic is done: $text")
  }

  private val log = org.slf4j.LoggerFactory.getLogger(getClass)

  /** What `save()` returns; Spark does not read it. */
  private class WrittenRelation(override val sqlContext: SQLContext,
      override val schema: StructType)
    extends BaseRelation
}
