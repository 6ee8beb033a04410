package org.apache.spark.sql.rocketmq

import java.util.Locale

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper

import org.apache.spark.SparkThrowable

/**
 * An error of the RocketMQ connector: a named condition (see `error/rocketmq-error-conditions.json`),
 * its SQLSTATE and the parameters its message was built from.
 */
private[rocketmq] class RocketMQException(
    condition: String,
    sqlState: String,
    parameters: Map[String, String],
    message: String,
    cause: Throwable)
  extends RuntimeException(message, cause)
  with SparkThrowable {
  override def getCondition: String = condition
  override def getSqlState: String = sqlState
  override def getMessageParameters: java.util.Map[String, String] = parameters.asJava
}

/** The same, for bad input (options, columns): an `IllegalArgumentException`, as PySpark expects. */
private[rocketmq] class RocketMQIllegalArgumentException(
    condition: String,
    sqlState: String,
    parameters: Map[String, String],
    message: String)
  extends IllegalArgumentException(message)
  with SparkThrowable {
  override def getCondition: String = condition
  override def getSqlState: String = sqlState
  override def getMessageParameters: java.util.Map[String, String] = parameters.asJava
}

/** The one factory of the connector's errors; each method is one condition. */
private[rocketmq] object RocketMQErrors {

  private case class Template(message: String, sqlState: String)

  private lazy val templates: Map[String, Template] = {
    val stream = getClass.getResourceAsStream("/error/rocketmq-error-conditions.json")
    require(stream != null, "error/rocketmq-error-conditions.json is missing from the connector jar")
    try {
      val root = new ObjectMapper().readTree(stream)
      root.fieldNames().asScala.map { name =>
        val node = root.get(name)
        val message = node.get("message").elements().asScala.map(_.asText()).mkString("\n")
        name -> Template(message, node.get("sqlState").asText())
      }.toMap
    } finally stream.close()
  }

  /** The full message of a condition: `[CONDITION] text`, placeholders filled in. */
  def message(condition: String, parameters: Map[String, String]): String = {
    val template = templates.getOrElse(condition, sys.error(s"unknown error condition $condition"))
    val text = parameters.foldLeft(template.message) { case (acc, (k, v)) => acc.replace(s"<$k>", v) }
    s"[$condition] $text"
  }

  private def illegal(condition: String, parameters: (String, String)*): RocketMQIllegalArgumentException = {
    val params = parameters.toMap
    new RocketMQIllegalArgumentException(
      condition, templates(condition).sqlState, params, message(condition, params))
  }

  private def runtime(condition: String, cause: Throwable, parameters: (String, String)*): RocketMQException = {
    val params = parameters.toMap
    new RocketMQException(condition, templates(condition).sqlState, params, message(condition, params), cause)
  }

  /** A failure's message followed by its causes' (RocketMQ often wraps the telling one). */
  private def describe(t: Throwable): String =
    Iterator.iterate(t)(_.getCause).takeWhile(_ != null).take(4).toSeq
      .map(c => Option(c.getMessage).map(_.trim).filter(_.nonEmpty).getOrElse(c.getClass.getSimpleName))
      .distinct.mkString(" <- caused by: ")

  def missingOption(option: String, allowed: String): Throwable =
    illegal("ROCKETMQ_MISSING_OPTION", "option" -> option, "allowed" -> allowed)

  def invalidOption(option: String, value: String, allowed: String): Throwable =
    illegal("ROCKETMQ_INVALID_OPTION_VALUE", "option" -> option, "value" -> value, "allowed" -> allowed)

  def optionNotAllowed(option: String, queryType: String, reason: String): Throwable =
    illegal("ROCKETMQ_OPTION_NOT_ALLOWED", "option" -> option, "queryType" -> queryType, "reason" -> reason)

  def conflictingOptions(options: Seq[String]): Throwable =
    illegal("ROCKETMQ_CONFLICTING_OPTIONS", "options" -> options.map(o => s"'$o'").mkString(", "))

  def unknownQueue(option: String, queue: RocketMQQueue, known: Iterable[RocketMQQueue]): Throwable =
    illegal(
      "ROCKETMQ_UNKNOWN_QUEUE",
      "option" -> option,
      "queue" -> queue.toString,
      "topic" -> queue.topic,
      "known" -> known.toSeq.sorted.map(q => s"${q.brokerName}/${q.queueId}").mkString(", "))

  def startAfterEnd(queue: RocketMQQueue, start: Long, end: Long): Throwable =
    illegal("ROCKETMQ_START_AFTER_END", "queue" -> queue.toString, "start" -> start.toString, "end" -> end.toString)

  def saveModeNotSupported(mode: String): Throwable =
    illegal("ROCKETMQ_SAVE_MODE_NOT_SUPPORTED", "mode" -> mode.toLowerCase(Locale.ROOT))

  def missingColumn(column: String, allowed: String, columns: Seq[String]): Throwable =
    illegal(
      "ROCKETMQ_MISSING_COLUMN",
      "column" -> column,
      "allowed" -> allowed,
      "columns" -> columns.mkString(", "))

  def invalidColumnType(column: String, dataType: String, allowed: String): Throwable =
    illegal("ROCKETMQ_INVALID_COLUMN_TYPE", "column" -> column, "type" -> dataType, "allowed" -> allowed)

  def nullColumnValue(column: String, row: Long, allowed: String): Throwable =
    runtime("ROCKETMQ_NULL_COLUMN_VALUE", null, "column" -> column, "row" -> row.toString, "allowed" -> allowed)

  def invalidPropertyName(column: String, name: String, row: Long, problem: String): Throwable =
    illegal("ROCKETMQ_INVALID_PROPERTY_NAME", "column" -> column, "name" -> name, "row" -> row.toString,
      "problem" -> problem)

  def topicNotFound(topic: String, nameServer: String): Throwable =
    illegal("ROCKETMQ_TOPIC_NOT_FOUND", "topic" -> topic, "nameServer" -> nameServer)

  def nameServerUnreachable(nameServer: String, what: String, attempts: Int, timeoutMs: Long, cause: Throwable)
    : Throwable =
    runtime(
      "ROCKETMQ_NAME_SERVER_UNREACHABLE",
      cause,
      "nameServer" -> nameServer,
      "what" -> what,
      "attempts" -> attempts.toString,
      "timeoutMs" -> timeoutMs.toString,
      "cause" -> describe(cause))

  def brokerRequestFailed(what: String, broker: String, attempts: Int, cause: Throwable): Throwable =
    runtime(
      "ROCKETMQ_BROKER_REQUEST_FAILED",
      cause,
      "what" -> what,
      "broker" -> broker,
      "attempts" -> attempts.toString,
      "cause" -> describe(cause))

  private def queueParameters(queue: RocketMQQueue): Seq[(String, String)] =
    Seq("topic" -> queue.topic, "broker" -> queue.brokerName, "queueId" -> queue.queueId.toString)

  def dataLoss(queue: RocketMQQueue, from: Long, until: Long, reason: String): Throwable =
    runtime("ROCKETMQ_DATA_LOSS", null, queueParameters(queue) ++ Seq(
      "fromOffset" -> from.toString, "untilOffset" -> until.toString, "reason" -> reason): _*)

  def queueGone(queue: RocketMQQueue, from: Long): Throwable =
    runtime("ROCKETMQ_DATA_LOSS_QUEUE_GONE", null, queueParameters(queue) :+ ("fromOffset" -> from.toString): _*)

  def pullFailed(queue: RocketMQQueue, offset: Long, cause: Throwable): Throwable =
    runtime("ROCKETMQ_PULL_FAILED", cause,
      queueParameters(queue) ++ Seq("offset" -> offset.toString, "cause" -> describe(cause)): _*)

  def invalidCheckpointOffset(json: String, detail: String): Throwable =
    illegal("ROCKETMQ_INVALID_CHECKPOINT_OFFSET", "json" -> json, "detail" -> detail)

  def sendFailed(topic: String, cause: Throwable): Throwable =
    runtime("ROCKETMQ_SEND_FAILED", cause, "topic" -> topic, "cause" -> describe(cause))

  def sendNotAcknowledged(pending: Int, waitMs: Long): Throwable =
    runtime("ROCKETMQ_SEND_NOT_ACKNOWLEDGED", null, "pending" -> pending.toString, "waitMs" -> waitMs.toString)
}
