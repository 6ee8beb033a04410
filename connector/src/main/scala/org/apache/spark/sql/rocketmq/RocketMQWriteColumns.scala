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

import org.apache.spark.sql.rocketmq.errors.RocketMQErrors
import org.apache.spark.sql.types._

/**
 * Where each message field comes from in the rows written: column ordinals, -1 when absent. The
 * schema is checked once, when the write is planned, so that a wrong column fails before any send.
 */
private[rocketmq] final case class RocketMQWriteColumns(
    body: Int,
    bodyIsString: Boolean,
    topic: Int,
    tags: Int,
    keys: Int,
    keysIsArray: Boolean,
    properties: Int,
    propertiesIsJson: Boolean,
    shardingKey: Int,
    deliverTime: Int,
    deliverTimeIsTimestamp: Boolean,
    priority: Int = -1,
    liteTopic: Int = -1)

private[rocketmq] object RocketMQWriteColumns {
  val Body = "body"
  val Topic = "topic"
  val Tags = "tags"
  val Keys = "keys"
  val Properties = "properties"
  val ShardingKey = "shardingKey"
  val DeliverTime = "deliverTime"
  val Priority = "priority"
  val LiteTopic = "liteTopic"

  private val StringArray = "STRING or ARRAY<STRING>"

  def resolve(schema: StructType, topicOption: Option[String]): RocketMQWriteColumns = {
    val names = schema.fieldNames.toSeq
    def ordinal(name: String): Int = names.indexWhere(_.equalsIgnoreCase(name))
    def check(name: String, allowedTypes: String)(allowed: DataType => Boolean): Int = {
      val i = ordinal(name)
      if (i >= 0 && !allowed(schema(i).dataType)) {
        throw RocketMQErrors.invalidColumnType(name, schema(i).dataType.sql, allowedTypes)
      }
      i
    }

    val body = check(Body, "STRING or BINARY")(t => t == StringType || t == BinaryType)
    if (body < 0) throw RocketMQErrors.missingColumn(Body, names)
    val topicColumn = check(Topic, "STRING")(_ == StringType)
    if (topicOption.isEmpty && topicColumn < 0) throw RocketMQErrors.missingColumn(Topic, names)
    val keys = check(Keys, StringArray) {
      case StringType => true
      case ArrayType(StringType, _) => true
      case _ => false
    }
    // A read gives properties as the text of a JSON object: taking that text too lets any read be
    // written back.
    val properties =
      check(Properties, "MAP<STRING, STRING>, or STRING holding a JSON object of strings") {
        case MapType(StringType, StringType, _) | StringType => true
        case _ => false
      }
    val deliverTime = check(DeliverTime, "TIMESTAMP or BIGINT (epoch milliseconds)")(t =>
      t == TimestampType || t == LongType)
    RocketMQWriteColumns(
      body = body,
      bodyIsString = schema(body).dataType == StringType,
      topic = if (topicOption.isDefined) -1 else topicColumn,
      tags = check(Tags, "STRING")(_ == StringType),
      keys = keys,
      keysIsArray = keys >= 0 && schema(keys).dataType.isInstanceOf[ArrayType],
      properties = properties,
      propertiesIsJson = properties >= 0 && schema(properties).dataType == StringType,
      shardingKey = check(ShardingKey, "STRING")(_ == StringType),
      deliverTime = deliverTime,
      deliverTimeIsTimestamp = deliverTime >= 0 && schema(deliverTime).dataType == TimestampType,
      priority = check(Priority, "INT")(_ == IntegerType),
      liteTopic = check(LiteTopic, "STRING")(_ == StringType))
  }
}
