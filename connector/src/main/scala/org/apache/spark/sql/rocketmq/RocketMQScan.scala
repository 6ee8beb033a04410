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

import java.util.OptionalLong

import org.apache.spark.sql.connector.metric.CustomMetric
import org.apache.spark.sql.connector.read.{Batch, Scan, Statistics, SupportsReportStatistics}
import org.apache.spark.sql.connector.read.streaming.{ContinuousStream, MicroBatchStream}
import org.apache.spark.sql.rocketmq.options.RocketMQOptions
import org.apache.spark.sql.sources.Filter
import org.apache.spark.sql.types.StructType

/**
 * A read of RocketMQ topics, bounded or streaming; options are checked here, before any broker
 * request. A bounded read is narrowed by what its filters and limit pushed down, and reports its
 * size to Spark's optimizer: the rows are the offsets it plans to read (resolved once, shared with
 * the partitions), the bytes those rows at Spark's estimate of a row of this schema. A streaming
 * read reports no size (its rows arrive per micro-batch).
 */
private[rocketmq] class RocketMQScan(
    options: RocketMQOptions,
    pushdown: RocketMQPushdown = RocketMQPushdown(),
    pushedFilters: Seq[Filter] = Nil)
  extends Scan with SupportsReportStatistics {

  @volatile private var streaming = false

  private lazy val batch: RocketMQBatch = {
    options.validateForBatchRead()
    new RocketMQBatch(options, pushdown)
  }

  override def readSchema(): StructType =
    RocketMQSourceSchema(options(RocketMQOptions.IncludeExtraColumns))

  override def description(): String = {
    val narrowed = pushdown.describe
    s"RocketMQScan[topic=${options.rawValue(RocketMQOptions.Topic).getOrElse("")}" +
      (if (pushedFilters.isEmpty) "" else s", pushedFilters=[${pushedFilters.mkString(", ")}]") +
      (if (narrowed.isEmpty) "" else s", narrowedTo=[$narrowed]") + "]"
  }

  override def supportedCustomMetrics(): Array[CustomMetric] = RocketMQCustomMetrics.supported

  override def estimateStatistics(): Statistics =
    if (streaming) RocketMQScan.Unknown
    else {
      val rows = batch.plannedRows
      val bytes = BigInt(rows) * readSchema().defaultSize
      new Statistics {
        override def numRows(): OptionalLong = OptionalLong.of(rows)
        override def sizeInBytes(): OptionalLong =
          OptionalLong.of(bytes.min(BigInt(Long.MaxValue)).toLong)
      }
    }

  override def toBatch: Batch = batch

  override def toMicroBatchStream(checkpointLocation: String): MicroBatchStream = {
    streaming = true
    options.validateForStream()
    RocketMQMicroBatchStream(options, checkpointLocation)
  }

  override def toContinuousStream(checkpointLocation: String): ContinuousStream = {
    streaming = true
    options.validateForStream()
    options.validateForContinuous()
    new RocketMQContinuousStream(options, checkpointLocation)
  }
}

private[rocketmq] object RocketMQScan {
  private val Unknown: Statistics = new Statistics {
    override def numRows(): OptionalLong = OptionalLong.empty()
    override def sizeInBytes(): OptionalLong = OptionalLong.empty()
  }
}
