package org.apache.spark.sql.rocketmq

import java.util.concurrent.{Semaphore, TimeUnit}
import java.util.concurrent.atomic.{AtomicLong, AtomicReference}

import org.apache.rocketmq.client.producer.{MessageQueueSelector, SendCallback, SendResult, SendStatus}
import org.apache.rocketmq.common.message.{Message, MessageQueue}

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.metric.CustomTaskMetric
import org.apache.spark.sql.connector.write.{DataWriter, DataWriterFactory, WriterCommitMessage}
import org.apache.spark.sql.connector.write.streaming.StreamingDataWriterFactory
import org.apache.spark.sql.rocketmq.producer.RocketMQProducerPool

/** Creates the writers of batch and streaming writes alike. */
private[rocketmq] class RocketMQDataWriterFactory(settings: RocketMQWriteSettings, columns: RocketMQWriteColumns)
  extends DataWriterFactory with StreamingDataWriterFactory {
  override def createWriter(partitionId: Int, taskId: Long): DataWriter[InternalRow] =
    new RocketMQDataWriter(settings, columns)
  override def createWriter(partitionId: Int, taskId: Long, epochId: Long): DataWriter[InternalRow] =
    new RocketMQDataWriter(settings, columns)
}

/**
 * Sends rows as messages asynchronously, with at most `maxInFlightMessages` unacknowledged at a time
 * (the writer's memory bound, whatever the partition's size). `commit()` returns only once every send
 * of the task is acknowledged; the first failure fails the task with the broker's reason, so Spark's
 * task retry gives at-least-once delivery. Retryable failures are resent up to `sendRetries` times,
 * except messages with a sharding key, which a resend could reorder.
 */
private[rocketmq] class RocketMQDataWriter(settings: RocketMQWriteSettings, columns: RocketMQWriteColumns)
  extends DataWriter[InternalRow] {

  private val lease = RocketMQProducerPool.borrow(settings)
  private val producer = lease.client
  private val converter = new RocketMQRowToMessage(settings, columns)
  private val inFlight = new Semaphore(settings.maxInFlightMessages)
  private val firstFailure = new AtomicReference[Throwable]()
  private val sent = new AtomicLong()
  private val bytesSent = new AtomicLong()
  private val retries = new AtomicLong()
  private val failedSends = new AtomicLong()
  private var rowsWritten = 0L

  /** One message on its way; resolves its slot exactly once. */
  private final class Send(message: Message, shardingKey: String) extends SendCallback {
    private var attempt = 0

    /**
     * Rows without a sharding key are sent asynchronously. Rows with one are sent synchronously: the
     * client's asynchronous sends run on a thread pool and would reach the queue out of order.
     */
    def start(): Unit =
      try {
        if (shardingKey == null) producer.send(message, this, settings.sendTimeoutMs)
        else onSuccess(producer.send(message, RocketMQDataWriter.ByShardingKey, shardingKey, settings.sendTimeoutMs))
      } catch { case e: Throwable => onException(e) }

    override def onSuccess(result: SendResult): Unit =
      if (result.getSendStatus != SendStatus.SEND_OK) {
        fail(new IllegalStateException(s"the broker answered ${result.getSendStatus}"))
      } else inFlight.release()

    override def onException(e: Throwable): Unit =
      if (shardingKey == null && attempt < settings.sendRetries && RocketMQRetry.isRetryable(e)) {
        attempt += 1
        retries.incrementAndGet()
        start()
      } else fail(e)

    private def fail(e: Throwable): Unit = {
      failedSends.incrementAndGet()
      lease.markBroken() // the next task gets a fresh producer, with fresh routes

      firstFailure.compareAndSet(null, RocketMQErrors.sendFailed(message.getTopic, e))
      inFlight.release()
    }
  }

  override def write(row: InternalRow): Unit = {
    throwIfFailed()
    val message = converter.toMessage(row, rowsWritten)
    val send = new Send(message, converter.shardingKey(row))
    inFlight.acquire()
    // Counted when handed to RocketMQ: Spark reads a writer's metrics before commit() waits for acks.
    sent.incrementAndGet()
    bytesSent.addAndGet(message.getBody.length)
    send.start()
    rowsWritten += 1
  }

  private def throwIfFailed(): Unit = {
    val failure = firstFailure.get()
    if (failure != null) throw failure
  }

  /** A send resolves (ack, failure or timeout) within its timeout per attempt; leave room for callbacks. */
  private val awaitMs = settings.sendTimeoutMs * (settings.sendRetries + 2) + 10000L

  private def awaitAllResolved(): Boolean = {
    val all = settings.maxInFlightMessages
    if (inFlight.tryAcquire(all, awaitMs, TimeUnit.MILLISECONDS)) { inFlight.release(all); true } else false
  }

  override def commit(): WriterCommitMessage = {
    if (!awaitAllResolved()) {
      throw RocketMQErrors.sendNotAcknowledged(settings.maxInFlightMessages - inFlight.availablePermits(), awaitMs)
    }
    throwIfFailed()
    // No commit message: the job commit has nothing to collect (counts are in the task metrics). And a
    // class of ours here would break Spark Connect sessions that attached the connector with
    // addArtifacts: the driver deserializes task results with Spark's own class loader, which cannot
    // see session artifacts, and fails every streaming write with "ClassNotFound".
    null
  }

  /** Sends cannot be recalled: wait (bounded) for those in flight, so none outlives the task. */
  override def abort(): Unit = awaitAllResolved()

  override def currentMetricsValues(): Array[CustomTaskMetric] = Array(
    RocketMQCustomMetrics.taskMetric(RocketMQCustomMetrics.MessagesSent, sent.get()),
    RocketMQCustomMetrics.taskMetric(RocketMQCustomMetrics.BytesSent, bytesSent.get()),
    RocketMQCustomMetrics.taskMetric(RocketMQCustomMetrics.SendRetries, retries.get()),
    RocketMQCustomMetrics.taskMetric(RocketMQCustomMetrics.FailedSends, failedSends.get()))

  override def close(): Unit = lease.release()
}

private[rocketmq] object RocketMQDataWriter {
  /** The same key always picks the same queue (while the topic's queue count does not change). */
  val ByShardingKey: MessageQueueSelector = (queues: java.util.List[MessageQueue], _: Message, key: Any) =>
    queues.get(Math.floorMod(key.hashCode, queues.size))
}
