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

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.metric.{CustomMetric, CustomTaskMetric}
import org.apache.spark.sql.connector.write.{
  BatchWrite, LogicalWriteInfo, SupportsTruncate, Write, WriteBuilder
}
import org.apache.spark.sql.connector.write.streaming.StreamingWrite
import org.apache.spark.sql.internal.connector.SupportsStreamingUpdateAsAppend
import org.apache.spark.sql.rocketmq.options.RocketMQOptions

/**
 * Builds the write to a [[RocketMQCatalogTable]] for whichever kind of query asks. Spark builds the
 * write before it says which kind it wants, so each kind is planned when asked for:
 * - a batch write (INSERT INTO, `DataFrameWriterV2.append`) is planned as `DataFrameWriter.save()`
 *   plans one ([[RocketMQWrite.plan]] with no checkpoint, so an exactly-once write gets a
 *   transaction run of its own), and runs through [[RocketMQBatchWrite]]: at-least-once, every task
 *   done only when each of its messages is acknowledged;
 * - a streaming write is the source table's (`streaming`, a [[RocketMQWriteBuilder]]). The options,
 *   the columns and the topic are checked then, before any row is sent. A topic cannot be
 *   truncated: INSERT OVERWRITE is refused by Spark (the table does not claim it), and a stream in
 *   complete mode sends its whole result every batch, as the source's sink does.
 */
private[rocketmq] class RocketMQCatalogWriteBuilder(streaming: WriteBuilder,
    options: RocketMQOptions,
    info: LogicalWriteInfo)
  extends WriteBuilder with SupportsTruncate with SupportsStreamingUpdateAsAppend {

  override def truncate(): WriteBuilder = this

  override def build(): Write = new RocketMQDriverMetrics {
    override def description(): String =
      s"RocketMQWrite[topic=${options.rawValue(RocketMQOptions.Topic).getOrElse("")}]"

    private lazy val batch =
      RocketMQWrite.plan(options, info.schema(), info.queryId(), checkpointLocation = None)

    override def toBatch: BatchWrite = batch.toBatch

    override def driverMetrics: Array[CustomTaskMetric] = batch.driverMetrics

    override def toStreaming: StreamingWrite = {
      val write = streaming.build().toStreaming
      // Recorded for the stream's next run, which Spark starts without the writer's options
      // (RocketMQSinkRun).
      if (RocketMQWrite.isExactlyOnce(options)) {
        RocketMQSinkRun.stateDir(info).foreach { dir =>
          RocketMQSinkRun.record(dir, info.options().asCaseSensitiveMap().asScala.toMap,
            SparkSession.active.sessionState.newHadoopConf())
        }
      }
      write
    }

    override def supportedCustomMetrics(): Array[CustomMetric] = RocketMQCustomMetrics.writeMetrics
  }
}
