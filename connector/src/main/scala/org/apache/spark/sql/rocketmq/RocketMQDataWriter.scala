package org.apache.spark.sql.rocketmq

import java.util.concurrent.{Semaphore, TimeUnit}
import java.util.concurrent.atomic.AtomicReference

import org.apache.rocketmq.client.producer.{DefaultMQProducer, SendCallback, SendResult, SendStatus}
import org.apache.rocketmq.common.message.Message

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write.{DataWriter, DataWriterFactory, WriterCommitMessage}

private[rocketmq] class RocketMQDataWriterFactory(settings: RocketMQWriteSettings, columns: RocketMQWriteColumns)
  extends DataWriterFactory {
  override def createWriter(partitionId: Int, taskId: Long): DataWriter[InternalRow] =
    new RocketMQDataWriter(settings, columns)
}

/** What a successful write task reports: how many messages the brokers acknowledged. */
private[rocketmq] final case class RocketMQWriterCommitMessage(messagesSent: Long) extends WriterCommitMessage

/**
 * Turns rows into messages and sends them asynchronously, with at most `maxInFlightMessages`
 * unacknowledged at a time (the writer's memory bound). `commit()` returns only once every send of
 * the task is acknowledged; the first failed send fails the task with the broker's reason, so
 * Spark's task retry gives at-least-once delivery.
 */
private[rocketmq] class RocketMQDataWriter(settings: RocketMQWriteSettings, columns: RocketMQWriteColumns)
  extends DataWriter[InternalRow] {

  private val producer: DefaultMQProducer = RocketMQClients.newProducer(settings)
  private val inFlight = new Semaphore(settings.maxInFlightMessages)
  private val firstFailure = new AtomicReference[Throwable]()
  private var rowsWritten = 0L

  /** Resolves one send: records the first failure (naming the message's topic) and frees its slot. */
  private final class Acknowledgement(topic: String) extends SendCallback {
    override def onSuccess(result: SendResult): Unit = {
      if (result.getSendStatus != SendStatus.SEND_OK) {
        fail(new IllegalStateException(s"the broker answered ${result.getSendStatus}"))
      } else inFlight.release()
    }
    override def onException(e: Throwable): Unit = fail(e)
    private def fail(e: Throwable): Unit = {
      firstFailure.compareAndSet(null, RocketMQErrors.sendFailed(topic, e))
      inFlight.release()
    }
  }

  override def write(row: InternalRow): Unit = {
    throwIfFailed()
    val message = toMessage(row)
    inFlight.acquire()
    try producer.send(message, new Acknowledgement(message.getTopic), settings.sendTimeoutMs)
    catch {
      case e: Throwable =>
        inFlight.release()
        throw RocketMQErrors.sendFailed(message.getTopic, e)
    }
    rowsWritten += 1
  }

  private def toMessage(row: InternalRow): Message = {
    if (row.isNullAt(columns.body)) {
      throw RocketMQErrors.nullColumnValue(RocketMQWriteColumns.Body, rowsWritten, "a message needs a body")
    }
    val body = if (columns.bodyIsString) row.getUTF8String(columns.body).getBytes else row.getBinary(columns.body)
    val topic = settings.topic.getOrElse {
      if (row.isNullAt(columns.topic)) {
        throw RocketMQErrors.nullColumnValue(RocketMQWriteColumns.Topic, rowsWritten,
          s"set the topic in every row, or set option '${RocketMQOptionKeys.Topic}'")
      }
      row.getUTF8String(columns.topic).toString
    }
    val tags = if (columns.tags >= 0 && !row.isNullAt(columns.tags)) row.getUTF8String(columns.tags).toString else null
    new Message(topic, tags, body)
  }

  private def throwIfFailed(): Unit = {
    val failure = firstFailure.get()
    if (failure != null) throw failure
  }

  /** Waits until no send is in flight; false if some are still pending after the bound. */
  private def awaitAllAcknowledged(): Boolean = {
    // A send resolves (ack, failure or timeout) within sendTimeoutMs; leave room for callbacks.
    val waitMs = settings.sendTimeoutMs * 2 + 10000L
    val all = settings.maxInFlightMessages
    if (inFlight.tryAcquire(all, waitMs, TimeUnit.MILLISECONDS)) {
      inFlight.release(all)
      true
    } else false
  }

  override def commit(): WriterCommitMessage = {
    if (!awaitAllAcknowledged()) {
      throw RocketMQErrors.sendNotAcknowledged(
        settings.maxInFlightMessages - inFlight.availablePermits(), settings.sendTimeoutMs * 2 + 10000L)
    }
    throwIfFailed()
    RocketMQWriterCommitMessage(rowsWritten)
  }

  override def abort(): Unit = awaitAllAcknowledged()

  override def close(): Unit = RocketMQClients.shutdownQuietly(producer)
}
