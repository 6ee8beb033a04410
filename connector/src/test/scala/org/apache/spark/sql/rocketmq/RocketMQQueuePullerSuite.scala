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

import scala.collection.mutable
import scala.jdk.CollectionConverters._

import org.apache.rocketmq.client.consumer.{PullResult, PullStatus}
import org.apache.rocketmq.client.exception.{MQBrokerException, MQClientException}
import org.apache.rocketmq.remoting.exception.{RemotingConnectException, RemotingTimeoutException}
import org.apache.rocketmq.remoting.protocol.ResponseCode
import org.apache.rocketmq.common.message.MessageExt
import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.rocketmq.common.RocketMQQueue
import org.apache.spark.sql.rocketmq.consumer.{
  RocketMQQueuePuller, RocketMQReadAhead, RocketMQReadSettings
}
import org.apache.spark.sql.rocketmq.options.RocketMQOptions

/**
 * The pull loop against scripted broker answers: every `PullStatus`, and the answers a real broker
 * gives only in rare timings (messages removed under a read, a replica asking to pull again).
 */
class RocketMQQueuePullerSuite extends AnyFunSuite {

  private val queue = RocketMQQueue("t", "b", 0)

  private def settings(failOnDataLoss: Boolean, filter: String = "*", retryTimeoutMs: Long = 60000,
      nameServer: String = "h:1"): RocketMQReadSettings = RocketMQReadSettings(
    new RocketMQOptions(Map("nameServer" -> nameServer, "topic" -> "t", "subExpression" -> filter,
      "pullTimeoutMs" -> "200", "failOnDataLoss" -> failOnDataLoss.toString,
      "retryTimeoutMs" -> retryTimeoutMs.toString)))

  private def message(offset: Long): MessageExt = {
    val m = new MessageExt()
    m.setQueueOffset(offset)
    m
  }

  private def found(next: Long, offsets: Long*): PullResult =
    new PullResult(PullStatus.FOUND, next, 0, 100, offsets.map(message).asJava)

  private def answer(status: PullStatus, next: Long, min: Long = 0, max: Long = 100): PullResult =
    new PullResult(status, next, min, max, null)

  /**
   * Reads `[from, until)` against `answers` (one per pull, in order); the offsets returned and
   * lost.
   */
  private def read(from: Long, until: Long, answers: PullResult*)(implicit s: RocketMQReadSettings)
      : (Seq[Long], Long, Seq[(Long, Int)]) = {
    val outcome = script(from, until, answers.map(Right(_)))
    (outcome.got, outcome.lost, outcome.asked)
  }

  private case class Outcome(got: Seq[Long], lost: Long, asked: Seq[(Long, Int)], retries: Long,
      gaveUp: Int,
      indexWaits: Int)

  /**
   * Reads `[from, until)` against `answers`: a pull answer, or a failure the pull throws. A failure
   * of the read is rethrown; `gaveUp` counts calls of the puller's give-up hook, `indexWaits` its
   * waits for the master to index what it stored.
   */
  private def script(from: Long, until: Long, answers: Seq[Either[Throwable, PullResult]],
      allUsed: Boolean = true,
      master: Option[String] = Some("master:1"))(implicit s: RocketMQReadSettings): Outcome = {
    val script = mutable.Queue(answers: _*)
    val asked = mutable.Buffer.empty[(Long, Int)]
    var gaveUp = 0
    var indexWaits = 0
    // One pull at a time: each answer is the next of the script, in the order the puller asks.
    val reads = new RocketMQReadAhead(
      (offset, max, done) => {
        asked += offset -> max
        if (script.isEmpty) fail(s"an unexpected pull at $offset")
        else done(script.dequeue().map(r => new RocketMQReadAhead.Answer(0L, () => r)))
      }, until, s.pullBatchSize, pullsInFlight = 1, readAheadBytes = 1L << 20,
      answerTimeoutMs = 1000)
    val puller =
      new RocketMQQueuePuller(queue, from, until, s, reads, () => master, () => indexWaits += 1,
        () => gaveUp += 1, () => ())
    try {
      val got =
        Iterator.continually(puller.next()).takeWhile(_ != null).map(_.getQueueOffset).toList
      if (allUsed) assert(script.isEmpty, "answers left unused")
      Outcome(got, puller.lostOffsets, asked.toSeq, puller.pullRetries, gaveUp, indexWaits)
    } catch {
      case e: RocketMQException =>
        throw new PullerFailed(e, asked.toSeq, puller.pullRetries, gaveUp)
    }
  }

  private class PullerFailed(val error: RocketMQException, val asked: Seq[(Long, Int)],
      val retries: Long,
      val gaveUp: Int) extends Exception(error)

  private def lossOf(from: Long, until: Long, answers: PullResult*): RocketMQDataLossException = {
    implicit val s: RocketMQReadSettings = settings(failOnDataLoss = true)
    intercept[PullerFailed](read(from, until, answers: _*)).error.asInstanceOf[
      RocketMQDataLossException]
  }

  test("FOUND: an exact range, never asking past its end") {
    implicit val s: RocketMQReadSettings = settings(failOnDataLoss = true)
    val (got, lost, asked) = read(10, 15, found(13, 10, 11, 12), found(16, 13, 14, 15))
    assert(got === Seq(10, 11, 12, 13, 14) && lost === 0)
    assert(asked === Seq(10L -> 5, 13L -> 2))
  }

  test(
    "FOUND with a gap inside the range, or short of its end, is data loss unless a filter " +
      "explains it") {
    val gap = lossOf(0, 5, found(5, 0, 1, 3, 4))
    assert(gap.getCondition === "ROCKETMQ_DATA_LOSS.SKIPPED_BY_BROKER" &&
      gap.getMessage.contains("[2, 3)"))
    // The broker moves past the end of the range without the tail: the tail is lost.
    val tail = lossOf(0, 5, found(7, 0, 1, 6))
    assert(tail.getCondition === "ROCKETMQ_DATA_LOSS.SKIPPED_BY_BROKER" &&
      tail.getMessage.contains("[2, 5)"))
    val tailOnly = lossOf(0, 5, found(9, 0, 1, 2))
    assert(tailOnly.getMessage.contains("[3, 5)"), tailOnly.getMessage)

    implicit val lenient: RocketMQReadSettings = settings(failOnDataLoss = false)
    assert(read(0, 5, found(7, 0, 1, 6))._1 === Seq(0, 1) && read(0, 5, found(7, 0, 1, 6))._2 === 3)
    val filtered = settings(failOnDataLoss = true, filter = "tagA")
    assert(read(0, 5, found(7, 0, 3, 6))(filtered) === ((Seq(0L, 3L), 0L, Seq(0L -> 5))))
  }

  test("NO_MATCHED_MSG: filtered away with a filter, removed (loss) without one") {
    assert(read(0, 10, answer(PullStatus.NO_MATCHED_MSG, 6), found(11, 6, 7, 8, 9))(settings(true,
      "tagA"))._1 ===
      Seq(6, 7, 8, 9))
    val removed = lossOf(0, 10, answer(PullStatus.NO_MATCHED_MSG, 6))
    assert(removed.getCondition === "ROCKETMQ_DATA_LOSS.BEING_REMOVED" &&
      removed.getMessage.contains("[0, 6)"))
  }

  test("NO_MATCHED_MSG that asks to pull the same offset again (a replica) is retried, not loss") {
    for (s <-
        Seq(settings(failOnDataLoss = true), settings(failOnDataLoss = true, filter = "tagA"))) {
      val again = answer(PullStatus.NO_MATCHED_MSG, 4)
      val (got, lost, asked) = read(4, 6, again, again, found(6, 4, 5))(s)
      assert(got === Seq(4, 5) && lost === 0 && asked.map(_._1) === Seq(4, 4, 4))
    }
    // Asked to pull again for longer than a pull may take (pullTimeoutMs=200): a clear failure.
    val forever = Seq.fill(50)(answer(PullStatus.NO_MATCHED_MSG, 4))
    val e = intercept[PullerFailed](read(4, 6, forever: _*)(settings(failOnDataLoss = true))).error
    assert(e.getCondition === "ROCKETMQ_PULL_FAILED.UNEXPECTED_ANSWER" &&
      e.getMessage.contains("NO_MATCHED_MSG with next offset 4"))
  }

  test(
    "a replica that has not indexed the range yet while its group has no master: waited for, " +
      "then unavailable") {
    // "Pull again" for longer than a pull may take (pullTimeoutMs=200), then the replica has the
    // messages.
    val trailing = Seq.fill(14)(Right(answer(PullStatus.NO_MATCHED_MSG, 4)))
    val caughtUp = script(4, 6, trailing :+ Right(found(6, 4, 5)), master = None)(
      settings(failOnDataLoss = true, retryTimeoutMs = 10000))
    assert(caughtUp.got === Seq(4, 5) && caughtUp.lost === 0)
    val forever = Seq.fill(1000)(Right(answer(PullStatus.NO_MATCHED_MSG, 4)))
    val failed = intercept[PullerFailed](script(4, 6, forever, allUsed = false, master = None)(
      settings(failOnDataLoss = true, retryTimeoutMs = 300))).error
    assert(failed.getCondition === "ROCKETMQ_BROKER_UNAVAILABLE.NO_MASTER", failed.getMessage)
    assert(
      failed.getMessage.contains("'b'") && failed.getMessage.contains("has not indexed offset 4"),
      failed.getMessage)
  }

  test(
    "a replica's word that offsets are gone (its group has no master) is waited on, not data " +
      "loss") {
    // The range was planned from the master (to 10); the replica's queue ends at 5 (it trails, or
    // never got 5-9).
    for (gone <- Seq(answer(PullStatus.NO_NEW_MSG, 5, max = 5),
        answer(PullStatus.OFFSET_ILLEGAL, 5, max = 5))) {
      val caughtUp = script(5, 10, Seq(Right(gone), Right(gone), Right(found(10, 5, 6, 7, 8, 9))),
        master = None)(
        settings(failOnDataLoss = true, retryTimeoutMs = 10000))
      assert(caughtUp.got === Seq(5, 6, 7, 8, 9) && caughtUp.lost === 0)
      val failed =
        intercept[PullerFailed](script(5, 10, Seq.fill(1000)(Right(gone)), allUsed = false,
          master = None)(settings(failOnDataLoss = true, retryTimeoutMs = 300))).error
      assert(failed.getCondition === "ROCKETMQ_BROKER_UNAVAILABLE.NO_MASTER", failed.getMessage)
    }
  }

  test("NO_NEW_MSG: a consume queue gone, or a truncated queue") {
    val gone = lossOf(0, 10, answer(PullStatus.NO_NEW_MSG, 4))
    assert(gone.getCondition === "ROCKETMQ_DATA_LOSS.CONSUME_QUEUE_GONE" &&
      gone.getMessage.contains("[0, 4)"))
    // The queue ends at 5, also once the master has indexed what it stored (asked again after
    // that).
    val endsAt5 = answer(PullStatus.NO_NEW_MSG, 5, max = 5)
    val truncated = lossOf(5, 10, endsAt5, endsAt5)
    assert(truncated.getCondition === "ROCKETMQ_DATA_LOSS.TRUNCATED" &&
      truncated.getMessage.contains("[5, 10)"))
    assert(truncated.getMessageParameters.get("maxOffset") === "5")
    implicit val lenient: RocketMQReadSettings = settings(failOnDataLoss = false)
    val skipped = script(5, 10, Seq(Right(endsAt5), Right(endsAt5)))
    assert(skipped.lost === 5 && skipped.indexWaits === 1)
  }

  test("a master's word that a queue ends early is final only once it has indexed what it stored") {
    // A restarted master rebuilds its queues' tails from its commit log: until then its queue ends
    // at 5.
    implicit val s: RocketMQReadSettings = settings(failOnDataLoss = true)
    val endsAt5 = answer(PullStatus.NO_NEW_MSG, 5, max = 5)
    val rebuilt = script(5, 10, Seq(Right(endsAt5), Right(found(10, 5, 6, 7, 8, 9))))
    assert(rebuilt.got === Seq(5, 6, 7, 8, 9) && rebuilt.lost === 0 && rebuilt.indexWaits === 1)
    // The same for offsets past the end (OFFSET_ILLEGAL), and again after the reader moved on.
    val past = answer(PullStatus.OFFSET_ILLEGAL, 3, max = 3)
    val twice = script(3, 10,
      Seq(Right(past), Right(found(5, 3, 4)), Right(endsAt5), Right(found(10, 5, 6, 7, 8, 9))))
    assert(twice.got === (3 until 10) && twice.lost === 0 && twice.indexWaits === 2)
    // Expired offsets (below the queue's start) are not the index's doing: no wait.
    val expired = intercept[PullerFailed](script(0, 10,
      Seq(Right(answer(PullStatus.OFFSET_ILLEGAL, 0, min = 7)))))
    assert(expired.error.getCondition === "ROCKETMQ_DATA_LOSS.EXPIRED")
  }

  test("OFFSET_ILLEGAL: expired below the minimum, or a recreated topic above the maximum") {
    val expired = lossOf(0, 10, answer(PullStatus.OFFSET_ILLEGAL, 0, min = 7))
    assert(expired.getCondition === "ROCKETMQ_DATA_LOSS.EXPIRED" &&
      expired.getMessage.contains("[0, 7)"))
    implicit val lenient: RocketMQReadSettings = settings(failOnDataLoss = false)
    val (got, lost, _) =
      read(0, 10, answer(PullStatus.OFFSET_ILLEGAL, 0, min = 7), found(10, 7, 8, 9))
    assert(got === Seq(7, 8, 9) && lost === 7)
    val recreated =
      lossOf(20, 30, Seq.fill(2)(answer(PullStatus.OFFSET_ILLEGAL, 0, min = 0, max = 3)): _*)
    assert(recreated.getCondition === "ROCKETMQ_DATA_LOSS.TOPIC_RECREATED")
  }

  test("an answer that never moves forward fails instead of looping") {
    val e = intercept[PullerFailed](read(3, 6, found(3))(settings(failOnDataLoss = false))).error
    assert(e.getCondition === "ROCKETMQ_PULL_FAILED.UNEXPECTED_ANSWER" &&
        e.getMessage.contains("FOUND with next offset 3"), e.getMessage)
  }

  private val refused = new RemotingConnectException("127.0.0.1:1")
  private val brokerNotInRoute = new MQClientException("The broker[b] not exist", null)

  test("pulls failing for a reason a broker restart explains are made again, and counted") {
    implicit val s: RocketMQReadSettings = settings(failOnDataLoss = true)
    val timedOut = new RemotingTimeoutException("wait response on the channel timeout")
    val out = script(0, 3,
      Seq(Left(refused), Left(timedOut), Left(brokerNotInRoute), Right(found(3, 0, 1, 2))))
    assert(out.got === Seq(0, 1, 2) && out.retries === 3 && out.gaveUp === 0)
    assert(out.asked === Seq.fill(4)(0L -> 3))
    // A success starts the budget afresh: failures later in the range are retried too.
    val later =
      script(0, 4, Seq(Left(refused), Right(found(2, 0, 1)), Left(refused), Right(found(4, 2, 3))))
    assert(later.got === Seq(0, 1, 2, 3) && later.retries === 2)
  }

  test(
    "a pull failing for a reason retrying cannot fix fails at once, naming the queue and the " +
      "cause") {
    implicit val s: RocketMQReadSettings = settings(failOnDataLoss = true)
    val unparsable =
      new MQBrokerException(ResponseCode.SUBSCRIPTION_PARSE_FAILED, "the filter does not parse")
    val failed = intercept[PullerFailed](script(7, 9, Seq(Left(unparsable))))
    assert(failed.error.getCondition === "ROCKETMQ_PULL_FAILED.NOT_RETRYABLE")
    assert(failed.error.getMessage.contains("queue 0 at offset 7") &&
        failed.error.getMessage.contains("the filter does not parse"), failed.error.getMessage)
    assert(failed.asked.size === 1 && failed.retries === 0 && failed.gaveUp === 1)
  }

  test("a pull the broker refuses for the credentials fails at once, naming the access key") {
    implicit val s: RocketMQReadSettings = settings(failOnDataLoss = true)
    val denied = new MQBrokerException(ResponseCode.NO_PERMISSION,
      "User:ak-1 has no permission to access Topic:t")
    val failed = intercept[PullerFailed](script(7, 9, Seq(Left(denied))))
    assert(failed.error.getCondition === "ROCKETMQ_ACCESS_DENIED")
    assert(failed.error.getMessage.contains("(none: no credentials were given)") &&
        failed.error.getMessage.contains("has no permission"), failed.error.getMessage)
    assert(failed.asked.size === 1 && failed.retries === 0 && failed.gaveUp === 1)
  }

  test("retries stop when retryTimeoutMs runs out, with an error saying so") {
    val endless = Seq.fill(1000)(Left(refused))
    val failed = intercept[PullerFailed](script(0, 5, endless, allUsed = false)(
      settings(failOnDataLoss = true, retryTimeoutMs = 500)))
    assert(failed.error.getCondition === "ROCKETMQ_PULL_FAILED.RETRIES_EXHAUSTED")
    val parameters = failed.error.getMessageParameters.asScala
    assert(parameters("retryTimeoutMs") === "500" && parameters("elapsedMs").toLong >= 500,
      parameters)
    // Every pull but the first was a retry (the pauses themselves are checked in
    // RocketMQRetrySuite).
    assert(failed.retries >= 2 && parameters("retries") === failed.retries.toString)
    assert(failed.asked.size === failed.retries + 1 && failed.gaveUp === 1)
    // retryTimeoutMs=0: no retries at all.
    val none = intercept[PullerFailed](script(0, 5, Seq(Left(refused)))(
      settings(failOnDataLoss = true, retryTimeoutMs = 0)))
    assert(
      none.error.getCondition === "ROCKETMQ_PULL_FAILED.RETRIES_EXHAUSTED" && none.retries === 0)
  }

  test(
    "a replica that does not know the topic while its group has no master is an outage, not a " +
      "deleted topic") {
    implicit val s: RocketMQReadSettings = settings(failOnDataLoss = true, retryTimeoutMs = 300)
    val denied =
      new MQBrokerException(ResponseCode.TOPIC_NOT_EXIST, "topic[t] not exist, apply first please!",
        "replica:1")
    // Pulled again until the replica knows the topic.
    val ok = script(3, 5, Seq(Left(denied), Left(denied), Right(found(5, 3, 4))), master = None)
    assert(ok.got === Seq(3, 4) && ok.retries === 2 && ok.gaveUp === 0)
    // Never does: the group is unavailable, named.
    val failed = intercept[PullerFailed](script(3, 5, Seq.fill(1000)(Left(denied)), allUsed = false,
      master = None))
    assert(failed.error.getCondition === "ROCKETMQ_BROKER_UNAVAILABLE.NO_MASTER",
      failed.error.getMessage)
    assert(failed.error.getMessage.contains("broker group 'b'") && failed.retries >= 1 &&
      failed.gaveUp === 1)
    // A replica denying while the group has a master (the master suggested it): retried as well.
    val replica = script(3, 5, Seq(Left(denied), Right(found(5, 3, 4))))
    assert(replica.got === Seq(3, 4) && replica.retries === 1)
  }

  test(
    "the master answering that the topic does not exist (deleted under the read) is the queue " +
      "gone: it fails " +
      "the read at once, or with failOnDataLoss=false skips the range (an open one idles)") {
    def denied =
      new MQBrokerException(ResponseCode.TOPIC_NOT_EXIST, "topic[t] not exist, apply first please!",
        "master:1")
    val failed =
      intercept[PullerFailed](script(3, 5, Seq(Left(denied)))(settings(failOnDataLoss = true)))
    assert(failed.error.getCondition === "ROCKETMQ_DATA_LOSS_QUEUE_GONE" && failed.retries === 0)
    assert(failed.error.getMessage.contains("offsets from 3 on were not read"),
      failed.error.getMessage)
    implicit val lenient: RocketMQReadSettings = settings(failOnDataLoss = false)
    val skipped = script(3, 5, Seq(Left(denied)))
    assert(skipped.got.isEmpty && skipped.lost === 2 && skipped.retries === 0 &&
      skipped.asked === Seq(3L -> 2))
    // An open range (continuous, real-time) asks no more: it returns nothing until Spark plans
    // without the queue.
    val open = script(3, RocketMQQueuePuller.Open, Seq(Left(denied)))
    assert(open.got.isEmpty && open.asked.size === 1)
  }

  test(
    "a group left without any broker fails, once retryTimeoutMs is spent, as unavailable and " +
      "named") {
    val failed =
      intercept[PullerFailed](script(0, 5, Seq.fill(1000)(Left(refused)), allUsed = false,
        master = None)(settings(failOnDataLoss = true, retryTimeoutMs = 300)))
    assert(failed.error.getCondition === "ROCKETMQ_BROKER_UNAVAILABLE.NO_MASTER",
      failed.error.getMessage)
    assert(failed.error.getMessage.contains("waited") && failed.error.getMessage.contains("'b'"))
  }

  test(
    "a name server that does not answer the route request leaves the pull retried, not the task " +
      "failed") {
    // Nothing listens at port 1: each pull finds no route, and so does each look for the group's
    // master (a route request the client fails with an IllegalStateException); the read waits, then
    // fails as unavailable.
    val s = settings(failOnDataLoss = true, retryTimeoutMs = 500, nameServer = "127.0.0.1:1")
    val puller = RocketMQQueuePuller(queue, 0, 10, s)
    try {
      val e = intercept[RocketMQException](puller.next())
      assert(e.getCondition === "ROCKETMQ_BROKER_UNAVAILABLE.NO_MASTER", e.getMessage)
    } finally puller.close()
  }
}
