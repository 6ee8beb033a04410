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

package org.apache.spark.sql.rocketmq.bench

import java.util.concurrent.{ConcurrentHashMap, ConcurrentLinkedQueue, Semaphore, TimeUnit}
import java.util.concurrent.atomic.{AtomicBoolean, AtomicLong, AtomicReference}
import java.util.concurrent.locks.LockSupport

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.kafka.clients.producer.{Callback, KafkaProducer, ProducerRecord, RecordMetadata}
import org.apache.rocketmq.client.producer.{DefaultMQProducer, SendCallback, SendResult}
import org.apache.rocketmq.common.message.Message

/**
 * Sends `rate` messages a second at a steady pace, every one acknowledged by the broker: one every
 * 1/`rate` s up to 1,000 a second, above that `rate` / 1000 every millisecond, from the calling
 * thread (behind the pace, it sends the messages due at once). Sends are asynchronous with at most
 * `maxInFlight` unacknowledged: at that bound the pace waits for acknowledgements, which shows as a
 * lower rate sent. A send that fails (the broker busy, a timeout after the client's own retries) is
 * sent again, a new send with the producer's time of then, as long as the run and then its settling
 * last; nothing the bench sends is left unacknowledged without the run saying so.
 *
 * The producer's time in each message is its client's, stamped as it sends (RocketMQ's
 * `bornTimestamp`, Kafka's record `CreateTime`): the latencies of the bench are measured from it.
 */
object SteadyProducer {

  /**
   * Sends message `n` (from 0) and, once the broker answered, calls `done(None)` (acknowledged) or
   * `done(Some(error))`; it may throw instead.
   */
  type Send = (Long, Option[Throwable] => Unit) => Unit

  /** Sends a body to a topic; calls `done` as [[Send]] does. */
  type AckedSend = (String, Array[Byte], Option[Throwable] => Unit) => Unit

  /**
   * What a run sent: `issued` messages (0 until issued), of which `acknowledged`, with `resent`
   * sends again; the failed sends by kind (the error's class and message, digits left out).
   */
  final case class Sent(issued: Long, acknowledged: Long, resent: Long, measuredFrom: Long,
      lastError: Option[Throwable], failures: Map[String, Long]) {
    def unacknowledged: Long = issued - acknowledged

    /** The failed sends by kind, the most frequent first, or "none". */
    def failureKinds: String =
      if (failures.isEmpty) "none"
      else
        failures.toSeq.sortBy(-_._2).map { case (kind, count) => s"$count x $kind" }.mkString("; ")

    /** Fails unless every message issued was acknowledged. */
    def requireAcknowledged(what: String): Unit =
      require(unacknowledged == 0,
        s"$what: $unacknowledged of the $issued messages sent were never acknowledged ($resent " +
          "sent again; " +
          s"failures: $failureKinds; last: ${lastError.map(_.toString).getOrElse("none")})")
  }

  /** Unacknowledged sends at most: half a second at 20,000 messages a second. */
  val DefaultMaxInFlight = 10000

  /**
   * Sends for `warmupSeconds` (not counted) and `seconds`, then waits up to `settleSeconds` for
   * every send to be acknowledged (failed ones sent again meanwhile): what was sent, and from when
   * the messages count.
   */
  def run(rate: Int, warmupSeconds: Int, seconds: Int, maxInFlight: Int = DefaultMaxInFlight,
      settleSeconds: Int = 120)(send: Send): Sent = {
    val sends = new SteadyRun(maxInFlight, send)
    val measuredFrom = System.currentTimeMillis() + warmupSeconds * 1000L
    val perTick = math.max(1, rate / 1000)
    val tickNanos = 1000000000L * perTick / rate
    val begin = System.nanoTime()
    val end = begin + (warmupSeconds + seconds) * 1000000000L
    var ticks = 0L
    var open = true
    while (open && System.nanoTime() < end) {
      open = sends.resendFailed(end)
      var i = 0
      while (open && i < perTick) { open = sends.sendNew(end); i += 1 }
      ticks += 1
      val wait = begin + ticks * tickNanos - System.nanoTime()
      if (wait > 0) LockSupport.parkNanos(wait) // the pace itself, not a wait for a condition
    }
    sends.settle(System.nanoTime() + settleSeconds * 1000000000L)
    sends.sent(measuredFrom)
  }

  /**
   * Async sends of RocketMQ's producer (its own retries: `retryTimesWhenSendAsyncFailed`, for
   * timeouts).
   */
  def toRocketMQ(producer: DefaultMQProducer): AckedSend = (topic, body, done) =>
    producer.send(new Message(topic, body),
      new SendCallback {
        // Any result is a message the broker stored: its other statuses than SEND_OK are of sync
        // flush and replication, which the bench's single broker does not do.
        override def onSuccess(result: SendResult): Unit = done(None)
        override def onException(e: Throwable): Unit = done(Some(e))
      })

  /**
   * Async sends of Kafka's producer (acks=all, its default; its own retries until
   * `delivery.timeout.ms`).
   */
  def toKafka(producer: KafkaProducer[Array[Byte], Array[Byte]]): AckedSend = (topic, body, done) =>
    producer.send(new ProducerRecord[Array[Byte], Array[Byte]](topic, body),
      new Callback {
        override def onCompletion(metadata: RecordMetadata, e: Exception): Unit = done(Option(e))
      })

  /**
   * The sends of one run: at most `maxInFlight` unacknowledged, failed ones queued to be sent
   * again.
   */
  private final class SteadyRun(maxInFlight: Int, send: Send) {
    private val inFlight = new Semaphore(maxInFlight)
    private val failed = new ConcurrentLinkedQueue[java.lang.Long]()
    private val acknowledged = new AtomicLong()
    private val lastError = new AtomicReference[Throwable]()
    private val failures = new ConcurrentHashMap[String, AtomicLong]()
    private var issued = 0L
    private var resent = 0L

    /**
     * Sends the next message once a send may be under way, unless `until` (nanoTime) passes first.
     */
    def sendNew(until: Long): Boolean = {
      val ok = acquire(until)
      if (ok) { attempt(issued); issued += 1 }
      ok
    }

    /** Sends again the messages whose sends failed so far, unless `until` passes first. */
    def resendFailed(until: Long): Boolean = {
      var pending = failed.size()
      var ok = true
      while (ok && pending > 0) {
        ok = acquire(until)
        if (ok) {
          val n = failed.poll()
          if (n == null) inFlight.release() else { resent += 1; attempt(n) }
          pending -= 1
        }
      }
      ok
    }

    /**
     * Waits until no send is under way and none failed (failed ones sent again meanwhile), or
     * `until` (nanoTime) passes.
     */
    def settle(until: Long): Unit = {
      var settled = false
      while (!settled && System.nanoTime() < until) {
        resendFailed(until)
        // Every permit back: nothing in flight, so no failure can be queued while the queue is
        // looked at.
        if (inFlight.tryAcquire(maxInFlight, 100, TimeUnit.MILLISECONDS)) {
          settled = failed.isEmpty
          inFlight.release(maxInFlight)
        }
      }
    }

    def sent(measuredFrom: Long): Sent =
      Sent(issued, acknowledged.get(), resent, measuredFrom, Option(lastError.get()),
        failures.asScala.map { case (kind, count) => kind -> count.get() }.toMap)

    private def acquire(until: Long): Boolean =
      inFlight.tryAcquire(math.max(0L, until - System.nanoTime()), TimeUnit.NANOSECONDS)

    /**
     * One send of message `n`, holding a permit; its outcome counted once (a client may call back
     * and throw).
     */
    private def attempt(n: Long): Unit = {
      val outcome = new AtomicBoolean()
      def done(error: Option[Throwable]): Unit = if (outcome.compareAndSet(false, true)) {
        error match {
          case None => acknowledged.incrementAndGet()
          case Some(e) =>
            lastError.set(e)
            val kind =
              s"${e.getClass.getSimpleName}: ${String.valueOf(e.getMessage).take(100)}".replaceAll(
                "\\d+", "N")
            failures.computeIfAbsent(kind, _ => new AtomicLong()).incrementAndGet()
            failed.add(n)
        }
        inFlight.release()
      }
      try send(n, done)
      catch { case NonFatal(e) => done(Some(e)) }
    }
  }
}
