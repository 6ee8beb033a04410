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

package org.apache.spark.sql.rocketmq.producer

import java.io.Closeable
import java.util.concurrent.{Semaphore, TimeUnit}
import java.util.concurrent.atomic.{AtomicLong, AtomicReference}
import java.util.concurrent.locks.ReentrantLock

import org.apache.rocketmq.client.impl.factory.MQClientInstance
import org.apache.rocketmq.common.message.{Message, MessageConst, MessageQueue}

import org.slf4j.LoggerFactory

import org.apache.spark.sql.rocketmq.client.RocketMQLatencyHistogram
import org.apache.spark.sql.rocketmq.errors.RocketMQErrors

/**
 * Sends the messages of one write task through a producer borrowed from the executor's
 * [[RocketMQProducerPool]], asynchronously, with at most `maxInFlightMessages` messages and
 * `maxInFlightBytes` body bytes unacknowledged at a time (a message larger than that waits until it
 * can be the only one in flight). Messages without a sharding key or delivery time, small enough
 * not to be compressed, go out in RocketMQ message batches per topic, and those with a sharding key
 * in batches per queue, sent in order: one request for up to `sendBatchMessages` messages of
 * `sendBatchBytes` (a batch waits for its next message or for `flush`, never for a clock). The
 * others go one by one. A send that fails for a retryable reason (see [[RocketMQRetry]]) is made
 * again after a pause, for up to `retryTimeoutMs` from its first failure (and at most `sendRetries`
 * times, if set), each attempt with a timeout of its own: a write rides out a broker restart. One
 * that may have been stored (its answer lost) is made again only once the brokers say they do not
 * have it. The first failure for good is kept and thrown by the next `send` or by `flush`.
 *
 * Under real-time mode and continuous processing (`sendEachAtOnce`) rows come one by one for as
 * long as the task lasts, and each goes out at once: alone while fewer than
 * [[RocketMQMessageSender.EachAtOnceRequests]] of the task's requests are unacknowledged; rows that
 * come while that many are wait together, and go as one batch request (of up to `sendBatchMessages`
 * and `sendBatchBytes`) as soon as one is acknowledged. So a task under load sends fewer, fuller
 * requests rather than one per row, and the broker's time goes to storing them rather than to
 * answering requests (docs/bench-real-time.md measures it). When every row is its own request
 * (`sendBatchMessages=1`), at most [[RocketMQMessageSender.SingleRowRequests]] are unacknowledged.
 * Without a bound a task behind on its acks queued thousands of one-row requests on the producer's
 * connection, where they outlived their send timeout and were sent again though stored.
 */
private[rocketmq] final class RocketMQMessageSender(
    private[producer] val settings: RocketMQWriteSettings,
    private[producer] val halfMessages: RocketMQHalfMessageLog = null) extends Closeable {

  private[producer] val log = LoggerFactory.getLogger(getClass)
  private[producer] val lease = RocketMQProducerPool.borrow(settings)
  private[producer] val producer = lease.client.producer
  /** Records each message stored in RocketMQ's message trace (null: the write is not traced). */
  private[producer] val trace = lease.client.trace.orNull
  private[producer] val routes = new RocketMQSendRoutes(producer, settings.sendTimeoutMs)
  private[producer] val storedCheck =
    new RocketMQStoredCheck(producer, settings.sendTimeoutMs, lease.client.indexes)
  private[producer] val inFlight = new Semaphore(settings.effectiveMaxInFlightMessages)
  private val byteBudget = math.min(settings.maxInFlightBytes, Int.MaxValue.toLong).toInt
  /** Holds this task to its part of maxMessagesPerSecond / maxBytesPerSecond (null: no cap). */
  private val pacer = settings.rateCap.newPacer()
  private[producer] val inFlightBytes = new Semaphore(byteBudget)
  private val peakBytes = new AtomicLong()
  private[producer] val firstFailure = new AtomicReference[Throwable]()
  private val sentCount = new AtomicLong()
  private val bytesSentCount = new AtomicLong()
  private[producer] val retryCount = new AtomicLong()
  private[producer] val requestCount = new AtomicLong()
  private[producer] val failedCount = new AtomicLong()
  private[producer] val maybeDuplicatedCount = new AtomicLong()

  /** Slots of requests in flight, when they are bounded (see above; null: they are not). */
  private[producer] val requestSlots =
    if (settings.sendEachAtOnce) new Semaphore(RocketMQMessageSender.EachAtOnceRequests)
    else if (settings.sendBatchMessages == 1) new Semaphore(RocketMQMessageSender.SingleRowRequests)
    else null

  /**
   * Guards the batches waiting to go out when requests are bounded: an acknowledgement, on the
   * client's callback thread, sends them. Callbacks only try it (see [[sendWaitingRows]]), so the
   * task's thread may wait for a slot holding it.
   */
  private val waitingLock = new ReentrantLock()

  /** Whether batches wait to go out (written with the lock held; read without it). */
  @volatile private var rowsWaiting = false

  /** Messages handed to RocketMQ (Spark reads metrics before `flush` waits for the acks). */
  def sent: Long = sentCount.get()
  def bytesSent: Long = bytesSentCount.get()
  def retries: Long = retryCount.get()
  /** Send requests made, first attempts only: a batch is one request. */
  def requests: Long = requestCount.get()
  def failedSends: Long = failedCount.get()
  /**
   * Messages sent again after a failure that may have stored them, where no broker could say
   * whether it had (see [[RocketMQStoredCheck]]): each may now be stored twice.
   */
  def possibleDuplicates: Long = maybeDuplicatedCount.get()

  /**
   * How long each acknowledged request took, in ms from its first attempt to its acknowledgement
   * (resends included; a batch is one request); guarded by itself, as callbacks record into it.
   */
  private[producer] val ackMs = new RocketMQLatencyHistogram

  /** `read` applied to the acknowledgement times so far (all of them once `flush` has returned). */
  def ackLatency[T](read: RocketMQLatencyHistogram => T): T = ackMs.synchronized(read(ackMs))

  /** The most body bytes that were ever in flight at once (tests check the bound). */
  private[rocketmq] def peakInFlightBytes: Long = peakBytes.get()

  private[producer] val openRequests = new AtomicLong()
  private[producer] val peakRequests = new AtomicLong()

  /** The most requests that were ever unacknowledged at once (tests check the bound). */
  private[rocketmq] def peakRequestsInFlight: Long = peakRequests.get()

  /**
   * Messages waiting to go out as one batch, encoded as they came (see [[RocketMQBatchEncoding]]),
   * and their slots' bytes: of one topic without sharding keys (`queue` null: the producer picks
   * the queue), or of one queue, whose sharding keys all pick it.
   */
  private final class PendingBatch(val topic: String, val queue: MessageQueue) {
    val encoding: RocketMQBatchEncoding =
      if (spareEncodings.isEmpty)
        new RocketMQBatchEncoding(math.min(settings.sendBatchBytes, 1L << 20).toInt, trace != null)
      else spareEncodings.pop()
    var bytes = 0L
  }

  /** Encodings of batches already sent, kept (at most two) so that their arrays are reused. */
  private val spareEncodings = new java.util.ArrayDeque[RocketMQBatchEncoding](2)

  /** By topic (no sharding key) or by queue (sharding key). */
  private val pendingBatches = new java.util.HashMap[AnyRef, PendingBatch]()

  /** Sends `message` once a slot is free; `shardingKey` (or null) pins its queue and order. */
  def send(message: Message, shardingKey: String): Unit = {
    throwIfFailed()
    if (pacer != null) pacer.take(1, message.getBody.length)
    val bytes = math.min(message.getBody.length, byteBudget)
    // Slots held by a batch not yet sent free only once it is: send the batches before waiting.
    if (!inFlight.tryAcquire()) { sendPendingBatches(); inFlight.acquire() }
    if (!inFlightBytes.tryAcquire(bytes)) { sendPendingBatches(); inFlightBytes.acquire(bytes) }
    peakBytes.accumulateAndGet(byteBudget - inFlightBytes.availablePermits(),
      (a, b) => math.max(a, b))
    sentCount.incrementAndGet()
    bytesSentCount.addAndGet(message.getBody.length)
    if (shardingKey == null) {
      if (!batchable(message)) sendAlone(message, null, bytes)
      else if (requestSlots == null) addToBatch(message.getTopic, null, message, null, bytes)
      else {
        waitingLock.lock()
        try {
          addToBatch(message.getTopic, null, message, null, bytes)
          rowsWaiting = !pendingBatches.isEmpty
        } finally waitingLock.unlock()
        sendWaitingRows()
      }
    } else {
      // Before the producer knows the topic's queues, one message goes alone (and has them looked
      // up).
      val queue =
        if (batchable(message, shardingKey)) routes.queueOf(message.getTopic, shardingKey) else null
      if (queue != null) addToBatch(queue, queue, message, shardingKey, bytes)
      else {
        // Whatever waits in a batch was accepted before this message: it goes first, in order.
        sendPendingBatches()
        sendAlone(message, shardingKey, bytes)
      }
    }
  }

  /**
   * A message with a sharding key goes synchronously (see [[Send.start]]), but for a half message.
   */
  private def sendAlone(message: Message, shardingKey: String, bytes: Int): Unit = {
    val async = shardingKey == null || halfMessages != null
    new RocketMQSendRequest(this, message, 1, shardingKey, null, bytes,
      holdsSlot = async && takeSlot()).start()
  }

  /** Waits for a request slot, if they are bounded; whether it took one. */
  private def takeSlot(): Boolean = requestSlots != null && { requestSlots.acquire(); true }

  /**
   * A batch carries neither delivery times, priorities nor lite topics (the broker places only a
   * message sent alone by its priority or under its lite topic) nor compressed bodies (RocketMQ
   * compresses single messages only); an empty body goes alone, for the client to refuse it. With
   * bounded requests, rows with a sharding key go alone: each is sent synchronously, at once.
   */
  private def batchable(message: Message, shardingKey: String = null): Boolean =
    halfMessages == null && settings.sendBatchMessages > 1 &&
      (requestSlots == null || shardingKey == null) &&
      message.getDeliverTimeMs <= 0 &&
      message.getDelayTimeLevel <= 0 && message.getPriority < 0 &&
      message.getProperty(MessageConst.PROPERTY_LITE_TOPIC) == null &&
      message.getBody.length > 0 && message.getBody.length <= settings.compressionThreshold

  private def addToBatch(key: AnyRef, queue: MessageQueue, message: Message, shardingKey: String,
      bytes: Int): Unit = {
    var batch = pendingBatches.get(key)
    if (batch == null) {
      batch = new PendingBatch(message.getTopic, queue)
      pendingBatches.put(key, batch)
    }
    val (sizeBefore, countBefore) = (batch.encoding.size, batch.encoding.count)
    if (!batch.encoding.add(message)) {
      // Properties too long for a batch entry: alone, after everything accepted before it.
      sendPendingBatches()
      sendAlone(message, shardingKey, bytes)
      return
    }
    if (batch.encoding.size > settings.sendBatchBytes && countBefore > 0) {
      batch.encoding.truncate(sizeBefore, countBefore)
      sendBatch(key, batch)
      batch = new PendingBatch(message.getTopic, queue)
      pendingBatches.put(key, batch)
      batch.encoding.add(message)
    }
    batch.bytes += bytes
    if (batch.encoding.count >= settings.sendBatchMessages ||
      batch.encoding.size >= settings.sendBatchBytes) {
      sendBatch(key, batch)
    }
  }

  /**
   * Sends `batch` (one left empty, by a message that had to go alone, is only dropped); a batch
   * full before a slot is free waits for one, unless the caller holds one (`slotTaken`) for it.
   */
  private def sendBatch(key: AnyRef, batch: PendingBatch, slotTaken: Boolean = false): Unit = {
    pendingBatches.remove(key)
    val count = batch.encoding.count
    val firstKey = batch.encoding.firstKey
    val traced = batch.encoding.tracedMessages
    val request = if (count > 0) batch.encoding.toRequest(batch.topic) else null
    batch.encoding.truncate(0, 0)
    if (spareEncodings.size < 2) spareEncodings.push(batch.encoding)
    if (request != null) {
      new RocketMQSendRequest(this, request, count, null, batch.queue, batch.bytes,
        slotTaken || takeSlot(), firstKey, traced).start()
    } else if (slotTaken) requestSlots.release()
  }

  /**
   * Sends the batches waiting; with bounded requests, only those a free slot takes (acks send the
   * others).
   */
  private def sendPendingBatches(): Unit =
    if (requestSlots != null) sendWaitingRows()
    else if (!pendingBatches.isEmpty) {
      val keys = new java.util.ArrayList[AnyRef](pendingBatches.keySet())
      keys.forEach(key => sendBatch(key, pendingBatches.get(key)))
    }

  /**
   * Sends a waiting batch for each free request slot. Whoever finds the lock taken leaves the rows
   * to its holder, who looks again once it lets go: a slot freed meanwhile is not missed.
   */
  private[producer] def sendWaitingRows(): Unit =
    while (rowsWaiting && requestSlots.availablePermits() > 0 && waitingLock.tryLock()) {
      try {
        if (!pendingBatches.isEmpty && requestSlots.tryAcquire()) {
          val key = pendingBatches.keySet().iterator().next()
          sendBatch(key, pendingBatches.get(key), slotTaken = true)
        }
        rowsWaiting = !pendingBatches.isEmpty
      } finally waitingLock.unlock()
    }

  private def throwIfFailed(): Unit = {
    val failure = firstFailure.get()
    if (failure != null) throw failure
  }

  /**
   * A send resolves (ack, failure or timeout) within its timeout per attempt, and its resends
   * within the retry budget plus one more attempt; leave room for callbacks.
   */
  private val awaitMs = settings.retryTimeoutMs + settings.sendTimeoutMs * 2 + 10000L

  private def awaitAllResolved(): Boolean = {
    val all = settings.effectiveMaxInFlightMessages
    if (inFlight.tryAcquire(all, awaitMs, TimeUnit.MILLISECONDS)) { inFlight.release(all); true }
    else false
  }

  /**
   * Returns once every message sent is acknowledged; throws the first failure, or if some never
   * resolved.
   */
  def flush(): Unit = {
    sendPendingBatches()
    if (!awaitAllResolved()) {
      throw RocketMQErrors.sendNotAcknowledged(
        settings.effectiveMaxInFlightMessages - inFlight.availablePermits(),
        awaitMs)
    }
    throwIfFailed()
  }

  /**
   * Sends cannot be recalled: waits (bounded) for those in flight, so none outlives the task.
   * Batches not yet sent go out first: rows the task accepted before it failed are delivered, as
   * they would have been one by one.
   */
  def abandon(): Unit = {
    sendPendingBatches()
    awaitAllResolved()
  }

  /** The RocketMQ client this sender's producer talks through (to end its half messages). */
  def client: MQClientInstance = producer.getDefaultMQProducerImpl.getMqClientFactory

  override def close(): Unit = lease.release()
}

private[rocketmq] object RocketMQMessageSender {

  /** Requests a task sending each row at once keeps unacknowledged (see the class). */
  val EachAtOnceRequests = 4

  /** Requests a task sending one row per request (`sendBatchMessages=1`) keeps unacknowledged. */
  val SingleRowRequests = 32
}
