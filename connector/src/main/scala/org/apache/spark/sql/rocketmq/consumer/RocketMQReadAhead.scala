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

package org.apache.spark.sql.rocketmq.consumer

import java.util.concurrent.{CompletableFuture, ExecutionException, TimeUnit, TimeoutException}
import java.util.concurrent.atomic.{AtomicInteger, AtomicLong}

import scala.collection.mutable

import org.apache.rocketmq.client.consumer.{PullResult, PullStatus}
import org.apache.rocketmq.remoting.exception.RemotingTimeoutException

/**
 * Pulls of one queue issued ahead of the reader, so that the broker works on the next pulls while
 * the task turns the current one into rows. The reader ([[RocketMQQueuePuller]]) still asks for one
 * pull at a time, `pull(offset, maxMessages)`, and decides everything from its answer;
 * this class only guesses which pulls it will ask for next and has them under way already.
 *
 * The guess: after a pull at `o` found messages up to `next`, the reader asks next at `next`, then
 * at `next + step`, `next + 2 step`, ... where `step = next - o` (the broker returned as many as it
 * does per pull). That holds for an unfiltered range with no gaps; a pull the reader then asks for
 * that was not guessed is made there and then, and guessed ones it passes over are dropped unread.
 * So an answer is always the broker's answer to exactly the pull asked for: exact ranges, filters
 * and every data-loss rule are the reader's, unchanged. Only unfiltered reads guess (a filter makes
 * the next offset unknowable); with `pullsInFlight` 1 nothing is issued ahead.
 *
 * Bounded twice: at most `pullsInFlight` pulls under way or answered-but-unread (dropped ones still
 * under way count until they end), and no new pull ahead while the answers held unread carry
 * `readAheadBytes` or more (each answer is bounded by the broker: 256 KiB from memory by default).
 * The first bound widens with the round trip: when the reader waits for a pull issued ahead while
 * all it may issue are under way, the answers take longer to come than the reader takes to turn
 * them into rows (a distant broker), and the window doubles, up to [[RocketMQReadAhead.Widening]]
 * times `pullsInFlight`; the bytes bound holds throughout. The next reader of the broker group in
 * this JVM starts at the widest window reached, so that each task does not widen it anew.
 *
 * A reader following the end of a queue (`until` = `Long.MaxValue`, real-time mode) asks with a
 * deadline: a pull not answered by then stays under way, and a later ask at the same offset takes
 * its answer. Guesses never go past the queue's end as the last answer reported it (a pull there
 * would only be refused, not held); an answer that reached that end has the pull at the end issued
 * at once, which the broker holds until a message arrives (so a message stored while the reader
 * turns the answer into rows is on its way already).
 *
 * `pullAsync(offset, maxMessages, done)` issues one pull and calls `done` exactly once with its
 * answer or failure (possibly on the calling thread). A failure is thrown to the reader, whose
 * retry rules apply. Single reader thread; `done` runs on the client's callback threads.
 */
private[rocketmq] final class RocketMQReadAhead(
    pullAsync: (Long, Int, Either[Throwable, PullResult] => Unit) => Unit,
    until: Long,
    batchSize: Int,
    pullsInFlight: Int,
    readAheadBytes: Long,
    answerTimeoutMs: Long,
    windowKey: String = null) {

  require(pullsInFlight >= 1, s"pullsInFlight must be at least 1, not $pullsInFlight")

  private val widest = if (pullsInFlight > 1) pullsInFlight * RocketMQReadAhead.Widening else 1

  /**
   * Pulls that may be under way now: `pullsInFlight`, widened with the round trip; a reader of the
   * same `windowKey` (the broker group) starts where the last one got to, within `widest`.
   */
  private var window = math.min(widest, RocketMQReadAhead.learned(windowKey, pullsInFlight))

  private final class Pending(val maxMessages: Int) {
    val answer = new CompletableFuture[PullResult]()
    val issuedNanos: Long = System.nanoTime()
    /** Bytes of the answer's messages, once it arrived and until the reader takes it. */
    @volatile var heldBytes = 0L
  }

  /** Pulls issued ahead, by offset, in the order the reader is expected to ask for them. */
  private val ahead = mutable.LinkedHashMap.empty[Long, Pending]
  /** Pulls under way or answered, not yet taken by the reader or ended after being dropped. */
  private val outstanding = new AtomicInteger()
  /** Bytes of answers that arrived ahead and are not yet taken by the reader. */
  private val held = new AtomicLong()
  private var requests = 0L
  private var waitNanos = 0L
  private var messages = 0L

  /** Bytes of the answers that arrived ahead and are not yet taken by the reader. */
  def heldBytes: Long = held.get()

  /** Pull requests made so far, ahead or not. */
  def pullCount: Long = requests

  /** Messages in the answers the reader took. */
  def messageCount: Long = messages

  /** Pulls that may be under way at once now (`pullsInFlight`, widened with the round trip). */
  def pullWindow: Int = window

  /** Time the reader spent waiting for an answer, in milliseconds. */
  def waitMs: Long = waitNanos / 1000000L

  /**
   * The broker's answer to a pull at `offset` of at most `maxMessages`; throws its failure. Null
   * when it has not come by `deadlineNanos` (a `System.nanoTime` value): the pull stays under way
   * for a later ask.
   */
  def pull(offset: Long, maxMessages: Int, deadlineNanos: Long = Long.MaxValue): PullResult = {
    // Guesses before `offset` will not be asked for: dropped (their answers end unread). After a
    // change of step the map is not in offset order, so every entry is looked at (there are at most
    // pullsInFlight).
    if (ahead.nonEmpty) ahead.keys.filter(_ < offset).toList.foreach(o => drop(ahead.remove(o).get))
    val guessed = ahead.remove(offset)
    val pending = guessed match {
      case Some(p) if p.maxMessages == maxMessages => p
      case Some(p) => drop(p); issue(offset, maxMessages)
      case None => issue(offset, maxMessages)
    }
    val windowFull = outstanding.get() >= window
    val waitedBefore = waitNanos
    val result = await(pending, deadlineNanos)
    if (guessed.isDefined && windowFull &&
      waitNanos - waitedBefore >= RocketMQReadAhead.WaitThatWidensNanos &&
      until != Long.MaxValue) {
      window = math.min(widest, window * 2)
      RocketMQReadAhead.learn(windowKey, window)
    }
    if (result == null) ahead.put(offset, pending)
    else if (result.getPullStatus == PullStatus.FOUND) {
      messages += result.getMsgFoundList.size()
      val next = result.getNextBeginOffset
      if (pullsInFlight > 1 && next > offset) {
        guessFrom(next, next - offset, math.min(until, result.getMaxOffset))
        // Following the end, the next pull is the one at the end: under way now, the broker holds
        // it until a message arrives, while the reader is still busy with this answer's.
        if (until == Long.MaxValue && next >= result.getMaxOffset && !ahead.contains(next) &&
          outstanding.get() < window) ahead.put(next, issue(next, batchSize))
      }
    }
    result
  }

  /**
   * Issues pulls at `from`, `from + step`, ... below `end` while the bounds allow, skipping those
   * under way.
   */
  private def guessFrom(from: Long, step: Long, end: Long): Unit = {
    var offset = from
    while (offset < end && outstanding.get() < window && held.get() < readAheadBytes) {
      if (!ahead.contains(offset))
        ahead.put(offset, issue(offset, math.min(batchSize.toLong, until - offset).toInt))
      offset += step
    }
  }

  private def issue(offset: Long, maxMessages: Int): Pending = {
    val pending = new Pending(maxMessages)
    outstanding.incrementAndGet()
    requests += 1
    val done: Either[Throwable, PullResult] => Unit = {
      case Right(result) =>
        if (result.getPullStatus == PullStatus.FOUND) {
          var bytes = 0L
          result.getMsgFoundList.forEach(m => bytes += m.getStoreSize)
          pending.heldBytes = bytes
          held.addAndGet(bytes)
        }
        pending.answer.complete(result)
      case Left(error) => pending.answer.completeExceptionally(error)
    }
    try pullAsync(offset, maxMessages, done)
    catch { case e: Throwable => pending.answer.completeExceptionally(e) }
    pending
  }

  /**
   * A guess the reader passed over: its slot is freed once its answer is in (or at once if it is).
   */
  private def drop(pending: Pending): Unit =
    pending.answer.whenComplete { (_, _) =>
      held.addAndGet(-pending.heldBytes)
      outstanding.decrementAndGet()
    }

  /**
   * The answer of `pending`, its slot freed; a pull without an answer in time frees it when it
   * ends. Null when `deadlineNanos` comes first (the pull stays outstanding).
   */
  private def await(pending: Pending, deadlineNanos: Long): PullResult = {
    val start = System.nanoTime()
    val giveUpNanos = pending.issuedNanos + TimeUnit.MILLISECONDS.toNanos(answerTimeoutMs)
    try {
      val result =
        pending.answer.get(math.min(giveUpNanos, deadlineNanos) - start, TimeUnit.NANOSECONDS)
      held.addAndGet(-pending.heldBytes)
      outstanding.decrementAndGet()
      result
    } catch {
      case e: ExecutionException =>
        outstanding.decrementAndGet()
        throw e.getCause
      case _: TimeoutException if deadlineNanos < giveUpNanos => null
      case _: TimeoutException =>
        // The client answers every pull within its own timeout; this guards against one that never
        // does.
        drop(pending)
        throw new RemotingTimeoutException(s"no answer to a pull within $answerTimeoutMs ms")
      case e: InterruptedException =>
        drop(pending)
        throw e
    } finally waitNanos += System.nanoTime() - start
  }
}

private[rocketmq] object RocketMQReadAhead {

  /** How many times `pullsInFlight` the window may widen to across a long round trip. */
  val Widening = 8

  /** The widest window a reader of each key (a broker group) got to, in this JVM. */
  private val windows = new java.util.concurrent.ConcurrentHashMap[String, Integer]()

  private def learned(key: String, pullsInFlight: Int): Int =
    if (key == null || pullsInFlight <= 1) pullsInFlight
    else math.max(pullsInFlight, windows.getOrDefault(key, pullsInFlight).intValue())

  private def learn(key: String, window: Int): Unit =
    if (key != null) windows.merge(key, window, (a, b) => Integer.valueOf(math.max(a, b)))

  /** A wait for a pull issued ahead that shows the window too narrow for the round trip. */
  private val WaitThatWidensNanos = TimeUnit.MILLISECONDS.toNanos(1)
}
