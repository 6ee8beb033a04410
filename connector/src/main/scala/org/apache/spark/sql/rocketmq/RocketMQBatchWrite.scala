package org.apache.spark.sql.rocketmq

import org.apache.spark.sql.connector.write.{BatchWrite, DataWriterFactory, PhysicalWriteInfo, WriterCommitMessage}
import org.apache.spark.sql.rocketmq.producer.RocketMQWriteSettings

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
