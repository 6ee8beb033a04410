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

import scala.jdk.CollectionConverters._

import org.apache.spark.ErrorClassesJsonReader
import org.apache.spark.sql.rocketmq.{
  RocketMQDataLossException, RocketMQExceptionConstructors, RocketMQInvalidInputException,
  RocketMQRequestException
}
import org.apache.spark.sql.rocketmq.common.{RocketMQExpectedGroups, RocketMQQueue, RocketMQRetry}

/**
 * The one factory of the connector's errors: a method per condition, each naming its parameters.
 * Messages come from `error/rocketmq-error-conditions.json` through Spark's own reader of error
 * conditions (present since Spark 3.5, so the same code runs on every Spark the connector
 * supports), prefixed with `[CONDITION]` as Spark's own errors are. Four exception types tell the
 * kinds of failure apart: [[RocketMQInvalidInputException]] (what was asked for cannot be done as
 * given), [[RocketMQUnsupportedOperationException]] (what the catalog was asked cannot be done to a
 * topic at all), [[RocketMQDataLossException]] and [[RocketMQRequestException]] (RocketMQ did not
 * answer as needed). Those of options, catalog tables and rows written are in
 * [[RocketMQInvalidInputErrors]].
 */
private[rocketmq] object RocketMQErrors extends RocketMQInvalidInputErrors {
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

  protected def message(condition: String, parameters: Map[String, String]): String =
    s"[$condition] ${reader.getErrorMessage(condition, parameters)}"

  private[rocketmq] def sqlState(condition: String): String = reader.getSqlState(condition)

  protected def invalidInput(condition: String, parameters: (String, String)*)
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
  /** `group`: where the producer picked the queue, the broker group the failure names. */
  def sendFailed(topic: String, queue: Option[(String, Int)], cause: Throwable, gaveUp: GaveUp,
      group: Option[String] = None): Throwable =
    requestFailed(s"ROCKETMQ_SEND_FAILED.${gaveUp.condition}", cause,
      Seq("topic" -> topic, "destination" -> sendDestination(queue, group)) ++ gaveUp.details: _*)

  def sendStatusNotOk(topic: String, queue: Option[(String, Int)], status: String): Throwable =
    requestFailed("ROCKETMQ_SEND_FAILED.BROKER_STATUS", null, "topic" -> topic,
      "destination" -> sendDestination(queue), "status" -> status)

  private def sendDestination(queue: Option[(String, Int)], picked: Option[String] = None)
      : String =
    queue.fold(picked.fold("to a queue the producer picks among the live broker groups")(g =>
      s"to a queue of broker group '$g', which the producer picked")) {
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
