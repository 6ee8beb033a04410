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

import org.apache.spark.SparkContext
import org.apache.spark.util.LongAccumulator

/**
 * The body bytes and messages a micro-batch's tasks read, gathered on the driver (Spark merges a
 * successful task's additions when it ends; a failed task's are dropped). Spark's own accumulator
 * types travel, as for [[RocketMQLatencyAccumulator]].
 */
private[rocketmq] final class RocketMQReadSizes private (bytes: LongAccumulator,
    messages: LongAccumulator)
  extends Serializable {

  /** In a task, as its reader closes. */
  def add(bodyBytes: Long, read: Long): Unit = {
    bytes.add(bodyBytes)
    messages.add(read)
  }

  /** On the driver: (body bytes, messages) read since the last call, and forgotten. */
  def drain(): (Long, Long) = synchronized {
    val taken = (bytes.value.longValue, messages.value.longValue)
    bytes.reset()
    messages.reset()
    taken
  }
}

private[rocketmq] object RocketMQReadSizes {

  /** A new pair, registered (unnamed) with the driver's context. */
  def register(): RocketMQReadSizes = {
    val context = SparkContext.getOrCreate()
    val bytes, messages = new LongAccumulator
    context.register(bytes)
    context.register(messages)
    new RocketMQReadSizes(bytes, messages)
  }
}
