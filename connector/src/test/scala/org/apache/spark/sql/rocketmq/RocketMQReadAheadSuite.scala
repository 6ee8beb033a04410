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

package org.apache.spark.sql.rocketmq

import java.util.concurrent.{Executors, TimeUnit}

import scala.jdk.CollectionConverters._

import org.apache.rocketmq.client.consumer.{PullResult, PullStatus}
import org.apache.rocketmq.common.message.MessageExt
import org.apache.rocketmq.remoting.exception.{RemotingConnectException, RemotingTimeoutException}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.concurrent.Eventually._
import org.scalatest.time.{Millis, Seconds, Span}
import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.rocketmq.common.RocketMQQueue
import org.apache.spark.sql.rocketmq.consumer.{
  RocketMQQueuePuller, RocketMQReadAhead, RocketMQReadSettings
}
import org.apache.spark.sql.rocketmq.options.RocketMQOptions

/**
 * Pulls issued ahead, against a model queue whose answers arrive on other threads after a delay:
 * the reader gets exactly what one pull at a time would give it, more than one pull is under way,
 * and the bounds (pulls in flight, bytes held) hold.
 */
class RocketMQReadAheadSuite extends AnyFunSuite with BeforeAndAfterAll {

  private val answerThreads = Executors.newScheduledThreadPool(4)
  override def afterAll(): Unit = answerThreads.shutdownNow()

  private val queue = RocketMQQueue("t", "b", 0)
  private val bodyBytes = 1000

  /**
   * A queue of messages at offsets `[0, size)`: a pull returns at most `maxMessages` and at most
   * `cap(offset)` of them, answered after `delayMs` on another thread, or fails as `fail` says; an
   * answer's messages are made when it is decoded. It records how many pulls were under way at
   * most, and the threads that decoded answers.
   */
  private final class ModelQueue(size: Long, cap: Long => Int = _ => 32, delayMs: Long = 1,
      fail: Long => Option[Exception] = _ => None) {
    private var underWay = 0
    var mostUnderWay = 0
    var pulls = 0
    /** Pulls issued before the first answer was given. */
    var issuedBeforeAnswers = 0
    private var answered = false
    private var handedOver = 0
    /** Threads answers were decoded on. */
    val decodedOn = java.util.concurrent.ConcurrentHashMap.newKeySet[Thread]()

    def pullAsync(offset: Long, maxMessages: Int,
        done: Either[Throwable, RocketMQReadAhead.Answer] => Unit): Unit = {
      synchronized {
        underWay += 1; mostUnderWay = math.max(mostUnderWay, underWay); pulls += 1
        if (!answered) issuedBeforeAnswers += 1
      }
      answerThreads.schedule((() => {
              synchronized { underWay -= 1; answered = true }
              done(fail(offset).toLeft(undecoded(offset, maxMessages)))
              synchronized(handedOver += 1)
            }): Runnable, delayMs, TimeUnit.MILLISECONDS)
    }

    /** Every pull issued so far has been answered, and its answer handed over. */
    def settled: Boolean = synchronized(handedOver == pulls)

    private def undecoded(offset: Long, maxMessages: Int): RocketMQReadAhead.Answer = {
      val end = math.min(size, offset + math.min(maxMessages, cap(offset)))
      new RocketMQReadAhead.Answer(math.max(0L, end - offset) * bodyBytes,
        () => {
          decodedOn.add(Thread.currentThread())
          answer(offset, end)
        })
    }

    private def answer(offset: Long, end: Long): PullResult =
      if (offset >= size) new PullResult(PullStatus.NO_NEW_MSG, offset, 0, size, null)
      else {
        val found = (offset until end).map { o =>
          val m = new MessageExt()
          m.setQueueOffset(o)
          m.setStoreSize(bodyBytes)
          m
        }
        new PullResult(PullStatus.FOUND, end, 0, size, found.asJava)
      }
  }

  private def settings(extra: (String, String)*): RocketMQReadSettings = RocketMQReadSettings(
    new RocketMQOptions(Map("nameServer" -> "h:1", "topic" -> "t", "pullTimeoutMs" -> "2000") ++
      extra))

  private def readAll(model: ModelQueue, from: Long, until: Long, pullsInFlight: Int,
      readAheadBytes: Long = 1L << 24): (Seq[Long], RocketMQQueuePuller) = {
    val s = settings()
    val reads = new RocketMQReadAhead(model.pullAsync, until, s.pullBatchSize, pullsInFlight,
      readAheadBytes, 5000)
    val puller =
      new RocketMQQueuePuller(queue, from, until, s, reads, () => Some("master:1"), () => (),
        () => (), () => ())
    (Iterator.continually(puller.next()).takeWhile(_ != null).map(_.getQueueOffset).toList, puller)
  }

  test(
    "four pulls in flight read the exact range, each offset once, with more than one pull under " +
      "way") {
    val model = new ModelQueue(5000, delayMs = 2)
    val (got, puller) = readAll(model, 100, 4100, pullsInFlight = 4)
    assert(got === (100L until 4100L))
    assert(model.mostUnderWay > 1, "nothing was pulled ahead")
    assert(model.mostUnderWay <= 4 * RocketMQReadAhead.NearbyWidening) // a broker nearby
    assert(puller.pulls === 125) // 4000 / 32, none wasted on a dense queue
    assert(puller.messagesPulled === 4000)
    assert(model.decodedOn.asScala === Set(Thread.currentThread()),
      "answers were decoded off the reader's thread")
  }

  test(
    "a round trip longer than the reader's turn widens the window, doubling, up to as many " +
      "answers as readAheadBytes holds: the range stays exact") {
    val model = new ModelQueue(10000, delayMs = 60) // a distant broker's round trip
    val s = settings()
    val limit = 24L * 32 * bodyBytes // 24 answers, more than a nearby window's 16
    val reads = new RocketMQReadAhead(model.pullAsync, 8000, s.pullBatchSize, 2, limit, 5000)
    val puller = new RocketMQQueuePuller(queue, 0, 8000, s, reads, () => Some("master:1"),
      () => (), () => (), () => ())
    val got = Iterator.continually(puller.next()).takeWhile(_ != null).map(_.getQueueOffset).toList
    assert(got === (0L until 8000L))
    assert(reads.pullWindow === 24)
    assert(model.mostUnderWay > 16, "the window did not widen past a nearby window")
    assert(model.mostUnderWay <= 24)
  }

  test("however small the answers, a window widens to mostPulls at most") {
    val model = new ModelQueue(20000, delayMs = 60) // a distant broker's round trip
    val s = settings()
    val reads = new RocketMQReadAhead(model.pullAsync, 20000, s.pullBatchSize, 2, 1L << 40, 5000,
      mostPulls = 64)
    val puller = new RocketMQQueuePuller(queue, 0, 20000, s, reads, () => Some("master:1"),
      () => (), () => (), () => ())
    var read = 0L
    while (puller.next() != null) read += 1
    assert(read === 20000)
    assert(reads.pullWindow === 64)
    assert(model.mostUnderWay > 32, "the window did not widen")
    assert(model.mostUnderWay <= 64)
  }

  test("the next reader of a broker group starts at the window the last one widened to") {
    val s = settings()
    def reader(model: ModelQueue, key: String) =
      new RocketMQReadAhead(model.pullAsync, 4000, s.pullBatchSize, 2, 1L << 24, 5000, key)
    val first = reader(new ModelQueue(4000, delayMs = 20), "far/broker-a")
    val puller = new RocketMQQueuePuller(queue, 0, 4000, s, first, () => Some("master:1"),
      () => (), () => (), () => ())
    while (puller.next() != null) {}
    assert(first.pullWindow > 2)
    assert(reader(new ModelQueue(10), "far/broker-a").pullWindow === first.pullWindow)
    assert(reader(new ModelQueue(10), "far/broker-b").pullWindow === 2, "another group")
    assert(reader(new ModelQueue(10), null).pullWindow === 2, "no key: nothing learned")
  }

  test("a broker group is distant when its last reader had no answer within 50 ms") {
    val s = settings()
    def readWith(delayMs: Long, key: String): Unit = {
      val model = new ModelQueue(640, delayMs = delayMs)
      val reads = new RocketMQReadAhead(model.pullAsync, 640, s.pullBatchSize, 4, 1L << 24, 5000,
        key)
      val puller = new RocketMQQueuePuller(queue, 0, 640, s, reads, () => Some("master:1"),
        () => (), () => (), () => ())
      while (puller.next() != null) {}
    }
    readWith(60, "far/broker-a/t")
    assert(RocketMQReadAhead.distant("far/broker-a/t"))
    readWith(1, "near/broker-a/t")
    assert(!RocketMQReadAhead.distant("near/broker-a/t"))
    readWith(1, "far/broker-a/t")
    assert(!RocketMQReadAhead.distant("far/broker-a/t"), "the last reader found it nearby")
    assert(!RocketMQReadAhead.distant("never/read/t"))
  }

  test("with a broker nearby a window widens to NearbyWidening times pullsInFlight at most") {
    val model = new ModelQueue(20000, delayMs = 2)
    val s = settings()
    val reads = new RocketMQReadAhead(model.pullAsync, 20000, s.pullBatchSize, 2, 1L << 40, 5000)
    val puller = new RocketMQQueuePuller(queue, 0, 20000, s, reads, () => Some("master:1"),
      () => (), () => (), () => ())
    var read = 0L
    while (puller.next() != null) read += 1
    assert(read === 20000)
    assert(reads.pullWindow > 2, "the window did not widen")
    assert(reads.pullWindow <= 2 * RocketMQReadAhead.NearbyWidening)
    assert(model.mostUnderWay <= 2 * RocketMQReadAhead.NearbyWidening)
  }

  test(
    "the next reader of a topic's broker group issues its guesses with its first pull, at the " +
      "step the last one saw; a wrong step leaves the range exact") {
    val s = settings()
    // 125 full pulls of 32 and a last one of 10, which must not become the step.
    def read(model: ModelQueue, key: String): Seq[Long] = {
      val reads =
        new RocketMQReadAhead(model.pullAsync, 4010, s.pullBatchSize, 4, 1L << 24, 5000, key)
      val puller = new RocketMQQueuePuller(queue, 0, 4010, s, reads, () => Some("master:1"),
        () => (), () => (), () => ())
      Iterator.continually(puller.next()).takeWhile(_ != null).map(_.getQueueOffset).toList
    }
    assert(read(new ModelQueue(4010, delayMs = 20), "near/broker-a/t") === (0L until 4010L))
    val next = new ModelQueue(4010, delayMs = 20)
    assert(read(next, "near/broker-a/t") === (0L until 4010L))
    assert(next.issuedBeforeAnswers > 1, "the guesses waited for the first answer")
    assert(next.pulls === 126, "guesses at a wrong step were made")
    val first = new ModelQueue(4010, delayMs = 20)
    assert(read(first, "near/broker-a/other") === (0L until 4010L))
    assert(first.issuedBeforeAnswers === 1, "a topic not read before has no step to go by")
    // The broker now answers 8 at a time: the guesses at the old step are dropped.
    val narrower = new ModelQueue(4010, cap = _ => 8, delayMs = 20)
    assert(read(narrower, "near/broker-a/t") === (0L until 4010L))
  }

  test("a window never widens past the answers' bytes: readAheadBytes still binds") {
    val model = new ModelQueue(8000, delayMs = 20)
    val s = settings()
    val limit = 4L * 32 * bodyBytes // four answers
    val reads = new RocketMQReadAhead(model.pullAsync, 8000, s.pullBatchSize, 2, limit, 5000)
    val puller = new RocketMQQueuePuller(queue, 0, 8000, s, reads, () => Some("master:1"),
      () => (), () => (), () => ())
    var read = 0L
    var mostHeld = 0L
    while (puller.next() != null) {
      read += 1
      mostHeld = math.max(mostHeld, reads.heldBytes)
    }
    assert(read === 8000)
    assert(reads.pullWindow === 4)
    assert(model.mostUnderWay <= 4)
    assert(mostHeld <= limit)
  }

  test("one pull in flight never issues a second") {
    val model = new ModelQueue(1000)
    val (got, puller) = readAll(model, 0, 1000, pullsInFlight = 1)
    assert(got === (0L until 1000L))
    assert(model.mostUnderWay === 1)
    assert(puller.pulls === 32)
  }

  test(
    "answers shorter than guessed (a broker's byte cap) leave the range exact; wrong guesses are " +
      "dropped") {
    // 8 per pull below offset 300 (as from disk), 32 above, 5 around 700: guesses miss at every
    // change.
    val cap: Long => Int = o => if (o < 300) 8 else if (o >= 700 && o < 760) 5 else 32
    val model = new ModelQueue(2000, cap)
    val (got, puller) = readAll(model, 0, 2000, pullsInFlight = 4)
    assert(got === (0L until 2000L))
    assert(model.mostUnderWay <= 4 * RocketMQReadAhead.NearbyWidening) // a broker nearby
    assert(puller.pulls > puller.messagesPulled / 32)
  }

  test("answers held unread stay under readAheadBytes plus what the pulls under way bring") {
    val model = new ModelQueue(3000, delayMs = 0)
    val s = settings()
    val limit = 40L * bodyBytes // a little over one answer
    val reads = new RocketMQReadAhead(model.pullAsync, 3000, s.pullBatchSize, 8, limit, 5000)
    val puller = new RocketMQQueuePuller(queue, 0, 3000, s, reads, () => Some("master:1"), () => (),
      () => (), () => ())
    var read = 0L
    var message = puller.next()
    while (message != null) {
      read += 1
      if (read % 32 == 0) {
        // A slow reader: every answer issued ahead has arrived before it asks again.
        eventually(timeout(Span(5, Seconds)), interval(Span(1, Millis)))(assert(model.settled))
        assert(reads.heldBytes <= limit + 8 * 32 * bodyBytes)
      }
      message = puller.next()
    }
    assert(read === 3000)
    assert(model.mostUnderWay <= 8) // pullsInFlight: readAheadBytes holds fewer answers
  }

  test("a failed pull issued ahead fails only when asked for, and the reader's retry reads on") {
    var failures = 0
    val model = new ModelQueue(1000,
      fail = o =>
        if (o == 320 && failures == 0) {
          failures += 1; Some(new RemotingConnectException("127.0.0.1:1"))
        } else None)
    val (got, puller) = readAll(model, 0, 1000, pullsInFlight = 4)
    assert(got === (0L until 1000L))
    assert(failures === 1)
    assert(puller.pullRetries === 1)
  }

  test(
    "following the end, an answer that reaches it has the pull at the end under way before the " +
      "reader asks") {
    def afterFirstAnswer(until: Long, pullsInFlight: Int): (ModelQueue, RocketMQReadAhead) = {
      val model = new ModelQueue(32)
      val reads = new RocketMQReadAhead(model.pullAsync, until, 32, pullsInFlight, 1L << 20, 5000)
      assert(reads.pull(0, 32).getNextBeginOffset === 32)
      (model, reads)
    }
    val (model, reads) = afterFirstAnswer(RocketMQQueuePuller.Open, pullsInFlight = 4)
    assert(model.pulls === 2, "the pull at the end was not issued with the answer that reached it")
    val atEnd = reads.pull(32, 32, System.nanoTime() + TimeUnit.SECONDS.toNanos(5))
    assert(atEnd.getPullStatus === PullStatus.NO_NEW_MSG)
    assert(model.pulls === 2, "the reader's ask at the end made a pull of its own")
    // One pull at a time, or a range with an end: nothing is issued before the reader asks.
    assert(afterFirstAnswer(RocketMQQueuePuller.Open, pullsInFlight = 1)._1.pulls === 1)
    assert(afterFirstAnswer(32, pullsInFlight = 4)._1.pulls === 1)
  }

  test("an answer that never comes ends the wait as a timeout after answerTimeoutMs") {
    val reads = new RocketMQReadAhead((_, _, _) => (), 100, 32, 4, 1L << 20, answerTimeoutMs = 300)
    val started = System.nanoTime()
    val e = intercept[RemotingTimeoutException](reads.pull(0, 32))
    assert((System.nanoTime() - started) / 1000000 >= 300)
    assert(e.getMessage.contains("300 ms"))
  }
}
