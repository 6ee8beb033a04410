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

import com.fasterxml.jackson.core.{JsonFactory, JsonParser, JsonProcessingException, JsonToken}
import org.apache.rocketmq.common.message.{Message, MessageAccessor, MessageConst}

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.rocketmq.errors.RocketMQErrors
import org.apache.spark.unsafe.Platform
import org.apache.spark.unsafe.types.UTF8String
import org.apache.spark.sql.rocketmq.producer.RocketMQWriteSettings

/**
 * Turns one row of the written DataFrame into a RocketMQ message, reading only the columns
 * [[RocketMQWriteColumns]] located. Values Spark could not check when the write was planned (nulls,
 * property names and values, the JSON of a STRING properties column) are checked here, with errors
 * naming the column and the row.
 *
 * Properties come as a map, or as the JSON text a read gives ([[RocketMQMessageToRow]]). A map is
 * what a user built, so a name RocketMQ reserves is refused. The text records a stored message,
 * whose reserved properties sit beside the user's: its `TAGS` and `KEYS` become the message's tags
 * and keys where no `tags` or `keys` column gives them, and the other reserved ones (the stored
 * message's id, delivery time, transaction ...) are left for the producer and broker to set anew.
 */
private[rocketmq] final class RocketMQRowToMessage(settings: RocketMQWriteSettings,
    columns: RocketMQWriteColumns) {
  import RocketMQWriteColumns._

  private val keyBuilder = new java.lang.StringBuilder()

  /**
   * The topic option's name on the brokers; for a topic column, the last row's (rows mostly share
   * one).
   */
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
    val body = if (columns.bodyIsString) row.getUTF8String(columns.body).getBytes
    else row.getBinary(columns.body)
    val topic = if (optionTopic != null) optionTopic else columnTopic(row, rowIndex)
    val message = new Message(topic, body)
    if (present(row, columns.tags)) message.setTags(row.getUTF8String(columns.tags).toString)
    if (present(row, columns.keys)) setKeys(message, row)
    if (present(row, columns.properties)) {
      if (columns.propertiesIsJson) putJsonProperties(message, row, rowIndex)
      else putProperties(message, row, rowIndex)
    }
    deliverTimeMs(row).foreach(message.setDeliverTimeMs)
    if (present(row, columns.priority)) setPriority(message, row, rowIndex)
    if (present(row, columns.liteTopic)) setLiteTopic(message, row, rowIndex)
    message
  }

  /**
   * The row's lite topic (RocketMQ 5.5): a broker with lite topics on files the message under it
   * too, as it stores it; a name RocketMQ's own clients would refuse is refused here.
   */
  private def setLiteTopic(message: Message, row: InternalRow, rowIndex: Long): Unit = {
    val text = row.getUTF8String(columns.liteTopic)
    val (bytes, name) = (text.numBytes(), text.toString)
    if (bytes == 0 || bytes > RocketMQRowToMessage.LiteTopicMaxBytes ||
      !RocketMQRowToMessage.isLiteTopicName(name)) {
      throw RocketMQErrors.invalidLiteTopic(name, rowIndex)
    }
    if (message.getDeliverTimeMs > 0) {
      throw RocketMQErrors.liteTopicNotSupported("DELIVERY_TIME", rowIndex)
    }
    MessageAccessor.setLiteTopic(message, name)
  }

  /**
   * The row's priority (RocketMQ 5.4 and later put it in queue `min(priority, queues - 1)`), where
   * nothing else in the message makes the broker drop it.
   */
  private def setPriority(message: Message, row: InternalRow, rowIndex: Long): Unit = {
    val priority = row.getInt(columns.priority)
    if (priority < 0) throw RocketMQErrors.invalidPriority(priority, rowIndex)
    if (present(row, columns.shardingKey)) {
      throw RocketMQErrors.priorityNotHonoured("SHARDING_KEY", "a sharding key", rowIndex)
    }
    if (message.getDeliverTimeMs > 0) {
      throw RocketMQErrors.priorityNotHonoured("DELIVERY_TIME", "a delivery time", rowIndex)
    }
    message.setPriority(priority)
  }

  /**
   * The row's sharding key: rows sharing one go to one queue, in order. Null when there is none.
   */
  def shardingKey(row: InternalRow): String =
    if (present(row, columns.shardingKey)) row.getUTF8String(columns.shardingKey).toString else null

  private def present(row: InternalRow, ordinal: Int): Boolean = ordinal >= 0 &&
    !row.isNullAt(ordinal)

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
      checkPropertyName(name, rowIndex)
      if (MessageConst.STRING_HASH_SET.contains(name)) {
        throw RocketMQErrors.invalidProperty("NAME", Properties, name, rowIndex, "RESERVED")
      }
      if (!values.isNullAt(i)) putValue(message, name, values.getUTF8String(i).toString, rowIndex)
      i += 1
    }
  }

  private def checkPropertyName(name: String, rowIndex: Long): Unit = {
    val problem =
      if (name.trim.isEmpty) "BLANK"
      else if (name.exists(c => c == '\u0001' || c == '\u0002')) "CONTROL_CHARACTER"
      else null
    if (problem != null) {
      throw RocketMQErrors.invalidProperty("NAME", Properties, name, rowIndex, problem)
    }
  }

  /**
   * Puts a user property, its value checked: RocketMQ refuses a blank one (trimmed as here) with a
   * bare IllegalArgumentException that names neither the row nor the property.
   */
  private def putValue(message: Message, name: String, value: String, rowIndex: Long): Unit = {
    if (value.trim.isEmpty) {
      throw RocketMQErrors.invalidProperty("VALUE", Properties, name, rowIndex, "BLANK")
    }
    message.putUserProperty(name, value)
  }

  /**
   * The properties of a JSON object of strings (null values skipped), parsed straight from the
   * row's bytes. Anything else fails naming the row and what is wrong.
   */
  private def putJsonProperties(message: Message, row: InternalRow, rowIndex: Long): Unit = {
    val text = row.getUTF8String(columns.properties)
    def invalid(problem: String) =
      RocketMQErrors.invalidPropertiesJson(Properties, text.toString, rowIndex, problem)
    val parser = RocketMQRowToMessage.parserOf(text)
    try {
      if (parser.nextToken() != JsonToken.START_OBJECT) throw invalid("it is not an object")
      var token = parser.nextToken()
      while (token == JsonToken.FIELD_NAME) {
        val name = parser.currentName()
        parser.nextToken() match {
          case JsonToken.VALUE_STRING => putJsonProperty(message, name, parser.getText, rowIndex)
          case JsonToken.VALUE_NULL =>
          case other => throw invalid(
              s"the value of '$name' is ${RocketMQRowToMessage.describe(other)}, not a string")
        }
        token = parser.nextToken()
      }
      // The parser has checked the object is closed; nothing may follow it.
      if (parser.nextToken() != null) throw invalid("more follows the object")
    } catch {
      case e: JsonProcessingException =>
        throw invalid(s"it is not valid JSON: ${e.getOriginalMessage}")
    } finally parser.close()
  }

  private def putJsonProperty(message: Message, name: String, value: String, rowIndex: Long)
      : Unit = {
    checkPropertyName(name, rowIndex)
    if (!MessageConst.STRING_HASH_SET.contains(name)) putValue(message, name, value, rowIndex)
    else if (name == MessageConst.PROPERTY_TAGS) {
      if (message.getTags == null) message.setTags(value)
    } else if (name == MessageConst.PROPERTY_KEYS) {
      if (message.getKeys == null) message.setKeys(value)
    }
  }

  private def deliverTimeMs(row: InternalRow): Option[Long] =
    if (present(row, columns.deliverTime)) {
      val value = row.getLong(columns.deliverTime)
      Some(if (columns.deliverTimeIsTimestamp) Math.floorDiv(value, 1000L) else value)
    } else settings.deliveryDelayMs.map(System.currentTimeMillis() + _)
}

private[rocketmq] object RocketMQRowToMessage {
  private val Json = new JsonFactory()

  /** RocketMQ's limit on a lite topic's name (its proxy's default). */
  val LiteTopicMaxBytes = 64

  def isLiteTopicName(name: String): Boolean =
    name.forall(c =>
      (c >= 'a' && c <= 'z') ||
        (c >= 'A' && c <= 'Z') ||
        (c >= '0' && c <= '9') ||
        c == '-' || c == '_')

  /**
   * A parser of `text` reading its bytes where they are (a row's buffer, most often), without a
   * copy.
   */
  private def parserOf(text: UTF8String): JsonParser = text.getBaseObject match {
    case bytes: Array[Byte] =>
      Json.createParser(bytes, (text.getBaseOffset - Platform.BYTE_ARRAY_OFFSET).toInt,
        text.numBytes())
    case _ => Json.createParser(text.getBytes)
  }

  private def describe(token: JsonToken): String = token match {
    case JsonToken.START_OBJECT => "an object"
    case JsonToken.START_ARRAY => "an array"
    case JsonToken.VALUE_NUMBER_INT | JsonToken.VALUE_NUMBER_FLOAT => "a number"
    case JsonToken.VALUE_TRUE | JsonToken.VALUE_FALSE => "a boolean"
    case null => "missing"
    case other => other.toString
  }
}
