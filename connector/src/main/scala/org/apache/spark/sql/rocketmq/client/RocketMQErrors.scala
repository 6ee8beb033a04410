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

package org.apache.spark.sql.rocketmq.client

import java.util.Locale

import scala.jdk.CollectionConverters._

import org.apache.spark.ErrorClassesJsonReader
import org.apache.spark.sql.rocketmq.{
  RocketMQDataLossException, RocketMQExceptionConstructors, RocketMQInvalidInputException,
  RocketMQRequestException
}

/**
 * The one factory of the connector's errors: a method per condition, each naming its parameters.
 * Messages come from `error/rocketmq-error-conditions.json` through Spark's own reader of error
 * conditions (present since Spark 3.5, so the same code runs on every Spark the connector
 * supports), prefixed with `[CONDITION]` as Spark's own errors are. Four exception types tell the
 * kinds of failure apart: [[RocketMQInvalidInputException]] (what was asked for cannot be done as
 * given), [[RocketMQUnsupportedOperationException]] (what the catalog was asked cannot be done to a
 * topic at all), [[RocketMQDataLossException]] and [[RocketMQRequestException]] (RocketMQ did not
 * answer as needed).
 */
private[rocketmq] object RocketMQErrors {
  import RocketMQErrorKinds._

  private lazy val reader = {
    val url = getClass.getClassLoader.getResource("error/rocketmq-error-conditions.json")
    require(url != null, "error/rocketmq-error-conditions.json is missing from the connector jar")
    new ErrorClassesJsonReader(Seq(url))
  }

  /**
   * Every condition of the JSON file, with `MAIN.SUB` for each sub-condition (tests render them
   * all).
   */
  private[rocketmq] def allConditions: Seq[String] = reader.errorInfoMap.toSeq.flatMap {
    case (name, info) =>
      info.subClass.map(_.keys.toSeq.map(sub => s"$name.$sub")).getOrElse(Seq(name))
  }.sorted

  /** The template of a condition, placeholders unfilled (tests check that each one is filled). */
  private[rocketmq] def template(condition: String): String = reader.getMessageTemplate(condition)

  private def message(condition: String, parameters: Map[String, String]): String =
    s"[$condition] ${reader.getErrorMessage(condition, parameters)}"

  private[rocketmq] def sqlState(condition: String): String = reader.getSqlState(condition)

  private def invalidInput(condition: String, parameters: (String, String)*)
      : RocketMQInvalidInputException = {
    val params = parameters.toMap
    RocketMQExceptionConstructors.invalidInput(condition, sqlState(condition), params.asJava,
      message(condition, params), null)
  }

  private def dataLossError(condition: String, parameters: (String, String)*)
      : RocketMQDataLossException = {
    val params = parameters.toMap
    RocketMQExceptionConstructors.dataLoss(condition, sqlState(condition), params.asJava,
      message(condition, params), null)
  }

  /** With a `cause`, its description fills the message's `<cause>`. */
  private def requestFailed(condition: String, cause: Throwable, parameters: (String, String)*)
      : RocketMQRequestException = {
    val params = parameters.toMap ++ Option(cause).map(c => "cause" -> describe(c))
    RocketMQExceptionConstructors.requestFailed(condition, sqlState(condition), params.asJava,
      message(condition, params), cause)
  }

  /** A failure's message followed by its causes' (RocketMQ often wraps the telling one). */
  private def describe(t: Throwable): String =
    Iterator.iterate(t)(_.getCause).takeWhile(_ != null).take(4).toSeq
      .map(c =>
        Option(c.getMessage).map(_.trim).filter(_.nonEmpty).getOrElse(c.getClass.getSimpleName))
      .distinct.mkString(" <- caused by: ")

  private def queueParameters(queue: RocketMQQueue): Seq[(String, String)] =
    Seq("topic" -> queue.topic, "broker" -> queue.brokerName, "queueId" -> queue.queueId.toString)

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

  // ---- data loss ----

  def dataLoss(queue: RocketMQQueue, from: Long, until: Long, reason: DataLossReason)
      : RocketMQDataLossException =
    dataLossError(s"ROCKETMQ_DATA_LOSS.${reason.condition}",
      queueParameters(queue) ++ Seq(
        "fromOffset" -> from.toString, "untilOffset" -> until.toString) ++ reason.details: _*)

  def queueGone(queue: RocketMQQueue, from: Long): RocketMQDataLossException =
    dataLossError("ROCKETMQ_DATA_LOSS_QUEUE_GONE",
      queueParameters(queue) :+ ("fromOffset" -> from.toString): _*)

  // ---- requests ----

  def nameServerUnreachable(nameServer: String, topic: String, attempts: Int, timeoutMs: Long,
      cause: Throwable)
      : Throwable =
    requestFailed(
      "ROCKETMQ_NAME_SERVER_UNREACHABLE",
      cause,
      "nameServer" -> nameServer,
      "topic" -> topic,
      "attempts" -> attempts.toString,
      "timeoutMs" -> timeoutMs.toString)

  def endpointUnchecked(nameServer: String, attempts: Int, timeoutMs: Long, cause: Throwable)
      : Throwable =
    requestFailed("ROCKETMQ_ENDPOINT_UNCHECKED", cause, "nameServer" -> nameServer,
      "attempts" -> attempts.toString, "timeoutMs" -> timeoutMs.toString)

  def brokerRequestFailed(broker: String, attempts: Int, cause: Throwable, request: BrokerRequest)
      : Throwable =
    requestFailed(s"ROCKETMQ_BROKER_REQUEST_FAILED.${request.condition}", cause,
      Seq("broker" -> broker, "attempts" -> attempts.toString) ++ request.details: _*)

  /**
   * A catalog request that `server` refuses as an admin request it does not serve (a RocketMQ 5
   * proxy).
   */
  def adminNotServed(server: String, cause: Throwable, request: AdminRequest): Throwable =
    requestFailed("ROCKETMQ_ADMIN_NOT_SERVED", cause, "server" -> server,
      "request" ->
        (request.condition.toLowerCase(java.util.Locale.ROOT).replace('_', ' ') +
          request.details.map { case (k, v) => s" $k '$v'" }.mkString))

  /**
   * A catalog's request to `server` (a name server or a broker, as the message shows it) failed for
   * good.
   */
  def adminRequestFailed(server: String, attempts: Int, cause: Throwable, request: AdminRequest)
      : Throwable =
    requestFailed(s"ROCKETMQ_ADMIN_REQUEST_FAILED.${request.condition}", cause,
      Seq("server" -> server, "attempts" -> attempts.toString) ++ request.details: _*)

  def pullFailed(queue: RocketMQQueue, offset: Long, cause: Throwable, gaveUp: GaveUp): Throwable =
    requestFailed(s"ROCKETMQ_PULL_FAILED.${gaveUp.condition}", cause,
      queueParameters(queue) ++ Seq("offset" -> offset.toString) ++ gaveUp.details: _*)

  /** A broker answer that leaves a pull where it was, `times` times in a row. */
  def pullAnsweredWithoutProgress(queue: RocketMQQueue, offset: Long, status: String,
      nextOffset: Long, times: Int)
      : Throwable =
    requestFailed("ROCKETMQ_PULL_FAILED.UNEXPECTED_ANSWER", null,
      queueParameters(queue) ++ Seq("offset" -> offset.toString, "status" -> status,
        "nextOffset" -> nextOffset.toString, "times" -> times.toString): _*)

  /**
   * A send given up. `queue` is the queue a sharding key pins the message to, as (broker group,
   * queue id), or None where the producer picks one among the live groups' queues.
   */
  def sendFailed(topic: String, queue: Option[(String, Int)], cause: Throwable, gaveUp: GaveUp)
      : Throwable =
    requestFailed(s"ROCKETMQ_SEND_FAILED.${gaveUp.condition}", cause,
      Seq("topic" -> topic, "destination" -> sendDestination(queue)) ++ gaveUp.details: _*)

  def sendStatusNotOk(topic: String, queue: Option[(String, Int)], status: String): Throwable =
    requestFailed("ROCKETMQ_SEND_FAILED.BROKER_STATUS", null, "topic" -> topic,
      "destination" -> sendDestination(queue), "status" -> status)

  private def sendDestination(queue: Option[(String, Int)]): String =
    queue.fold("to a queue the producer picks among the live broker groups") {
      case (group, id) => s"to queue $id of broker group '$group', which its sharding key picks"
    }

  /**
   * The connector (the driver planning, or a task) waited `waitedMs` for `broker` (None: for any
   * broker) to serve `topic`; with a [[NoServingBroker]] cause, for a broker group whose master is
   * down.
   */
  def brokerUnavailable(topic: String, broker: Option[String], nameServer: String, waitedMs: Long,
      cause: Throwable)
      : Throwable = (broker, cause) match {
    case (Some(name), _: NoServingBroker) =>
      requestFailed("ROCKETMQ_BROKER_UNAVAILABLE.NO_MASTER", cause, "topic" -> topic,
        "broker" -> name,
        "waitedMs" -> waitedMs.toString)
    case (Some(name), _) =>
      requestFailed("ROCKETMQ_BROKER_UNAVAILABLE.UNREACHABLE",
        Option(cause).getOrElse(
          new IllegalStateException("missing from the route")), "topic" -> topic, "broker" -> name,
        "nameServer" -> nameServer, "waitedMs" -> waitedMs.toString)
    case (None, _) =>
      requestFailed("ROCKETMQ_BROKER_UNAVAILABLE.NO_LIVE_BROKER", null, "topic" -> topic,
        "nameServer" -> nameServer, "waitedMs" -> waitedMs.toString)
  }

  /**
   * The broker groups option `expectedBrokerGroups` names did not all serve `topic` within
   * `waitedMs`.
   */
  def expectedGroupsMissing(topic: String, expected: RocketMQExpectedGroups, served: Set[String],
      waitedMs: Long)
      : Throwable =
    requestFailed("ROCKETMQ_BROKER_UNAVAILABLE.EXPECTED_GROUPS", null, "topic" -> topic,
      "missing" -> expected.describeMissing(served), "expected" -> expected.render,
      "served" ->
        (if (served.isEmpty) "no broker group"
         else served.toSeq.sorted.mkString("broker groups ", ", ", "")),
      "waitedMs" -> waitedMs.toString)

  /**
   * A real-time query needs a task slot for each of `queues` and for each task of its `laterStage`
   * at once, and the cluster has `slots`.
   */
  def realTimeSlotsShort(queues: Seq[String], laterStage: Option[String], needed: Int, slots: Int,
      master: String)
      : Throwable = {
    val shown = if (queues.size <= 16) queues.mkString(", ")
    else queues.take(16).mkString("", ", ", s", ... (${queues.size - 16} more)")
    invalidInput("ROCKETMQ_REAL_TIME_INSUFFICIENT_SLOTS", "needed" -> needed.toString,
      "slots" -> slots.toString,
      "master" -> master, "queueCount" -> queues.size.toString, "queues" -> shown,
      "laterStage" -> laterStage.fold("")(s => s", plus $s"))
  }

  /**
   * The driver waited `waitedMs` for `broker` to index the messages it had stored when a batch read
   * was planned.
   */
  def indexingBehind(topic: String, broker: String, behindBytes: Long, waitedMs: Long): Throwable =
    requestFailed("ROCKETMQ_BROKER_UNAVAILABLE.INDEXING_BEHIND", null, "topic" -> topic,
      "broker" -> broker,
      "behindBytes" -> behindBytes.toString, "waitedMs" -> waitedMs.toString)

  /**
   * The broker refused the credentials, or access to `topic` with them: the error names the access
   * key (never the secret) and where credentials come from.
   */
  def accessDenied(accessKey: Option[String], topic: String, cause: Throwable): Throwable =
    requestFailed("ROCKETMQ_ACCESS_DENIED", cause,
      "accessKey" -> accessKey.fold("(none: no credentials were given)")(k => s"'$k'"),
      "topic" -> topic)

  /** `failed`, unless `cause` is the broker refusing the credentials: then [[accessDenied]]. */
  def unlessAccessDenied(cause: Throwable, accessKey: Option[String], topic: String)(
      failed: => Throwable)
      : Throwable =
    if (RocketMQRetry.isAccessDenied(cause)) accessDenied(accessKey, topic, cause) else failed

  /**
   * An exactly-once batch write whose rows left to the broker's check-back were not committed by
   * `deadline`.
   */
  def transactionUnresolved(topic: String, count: Int, partitions: Seq[Int], deadline: String,
      timeoutMs: Long)
      : Throwable =
    requestFailed("ROCKETMQ_TRANSACTION_UNRESOLVED", null, "topic" -> topic,
      "count" -> count.toString,
      "partitions" -> partitions.sorted.mkString(", "), "deadline" -> deadline,
      "timeoutMs" -> timeoutMs.toString)

  def sendNotAcknowledged(pending: Int, waitMs: Long): Throwable =
    requestFailed("ROCKETMQ_SEND_NOT_ACKNOWLEDGED", null, "pending" -> pending.toString,
      "waitMs" -> waitMs.toString)

  /**
   * Why broker group `group` cannot serve `topic` now: its master is down and each of its replicas
   * refused (`reasons`, one per replica asked). Not data loss: a cause of [[brokerUnavailable]]
   * once the wait is over.
   */
  final class NoServingBroker(val group: String, topic: String, reasons: Seq[String])
    extends Exception(s"topic '$topic': no master in broker group '$group'" +
      (if (reasons.isEmpty) ", and no replica" else reasons.mkString("; ", "; ", "")))
}
