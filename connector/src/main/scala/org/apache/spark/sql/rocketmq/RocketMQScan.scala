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

import org.apache.spark.sql.connector.metric.CustomMetric
import org.apache.spark.sql.connector.read.{Batch, Scan}
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream
import org.apache.spark.sql.types.StructType

/** A read of RocketMQ topics, bounded or streaming; options are checked here, before any broker request. */
private[rocketmq] class RocketMQScan(options: RocketMQOptions) extends Scan {

  override def readSchema(): StructType = RocketMQSourceSchema(options(RocketMQOptions.IncludeExtraColumns))

  override def description(): String = s"RocketMQScan[topic=${options.rawValue(RocketMQOptions.Topic).getOrElse("")}]"

  override def supportedCustomMetrics(): Array[CustomMetric] = RocketMQCustomMetrics.supported

  override def toBatch: Batch = {
    options.validateForBatchRead()
    new RocketMQBatch(options)
  }

  override def toMicroBatchStream(checkpointLocation: String): MicroBatchStream = {
    options.validateForStream()
    RocketMQMicroBatchStream(options, checkpointLocation)
  }
}
