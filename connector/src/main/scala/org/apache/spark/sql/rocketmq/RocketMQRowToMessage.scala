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

import org.apache.rocketmq.common.message.{Message, MessageConst}

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.unsafe.types.UTF8String
import org.apache.spark.sql.rocketmq.producer.RocketMQWriteSettings

/**
 * Turns one row of the written DataFrame into a RocketMQ message, reading only the columns
 * [[RocketMQWriteColumns]] located. Values Spark could not check when the write was planned (nulls,
 * property names) are checked here, with errors naming the column and the row.
 */
private[rocketmq] final class RocketMQRowToMessage(settings: RocketMQWriteSettings, columns: RocketMQWriteColumns) {
  import RocketMQWriteColumns._

  private val keyBuilder = new java.lang.StringBuilder()

  /** The topic option's name on the brokers; for a topic column, the last row's (rows mostly share one). */
  private val optionTopic = settings.topic.map(settings.connection.onBroker).orNull
  private var lastColumnTopic: UTF8String = _
  private var lastColumnTopicOnBroker: String = _

  private def columnTopic(row: InternalRow, rowIndex: Long): String = {
    if (row.isNullAt(columns.topic)) throw RocketMQErrors.nullColumnValue(Topic, rowIndex)
    val topic = row.getUTF8String(columns.topic)
    if (lastColumnTopic == null || lastColumnTopic != topic) {
      lastColumnTopic = topic.copy()
      lastColumnTopicOnBroker = settings.connection.onBroker(topic.toString)
    }
    lastColumnTopicOnBroker
  }

  def toMessage(row: InternalRow, rowIndex: Long): Message = {
    if (row.isNullAt(columns.body)) throw RocketMQErrors.nullColumnValue(Body, rowIndex)
    val body = if (columns.bodyIsString) row.getUTF8String(columns.body).getBytes else row.getBinary(columns.body)
    val topic = if (optionTopic != null) optionTopic else columnTopic(row, rowIndex)
    val message = new Message(topic, body)
    if (present(row, columns.tags)) message.setTags(row.getUTF8String(columns.tags).toString)
    if (present(row, columns.keys)) setKeys(message, row)
    if (present(row, columns.properties)) putProperties(message, row, rowIndex)
    deliverTimeMs(row).foreach(message.setDeliverTimeMs)
    message
  }

  /** The row's sharding key: rows sharing one go to one queue, in order. Null when there is none. */
  def shardingKey(row: InternalRow): String =
    if (present(row, columns.shardingKey)) row.getUTF8String(columns.shardingKey).toString else null

  private def present(row: InternalRow, ordinal: Int): Boolean = ordinal >= 0 && !row.isNullAt(ordinal)

  private def setKeys(message: Message, row: InternalRow): Unit =
    if (!columns.keysIsArray) message.setKeys(row.getUTF8String(columns.keys).toString)
    else {
      val keys = row.getArray(columns.keys)
      keyBuilder.setLength(0)
      var i = 0
      while (i < keys.numElements()) {
        if (!keys.isNullAt(i)) {
          if (keyBuilder.length > 0) keyBuilder.append(MessageConst.KEY_SEPARATOR)
          keyBuilder.append(keys.getUTF8String(i).toString)
        }
        i += 1
      }
      if (keyBuilder.length > 0) message.setKeys(keyBuilder.toString)
    }

  private def putProperties(message: Message, row: InternalRow, rowIndex: Long): Unit = {
    val map = row.getMap(columns.properties)
    val (names, values) = (map.keyArray(), map.valueArray())
    var i = 0
    while (i < map.numElements()) {
      val name = names.getUTF8String(i).toString
      val problem =
        if (name.trim.isEmpty) Some("BLANK")
        else if (MessageConst.STRING_HASH_SET.contains(name)) Some("RESERVED")
        else if (name.exists(c => c == '\u0001' || c == '\u0002')) Some("CONTROL_CHARACTER")
        else None
      problem.foreach(p => throw RocketMQErrors.invalidPropertyName(Properties, name, rowIndex, p))
      if (!values.isNullAt(i)) message.putUserProperty(name, values.getUTF8String(i).toString)
      i += 1
    }
  }

  private def deliverTimeMs(row: InternalRow): Option[Long] =
    if (present(row, columns.deliverTime)) {
      val value = row.getLong(columns.deliverTime)
      Some(if (columns.deliverTimeIsTimestamp) Math.floorDiv(value, 1000L) else value)
    } else settings.deliveryDelayMs.map(System.currentTimeMillis() + _)
}
