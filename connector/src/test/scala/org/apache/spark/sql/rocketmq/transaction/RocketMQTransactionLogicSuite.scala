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

package org.apache.spark.sql.rocketmq.transaction
import org.apache.spark.sql.rocketmq.producer.RocketMQTransactionScope

import java.nio.file.Files

import org.apache.hadoop.conf.Configuration
import org.apache.rocketmq.client.producer.{SendResult, SendStatus}
import org.apache.rocketmq.common.message.{Message, MessageConst, MessageDecoder, MessageQueue}
import org.scalatest.funsuite.AnyFunSuite

/**
 * The pure logic of exactly-once writes: what a task records and reports, and the decisions' files.
 */
class RocketMQTransactionLogicSuite extends AnyFunSuite {

  private val scope =
    RocketMQTransactionScope("spark-rocketmq-txn-q", "1700000000000-abcd1234", 120000L)

  private def result(topic: String, broker: String, queueId: Int, queueOffset: Long,
      commitLogOffset: Long) = {
    // The store host is only encoded into the message id here: no socket is opened.
    val storeHost = java.nio.ByteBuffer.allocate(8).put(Array[Byte](127, 0, 0, 1)).putInt(0)
    storeHost.flip()
    val offsetMsgId =
      MessageDecoder.createMessageId(java.nio.ByteBuffer.allocate(16), storeHost, commitLogOffset)
    new SendResult(SendStatus.SEND_OK, "uniq", offsetMsgId,
      new MessageQueue(topic, broker, queueId), queueOffset)
  }

  test(
    "a half message names its group, immunity and origin; the commit message carries what was " +
      "stored") {
    val recorder = new RocketMQHalfMessageRecorder(scope, epoch = 7, partition = 3, attempt = 42)
    val messages = Seq.fill(3)(new Message("out", "b".getBytes))
    messages.foreach(recorder.prepare)
    assert(messages.map(_.getProperty(MessageConst.PROPERTY_TRANSACTION_PREPARED)).distinct ===
      Seq("true"))
    assert(messages.head.getProperty(MessageConst.PROPERTY_PRODUCER_GROUP) === scope.group)
    assert(
      messages.head.getProperty(MessageConst.PROPERTY_CHECK_IMMUNITY_TIME_IN_SECONDS) === "120")
    assert(messages.map(_.getProperty(RocketMQHalfMessageRecorder.TransactionProperty)) ===
      (0 until 3).map(i => s"${scope.run}/7/3/42/$i"))
    assert(RocketMQHalfMessageRecorder.origin(
      messages(2).getProperty(RocketMQHalfMessageRecorder.TransactionProperty))
      === Some(RocketMQHalfMessageRecorder.Origin(scope.run, 7, 3, 42, 2)))
    assert(RocketMQHalfMessageRecorder.origin("not/ours") === None)
    assert(RocketMQHalfMessageRecorder.origin("r/x/3/42/0") === None)

    recorder.record(result("out", "broker-a", 1, 10, 4096), 0, keyed = false)
    recorder.record(result("out", "broker-b", 0, 11, 8192), 1, keyed = true)
    recorder.record(result("out", "broker-a", 1, 12, 12288), 2, keyed = false)
    val decoded =
      RocketMQTaskHalfMessages.fromCommitMessage(
        RocketMQTaskHalfMessages.toCommitMessage(recorder.encode()))
    assert(
      decoded.map(t => (t.run, t.epoch, t.partition, t.attempt)) === Some((scope.run, 7L, 3, 42L)))
    val task = decoded.get
    assert(task.firstSendMs > 0 && task.firstSendMs <= System.currentTimeMillis())
    assert(task.endpoints === IndexedSeq(("out", "broker-a"), ("out", "broker-b")))
    assert(task.messages === IndexedSeq(RocketMQHalfMessage(0, 1, 10, 4096, 0, keyed = false),
      RocketMQHalfMessage(1, 0, 11, 8192, 1, keyed = true),
      RocketMQHalfMessage(0, 1, 12, 12288, 2, keyed = false)))
    assert(RocketMQTaskHalfMessages.fromCommitMessage(null) === None)
  }

  test("runs order by their start; a decision names one attempt per partition of one run") {
    assert(RocketMQTransactionScope.startOf(scope.run) === 1700000000000L)
    assert(RocketMQTransactionScope.startOf("garbage") === -1L)
    val a = RocketMQTransactionScope.newRun()
    assert(RocketMQTransactionScope.startOf(a) >= 1700000000000L)
    val decision = RocketMQEpochDecision(scope.run, Map(0 -> 5L, 1 -> 9L))
    assert(decision.names(RocketMQHalfMessageRecorder.Origin(scope.run, 3, 1, 9, 0)))
    assert(!decision.names(RocketMQHalfMessageRecorder.Origin(scope.run, 3, 1, 8, 0)))
    assert(!decision.names(RocketMQHalfMessageRecorder.Origin("1700000000001-ffffffff", 3, 1, 9,
      0)))
  }

  test(
    "a decision file is written once (a later proposal gets the first, also after a restart); so " +
      "are commits") {
    val dir = Files.createTempDirectory("decisions-").resolve("d").toString
    val first = new RocketMQDecisionLog.Files(dir, new Configuration())
    assert(first.read(4) === None)
    val kept = RocketMQEpochDecision("1-a", Map(0 -> 1L, 1 -> 2L))
    assert(first.decide(4, kept) === kept)
    assert(first.decide(4, RocketMQEpochDecision("2-b", Map(0 -> 7L))) === kept)
    val restarted = new RocketMQDecisionLog.Files(dir, new Configuration())
    assert(restarted.read(4) === Some(kept))
    assert(restarted.decide(4, RocketMQEpochDecision("3-c", Map(0 -> 8L))) === kept)
    assert(restarted.read(5) === None)
    assert(restarted.committed(4) === Set.empty)
    restarted.markCommitted(4, Set(0, 1))
    assert(new RocketMQDecisionLog.Files(dir, new Configuration()).committed(4) === Set(0, 1))
    assert(first.committed(4) === Set(0, 1))
    val memory = new RocketMQDecisionLog.InMemory
    assert(memory.decide(0, kept) === kept &&
      memory.decide(0, RocketMQEpochDecision("2-b", Map.empty)) === kept)
  }

  test(
    "two drivers racing to decide an epoch (a zombie beside its successor): one decision holds " +
      "for both") {
    val dir = Files.createTempDirectory("decisions-race-").resolve("d").toString
    val zombie = new RocketMQDecisionLog.Files(dir, new Configuration())
    val successor = new RocketMQDecisionLog.Files(dir, new Configuration())
    val first = RocketMQEpochDecision("1-zombie", Map(0 -> 1L))
    val second = RocketMQEpochDecision("2-successor", Map(0 -> 5L))
    // Both looked before either wrote: each records its own; the second must get the first's, not
    // replace it.
    assert(zombie.record(9, first) === first)
    assert(successor.record(9, second) === first)
    assert(new RocketMQDecisionLog.Files(dir, new Configuration()).read(9) === Some(first))
    // And racing threads, epoch after epoch: both drivers always end with the decision the file
    // holds.
    val pool = java.util.concurrent.Executors.newFixedThreadPool(2)
    try {
      (10 until 110).foreach { epoch =>
        val start = new java.util.concurrent.CountDownLatch(1)
        val answers = Seq(zombie -> first, successor -> second).map { case (log, proposal) =>
          pool.submit(new java.util.concurrent.Callable[RocketMQEpochDecision] {
            override def call(): RocketMQEpochDecision = {
              start.await(); log.decide(epoch, proposal)
            }
          })
        }
        start.countDown()
        val decided = answers.map(_.get())
        val stored = new RocketMQDecisionLog.Files(dir, new Configuration()).read(epoch)
        assert(decided.distinct.size === 1 && stored === Some(decided.head),
          s"epoch $epoch: $decided, $stored")
      }
    } finally pool.shutdownNow()
    assert(new java.io.File(dir).list().forall(!_.endsWith(".tmp")), "temporary files left behind")
  }
}
