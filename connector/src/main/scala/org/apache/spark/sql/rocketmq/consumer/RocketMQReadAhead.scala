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
 * them into rows (a distant broker: rate times round trip must be under way), and the window
 * doubles, as long as that many of the largest answer taken so far fit in `readAheadBytes`: what
 * is under way and what is held stay within the bytes bound. It widens to at most `mostPulls`
 * when no answer comes sooner than a distant network's round trip, else (a busy broker nearby)
 * to [[RocketMQReadAhead.NearbyWidening]] times `pullsInFlight`. The next reader of the topic's
 * broker group in this JVM starts at the widest window reached, so that each task does not widen
 * it anew, and issues its guesses with its first pull, at the step its last reader saw, instead
 * of a round trip later.
 *
 * A reader following the end of a queue (`until` = `Long.MaxValue`, real-time mode) asks with a
 * deadline: a pull not answered by then stays under way, and a later ask at the same offset takes
 * its answer. Guesses never go past the queue's end as the last answer reported it (a pull there
 * would only be refused, not held); an answer that reached that end has the pull at the end issued
 * at once, which the broker holds until a message arrives (so a message stored while the reader
 * turns the answer into rows is on its way already).
 *
 * `pullAsync(offset, maxMessages, done)` issues one pull and calls `done` exactly once with its
 * answer or failure (possibly on the calling thread). An answer is held as it came and decoded on
 * the reader's thread when taken ([[RocketMQReadAhead.Answer]]). A failure is thrown to the reader,
 * whose retry rules apply. Single reader thread; `done` runs on the client's callback threads.
 */
private[rocketmq] final class RocketMQReadAhead(
    pullAsync: (Long, Int, Either[Throwable, RocketMQReadAhead.Answer] => Unit) => Unit,
    until: Long,
    batchSize: Int,
    pullsInFlight: Int,
    readAheadBytes: Long,
    answerTimeoutMs: Long,
    windowKey: String = null,
    mostPulls: Int = RocketMQReadAhead.MostPulls) {

  require(pullsInFlight >= 1, s"pullsInFlight must be at least 1, not $pullsInFlight")

  /** The quickest answer to a pull so far, in ns: the round trip without queueing. */
  private var shortestRoundTrip = Long.MaxValue

  /** Messages the last answer taken moved the reader on by: where its guesses step. */
  private var step = 0L

  /** Message bytes of the largest answer taken so far: what each pull under way may bring. */
  private var largestAnswer = 0L

  /**
   * The most pulls the window may widen to: as many of the largest answer as fit the bytes bound,
   * and nearby at most [[RocketMQReadAhead.NearbyWidening]] times `pullsInFlight` (a broker
   * nearby that answers late is busy, and more pulls would only load it more).
   */
  private def widest: Int =
    if (pullsInFlight == 1) 1
    else {
      val fit = readAheadBytes / math.max(largestAnswer, 1L)
      val most =
        if (distant) mostPulls.toLong
        else math.min(mostPulls.toLong, pullsInFlight.toLong * RocketMQReadAhead.NearbyWidening)
      math.max(pullsInFlight.toLong, math.min(fit, most)).toInt
    }

  /**
   * Whether the broker is far: no answer came sooner than [[RocketMQReadAhead.DistantNanos]]
   * (before any answer, what the last reader of the key found).
   */
  private def distant: Boolean =
    if (shortestRoundTrip == Long.MaxValue) RocketMQReadAhead.distant(windowKey)
    else shortestRoundTrip >= RocketMQReadAhead.DistantNanos

  /**
   * Pulls that may be under way now: `pullsInFlight`, widened with the round trip; a reader of the
   * same `windowKey` (the topic's broker group) starts where the last one got to, within `widest`.
   */
  private var window = math.min(widest, RocketMQReadAhead.learned(windowKey, pullsInFlight))

  private final class Pending(val maxMessages: Int) {
    val answer = new CompletableFuture[RocketMQReadAhead.Answer]()
    val issuedNanos: Long = System.nanoTime()
    /** When the answer came (System.nanoTime), 0 before. */
    @volatile var answeredNanos = 0L
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
    // A reader's first pull: the pulls after it are issued at once at the step the last reader of
    // the topic's broker group saw, not a round trip later (wrong guesses, a window's at most, are
    // dropped unread).
    if (requests == 1 && pullsInFlight > 1 && until != Long.MaxValue) {
      val step = RocketMQReadAhead.learnedStep(windowKey)
      if (step > 0) guessFrom(offset + step, step, until)
    }
    val windowFull = outstanding.get() >= window
    val waitedBefore = waitNanos
    val answer = await(pending, deadlineNanos)
    val result = if (answer == null) null else answer.decoded()
    if (guessed.isDefined && windowFull &&
      waitNanos - waitedBefore >= RocketMQReadAhead.WaitThatWidensNanos &&
      until != Long.MaxValue) {
      window = math.min(widest, window * 2)
      RocketMQReadAhead.learn(windowKey, window)
    }
    if (result != null && pending.answeredNanos > 0 &&
      pending.answeredNanos - pending.issuedNanos < shortestRoundTrip) {
      shortestRoundTrip = pending.answeredNanos - pending.issuedNanos
      if (windowKey != null) RocketMQReadAhead.roundTrips.put(windowKey, shortestRoundTrip)
      window = math.min(window, widest)
    }
    if (result == null) ahead.put(offset, pending)
    else if (result.getPullStatus == PullStatus.FOUND) {
      messages += result.getMsgFoundList.size()
      if (pending.heldBytes > largestAnswer) {
        largestAnswer = pending.heldBytes
        window = math.min(window, widest)
      }
      val next = result.getNextBeginOffset
      if (pullsInFlight > 1 && next > offset) {
        // Only a pull the range's end did not shorten tells the step.
        if (maxMessages == batchSize && next - offset != step) {
          step = next - offset
          RocketMQReadAhead.learnStep(windowKey, step)
        }
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
    val done: Either[Throwable, RocketMQReadAhead.Answer] => Unit = {
      case Right(answer) =>
        pending.answeredNanos = System.nanoTime()
        pending.heldBytes = answer.bytes
        held.addAndGet(answer.bytes)
        pending.answer.complete(answer)
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
  private def await(pending: Pending, deadlineNanos: Long): RocketMQReadAhead.Answer = {
    val start = System.nanoTime()
    val giveUpNanos = pending.issuedNanos + TimeUnit.MILLISECONDS.toNanos(answerTimeoutMs)
    try {
      val answer =
        pending.answer.get(math.min(giveUpNanos, deadlineNanos) - start, TimeUnit.NANOSECONDS)
      held.addAndGet(-pending.heldBytes)
      outstanding.decrementAndGet()
      answer
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

  /**
   * A broker's answer to one pull as it came: `bytes` of messages it carries (0 unless found),
   * and `decode`, which makes the answer the reader gets; it runs once, on the reader's thread,
   * when the reader takes the answer. Answers held ahead across a long round trip are then the
   * broker's bytes, not the many small objects per message that the collector copies while they
   * wait.
   */
  final class Answer(val bytes: Long, decode: () => PullResult) {
    def decoded(): PullResult = decode()
  }

  /**
   * The most pulls of one queue under way across a long round trip, however small their answers
   * (`readAheadBytes` binds first from answers of 16 KiB up, at its default).
   */
  val MostPulls = 4096

  /** How many times `pullsInFlight` a window may widen to with a broker nearby. */
  val NearbyWidening = 8

  /** The widest window a reader of each key (a topic's broker group) got to, in this JVM. */
  private val windows = new java.util.concurrent.ConcurrentHashMap[String, Integer]()

  /**
   * Whether the last reader of `key` in this JVM got no answer sooner than [[DistantNanos]] after
   * asking: a round trip of a distant network, not of a busy broker nearby.
   */
  def distant(key: String): Boolean =
    key != null && roundTrips.getOrDefault(key, 0L).longValue() >= DistantNanos

  /** The quickest answer of the last reader of each key, in ns, in this JVM. */
  private val roundTrips = new java.util.concurrent.ConcurrentHashMap[String, java.lang.Long]()

  /**
   * A round trip that marks a broker group distant: 50 ms. Below it the nearby window already
   * carries the round trip, and a busy machine's quickest answer nearby can take tens of ms.
   */
  val DistantNanos: Long = TimeUnit.MILLISECONDS.toNanos(50)

  private def learned(key: String, pullsInFlight: Int): Int =
    if (key == null || pullsInFlight <= 1) pullsInFlight
    else math.max(pullsInFlight, windows.getOrDefault(key, pullsInFlight).intValue())

  private def learn(key: String, window: Int): Unit =
    if (key != null) windows.merge(key, window, (a, b) => Integer.valueOf(math.max(a, b)))

  /** The step the last reader of each key saw between its pulls, in this JVM. */
  private val steps = new java.util.concurrent.ConcurrentHashMap[String, java.lang.Long]()

  private def learnedStep(key: String): Long =
    if (key == null) 0L else steps.getOrDefault(key, 0L).longValue()

  private def learnStep(key: String, step: Long): Unit = if (key != null) steps.put(key, step)

  /** A wait for a pull issued ahead that shows the window too narrow for the round trip. */
  private val WaitThatWidensNanos = TimeUnit.MILLISECONDS.toNanos(1)
}
