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
package org.apache.spark.sql.rocketmq.errors

import java.util.Locale

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.rocketmq.{RocketMQExceptionConstructors, RocketMQInvalidInputException}
import org.apache.spark.sql.rocketmq.common.RocketMQQueue

/**
 * The errors of what was asked for that cannot be done as given: options, catalog tables (and what
 * a catalog cannot do to a topic at all), what the options name, the rows written. Part of
 * [[RocketMQErrors]], the one factory callers use, which renders the messages.
 */
private[rocketmq] trait RocketMQInvalidInputErrors {

  // Rendered by RocketMQErrors, which reads the error conditions.
  protected def invalidInput(condition: String, parameters: (String, String)*)
      : RocketMQInvalidInputException

  protected def message(condition: String, parameters: Map[String, String]): String

  private[rocketmq] def sqlState(condition: String): String

  // ---- options ----

  /** The sub-condition, which says what to set, is the option's key in SCREAMING_SNAKE_CASE. */
  def missingOption(option: String): Throwable = {
    val sub = option.replaceAll("([a-z])([A-Z])", "$1_$2").toUpperCase(Locale.ROOT)
    invalidInput(s"ROCKETMQ_MISSING_OPTION.$sub", "option" -> option)
  }

  /** `sub` names what the value must be (see the JSON file); `details` fill its placeholders. */
  def invalidOption(option: String, value: String, sub: String, details: (String, String)*)
      : Throwable =
    invalidInput(s"ROCKETMQ_INVALID_OPTION_VALUE.$sub",
      Seq("option" -> option, "value" -> value) ++ details: _*)

  /**
   * Per-queue JSON of an option with the wrong shape; `sub` and `details` come from
   * [[RocketMQOffsetsJson]].
   */
  def invalidOffsetsJson(option: String, value: String, sub: String, details: Seq[(String, String)])
      : Throwable =
    invalidInput(s"ROCKETMQ_INVALID_OFFSETS_JSON.$sub",
      Seq("option" -> option, "value" -> value) ++ details: _*)

  def conflictingOptions(options: Seq[String]): Throwable =
    invalidInput("ROCKETMQ_CONFLICTING_OPTIONS",
      "options" -> options.map(o => s"'$o'").mkString(", "))

  /** `topicPattern` needs the topic list, which the endpoint (a proxy, an ACL) refused. */
  def topicListRefused(pattern: String, nameServer: String, cause: Throwable): Throwable =
    invalidInput("ROCKETMQ_TOPIC_LIST_REFUSED", "pattern" -> pattern, "nameServer" -> nameServer,
      "cause" -> String.valueOf(cause))

  /** `sub`: the kind of query the option does not apply to (BATCH …), or UNKNOWN_OPTION. */
  def optionNotAllowed(option: String, sub: String, details: (String, String)*): Throwable =
    invalidInput(s"ROCKETMQ_OPTION_NOT_ALLOWED.$sub", ("option" -> option) +: details: _*)

  def exactlyOnceNeedsCheckpoint(): Throwable =
    invalidInput("ROCKETMQ_EXACTLY_ONCE_NEEDS_CHECKPOINT")

  /**
   * Half a credential in `place`: `present` is set there, `missing` is not (names as that place
   * spells them).
   */
  def incompleteCredentials(place: String, present: String, missing: String): Throwable =
    invalidInput("ROCKETMQ_INCOMPLETE_CREDENTIALS", "place" -> place, "present" -> present,
      "missing" -> missing)

  // ---- the catalog ----

  /**
   * A CREATE TABLE property of topic `topic` that cannot be used: `sub` (QUEUES, UNKNOWN_CLUSTER or
   * UNKNOWN_PROPERTY) says what is allowed, `details` fill its placeholders.
   */
  def invalidTableProperty(property: String, value: String, topic: String, sub: String,
      details: (String, String)*)
      : Throwable =
    invalidInput(s"ROCKETMQ_INVALID_TABLE_PROPERTY.$sub",
      Seq("property" -> property, "value" -> value, "topic" -> topic) ++ details: _*)

  /**
   * A query's writer option `option` (set to `value`) that catalog table `table` of topic `topic`
   * fixes.
   */
  def optionFixedByTable(option: String, value: String, table: String, topic: String): Throwable =
    invalidInput("ROCKETMQ_OPTION_NOT_ALLOWED.CATALOG_TABLE", "option" -> option, "value" -> value,
      "table" -> table,
      "topic" -> topic)

  /**
   * What catalog `catalog` cannot do to `table` (qualified by the catalog's name): `sub` names the
   * operation (ALTER_TABLE, RENAME_TABLE, COLUMNS, PARTITIONING, DROP_TABLE, DROP_ROCKETMQ_TOPIC),
   * `details` fill its placeholders.
   */
  def catalogOperationNotSupported(catalog: String, table: String, sub: String,
      details: (String, String)*)
      : Throwable = {
    val condition = s"ROCKETMQ_CATALOG_OPERATION_NOT_SUPPORTED.$sub"
    val params = (Seq("catalog" -> catalog, "table" -> table) ++ details).toMap
    RocketMQExceptionConstructors.unsupportedOperation(condition, sqlState(condition),
      params.asJava,
      message(condition, params), null)
  }

  // ---- what the options name, checked against the brokers ----

  def unknownQueue(option: String, queue: RocketMQQueue, known: Iterable[RocketMQQueue])
      : Throwable =
    invalidInput("ROCKETMQ_UNKNOWN_QUEUE", "option" -> option, "queue" -> queue.toString,
      "topic" -> queue.topic,
      "known" -> known.toSeq.sorted.map(q => s"${q.brokerName}/${q.queueId}").mkString(", "))

  def startAfterEnd(queue: RocketMQQueue, start: Long, end: Long): Throwable =
    invalidInput("ROCKETMQ_START_AFTER_END", "queue" -> queue.toString, "start" -> start.toString,
      "end" -> end.toString)

  /** A SQL filter, which brokers do not apply to compacted topics, on `topics`. */
  def sqlFilterOnCompactedTopic(topics: Seq[String]): Throwable =
    invalidInput("ROCKETMQ_SQL_FILTER_ON_COMPACTED_TOPIC",
      "topics" -> topics.map(t => s"'$t'").mkString(", "))

  def topicNotFound(topic: String, nameServer: String): Throwable =
    invalidInput("ROCKETMQ_TOPIC_NOT_FOUND", "topic" -> topic, "nameServer" -> nameServer)

  /** `sub` and `details` come from [[RocketMQSourceOffset]] or [[RocketMQOffsetsJson]]. */
  def invalidCheckpointOffset(json: String, sub: String, details: Seq[(String, String)])
      : Throwable =
    invalidInput(s"ROCKETMQ_INVALID_CHECKPOINT_OFFSET.$sub", ("json" -> json) +: details: _*)

  // ---- the data written ----

  def saveModeNotSupported(mode: String): Throwable =
    invalidInput("ROCKETMQ_SAVE_MODE_NOT_SUPPORTED", "mode" -> mode.toLowerCase(Locale.ROOT))

  /** `column`: body or topic, which is also the sub-condition. */
  def missingColumn(column: String, columns: Seq[String]): Throwable =
    invalidInput(s"ROCKETMQ_MISSING_COLUMN.${column.toUpperCase(Locale.ROOT)}",
      "column" -> column, "columns" -> columns.mkString(", "))

  def invalidColumnType(column: String, dataType: String, allowedTypes: String): Throwable =
    invalidInput("ROCKETMQ_INVALID_COLUMN_TYPE", "column" -> column, "type" -> dataType,
      "allowedTypes" -> allowedTypes)

  /** `column`: body or topic, which is also the sub-condition. */
  def nullColumnValue(column: String, row: Long): Throwable =
    invalidInput(s"ROCKETMQ_NULL_COLUMN_VALUE.${column.toUpperCase(Locale.ROOT)}",
      "column" -> column, "row" -> row.toString)

  def invalidPriority(value: Long, row: Long): Throwable =
    invalidInput("ROCKETMQ_INVALID_PRIORITY", "value" -> value.toString, "row" -> row.toString)

  def invalidLiteTopic(value: String, row: Long): Throwable =
    invalidInput("ROCKETMQ_INVALID_LITE_TOPIC", "value" -> value, "row" -> row.toString)

  /**
   * Rows with a lite topic beside what the connector sends them without: `sub` DELIVERY_TIME or
   * EXACTLY_ONCE. `row` -1: every row (the write's options).
   */
  def liteTopicNotSupported(sub: String, row: Long): Throwable =
    invalidInput(s"ROCKETMQ_LITE_TOPIC_NOT_SUPPORTED.$sub",
      "rows" -> (if (row < 0) "Every row" else s"Row $row"))

  /** A row without keys written to compacted topic `topic` (its name on the brokers). */
  def keysRequired(topic: String, row: Long): Throwable =
    invalidInput("ROCKETMQ_KEYS_REQUIRED", "topic" -> topic, "row" -> row.toString)

  /**
   * A row's priority beside what makes RocketMQ drop it: `sub` SHARDING_KEY, DELIVERY_TIME or
   * EXACTLY_ONCE, `other` how the message says it. `row` -1: every row (the write's options).
   */
  def priorityNotHonoured(sub: String, other: String, row: Long): Throwable =
    invalidInput(s"ROCKETMQ_PRIORITY_NOT_HONOURED.$sub", "other" -> other,
      "rows" -> (if (row < 0) "Every row" else s"Row $row"))

  /** Property `name` of a row: `part` NAME or VALUE, `sub` what is wrong with it. */
  def invalidProperty(part: String, column: String, name: String, row: Long, sub: String)
      : Throwable =
    invalidInput(s"ROCKETMQ_INVALID_PROPERTY_$part.$sub", "column" -> column, "name" -> name,
      "row" -> row.toString)

  /**
   * A STRING properties value that is not a JSON object of strings, shown up to
   * [[ShownValueLength]] characters; `problem` says what is wrong with it.
   */
  def invalidPropertiesJson(column: String, value: String, row: Long, problem: String)
      : Throwable = {
    val shown =
      if (value.length <= ShownValueLength) value
      else s"${value.take(ShownValueLength)}... (${value.length} characters in all)"
    invalidInput("ROCKETMQ_INVALID_PROPERTIES_JSON", "column" -> column, "value" -> shown,
      "row" -> row.toString,
      "problem" -> problem)
  }

  /** How much of a row's value an error shows. */
  private val ShownValueLength = 200
}
