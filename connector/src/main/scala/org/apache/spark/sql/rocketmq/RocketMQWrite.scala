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
import org.apache.spark.sql.connector.write.{BatchWrite, Write}
import org.apache.spark.sql.connector.write.streaming.StreamingWrite
import org.apache.spark.sql.rocketmq.producer.RocketMQWriteSettings
import org.apache.spark.sql.types.StructType

/** A write to RocketMQ: at-least-once, each task committing only when all its sends are acknowledged. */
private[rocketmq] class RocketMQWrite(val settings: RocketMQWriteSettings, val columns: RocketMQWriteColumns)
  extends Write {

  override def description(): String = s"RocketMQWrite[topic=${settings.topic.getOrElse("(from column topic)")}]"

  override def toBatch: BatchWrite = new RocketMQBatchWrite(settings, columns)

  override def toStreaming: StreamingWrite = new RocketMQStreamingWrite(settings, columns)

  override def supportedCustomMetrics(): Array[CustomMetric] = RocketMQCustomMetrics.writeMetrics
}

private[rocketmq] object RocketMQWrite {

  /** Checks the options and the columns, and that a topic named by the option exists, before any row is sent. */
  def plan(options: RocketMQOptions, schema: StructType): RocketMQWrite = {
    options.validateForWrite()
    val settings = RocketMQWriteSettings(options)
    val columns = RocketMQWriteColumns.resolve(schema, settings.topic)
    settings.topic.foreach(topic => RocketMQOffsetReader.requireTopic(options, topic))
    new RocketMQWrite(settings, columns)
  }
}
