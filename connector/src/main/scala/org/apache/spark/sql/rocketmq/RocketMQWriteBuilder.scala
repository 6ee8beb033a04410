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
  LogicalWriteInfo, SupportsTruncate, Write, WriteBuilder
}
import org.apache.spark.sql.internal.connector.SupportsStreamingUpdateAsAppend
import org.apache.spark.sql.rocketmq.options.RocketMQOptions

/**
 * Builds the write of a streaming query. Every output mode sends each row Spark emits as one
 * message: in complete mode that is the whole result each batch (a topic cannot be truncated), in
 * update mode the changed rows, as the Kafka sink does.
 */
private[rocketmq] class RocketMQWriteBuilder(options: RocketMQOptions, info: LogicalWriteInfo,
    accumulators: RocketMQWriteAccumulators, requireTopic: (RocketMQOptions, String) => Unit)
  extends WriteBuilder with SupportsTruncate with SupportsStreamingUpdateAsAppend {

  override def truncate(): WriteBuilder = this

  override def build(): Write =
    RocketMQWrite.plan(options, info.schema(), info.queryId(),
      RocketMQSinkRun.stateDir(info),
      accumulators,
      requireTopic)
}
