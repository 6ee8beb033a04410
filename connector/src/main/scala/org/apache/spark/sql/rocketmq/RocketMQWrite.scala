package org.apache.spark.sql.rocketmq

import org.apache.spark.sql.connector.write.{BatchWrite, DataWriterFactory, PhysicalWriteInfo, WriterCommitMessage}
import org.apache.spark.sql.types.{BinaryType, DataType, StringType, StructType}

/** What a write task needs: connection and send settings. */
private[rocketmq] final case class RocketMQWriteSettings(
    nameServer: String,
    topic: Option[String],
    sendTimeoutMs: Long,
    maxInFlightMessages: Int)

private[rocketmq] object RocketMQWriteSettings {
  def apply(options: RocketMQOptions): RocketMQWriteSettings =
    RocketMQWriteSettings(options.nameServer, options.topicToWrite, options.sendTimeoutMs, options.maxInFlightMessages)
}

/**
 * Where each message field comes from in the rows written: column ordinals, -1 when absent. The
 * schema is checked once, when the write is planned, so that a wrong column fails before any send.
 */
private[rocketmq] final case class RocketMQWriteColumns(
    body: Int,
    bodyIsString: Boolean,
    topic: Int,
    tags: Int)

private[rocketmq] object RocketMQWriteColumns {
  val Body = "body"
  val Topic = "topic"
  val Tags = "tags"

  def resolve(schema: StructType, topicOption: Option[String]): RocketMQWriteColumns = {
    val names = schema.fieldNames.toSeq
    def ordinal(name: String): Int = names.indexWhere(_.equalsIgnoreCase(name))
    def checkType(name: String, allowed: Seq[DataType], allowedText: String): Unit = {
      val i = ordinal(name)
      if (i >= 0 && !allowed.contains(schema(i).dataType)) {
        throw RocketMQErrors.invalidColumnType(name, schema(i).dataType.sql, allowedText)
      }
    }

    val body = ordinal(Body)
    if (body < 0) throw RocketMQErrors.missingColumn(Body, "the message body, of type STRING or BINARY", names)
    checkType(Body, Seq(StringType, BinaryType), "STRING or BINARY")
    checkType(Topic, Seq(StringType), "STRING")
    checkType(Tags, Seq(StringType), "STRING")

    val topic = if (topicOption.isDefined) -1 else ordinal(Topic)
    if (topicOption.isEmpty && topic < 0) {
      throw RocketMQErrors.missingColumn(Topic,
        s"set option '${RocketMQOptionKeys.Topic}', or give each row its topic in a STRING column 'topic'", names)
    }
    RocketMQWriteColumns(body, schema(body).dataType == StringType, topic, ordinal(Tags))
  }
}

/**
 * A batch write to RocketMQ. Every task sends its rows and commits only when the broker has
 * acknowledged each of them; there is nothing to do at job level (RocketMQ has no transaction to
 * close), so a failed job may leave the messages of its successful tasks: at-least-once.
 */
private[rocketmq] class RocketMQBatchWrite(settings: RocketMQWriteSettings, columns: RocketMQWriteColumns)
  extends BatchWrite {

  override def createBatchWriterFactory(info: PhysicalWriteInfo): DataWriterFactory =
    new RocketMQDataWriterFactory(settings, columns)

  override def useCommitCoordinator(): Boolean = false

  override def commit(messages: Array[WriterCommitMessage]): Unit = ()

  override def abort(messages: Array[WriterCommitMessage]): Unit = ()
}
