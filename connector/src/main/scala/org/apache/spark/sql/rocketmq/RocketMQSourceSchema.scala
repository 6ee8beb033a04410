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

import org.apache.rocketmq.common.message.MessageConst

import org.apache.spark.sql.types._

/** The schema of rows read from RocketMQ: one row per message. */
private[rocketmq] object RocketMQSourceSchema {
  /** The nine standard columns. */
  val schema: StructType = StructType(Seq(
    StructField("topic", StringType),
    StructField("flag", IntegerType),
    StructField("body", BinaryType),
    StructField("properties", StringType),
    StructField("brokerName", StringType),
    StructField("queueId", IntegerType),
    StructField("queueOffset", LongType),
    StructField("bornTimestamp", TimestampType),
    StructField("storeTimestamp", TimestampType)
  ))

  /** With option includeExtraColumns: tags, keys and msgId after the standard columns. */
  val schemaWithExtraColumns: StructType = schema
    .add(StructField("tags", StringType))
    .add(StructField("keys", ArrayType(StringType, containsNull = false)))
    .add(StructField("msgId", StringType))

  def apply(includeExtraColumns: Boolean): StructType =
    if (includeExtraColumns) schemaWithExtraColumns else schema

  /**
   * Whether a property is one the pull client adds to every message for its own bookkeeping, not
   * the message's. Called for every property of every message read: plain string comparisons (a
   * Scala `Set[String]` compares through boxed equality).
   */
  def isClientInternalProperty(key: String): Boolean =
    MessageConst.PROPERTY_MIN_OFFSET.equals(key) || MessageConst.PROPERTY_MAX_OFFSET.equals(key) ||
      MessageConst.PROPERTY_CONSUME_START_TIMESTAMP.equals(key)
}
