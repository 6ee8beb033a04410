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

import java.io.File
import java.nio.charset.StandardCharsets
import java.nio.file.Files

import org.apache.spark.sql.streaming.{StreamingQuery, StreamingQueryException, Trigger}

/**
 * Continuous processing (Trigger.Continuous): a long-running task per queue, on Spark 3.5 and 4.x
 * alike.
 */
class RocketMQContinuousSuite extends RocketMQSparkSuiteBase {

  // A task slot for each queue of the source, three after a scale-out.
  override protected def sparkMaster: String = "local[4]"

  private def newDir(): String = Files.createTempDirectory("rocketmq-continuous-").toString

  /**
   * `topic` from its earliest offsets into the foreach sink `sink`, recording progress every
   * second.
   */
  private def toForeach(topic: String, sink: String, checkpoint: String): StreamingQuery =
    streamTopic(topic, "startingOffsets" -> "earliest")
      .selectExpr("CAST(body AS STRING) AS body", "queueId", "queueOffset")
      .writeStream.foreach(new EpochOutput(sink)).option("checkpointLocation", checkpoint)
      .trigger(Trigger.Continuous("1 second")).start()

  private def awaitRows(q: StreamingQuery, sink: String, count: Int): Unit =
    EmbeddedRocketMQ.awaitCondition(s"$count rows in the foreach sink", 120000) {
      assert(q.exception.isEmpty, q.exception)
      EpochOutput.rows(sink).map(_._1).distinct.size >= count
    }

  private def committedEpochs(checkpoint: String): Int =
    Option(new File(checkpoint, "commits").list()).map(_.count(_.forall(_.isDigit))).getOrElse(0)

  test(
    "continuous processing reads each message as it arrives; a queue added while it runs from " +
      "its first offset") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 2)
    val sink = rocketmq.newTopic("sink")
    val q = toForeach(topic, sink, newDir())
    try {
      rocketmq.sendBodies(topic, (0 until 10).map(i => s"a$i"))
      awaitRows(q, sink, 10)
      rocketmq.createTopic(topic, queues = 3)
      rocketmq.sendMessages(topic, (0 until 5).map(i => TestMessage(s"n$i")), queueId = Some(2))
      awaitRows(q, sink, 15)
    } finally q.stop()
    val rows = EpochOutput.rows(sink)
    assert(rows.map(_._1).distinct.sorted ===
      ((0 until 10).map(i => s"a$i") ++ (0 until 5).map(i => s"n$i")).sorted)
    assert(rows.filter(_._2 == 2).map(_._3).distinct.sorted === (0L until 5L))
  }

  test(
    "a topic deleted while continuous tasks read it: failOnDataLoss=true fails naming the queue " +
      "gone; false reads on from the other topics") {
    for (failOnDataLoss <- Seq(false, true)) {
      val (kept, deleted) = (rocketmq.newTopic(), rocketmq.newTopic())
      rocketmq.createTopic(kept, queues = 1)
      rocketmq.createTopic(deleted, queues = 1)
      val sink = rocketmq.newTopic("sink")
      val q = streamTopic(s"$kept,$deleted", "startingOffsets" -> "earliest",
        "failOnDataLoss" -> failOnDataLoss.toString)
        .selectExpr("CAST(body AS STRING) AS body", "queueId", "queueOffset")
        .writeStream.foreach(new EpochOutput(sink)).option("checkpointLocation", newDir())
        .trigger(Trigger.Continuous("1 second")).start()
      try {
        rocketmq.sendBodies(kept, Seq("k0"))
        rocketmq.sendBodies(deleted, Seq("d0"))
        awaitRows(q, sink, 2)
        rocketmq.deleteTopic(deleted)
        if (failOnDataLoss) {
          val message = errorMessage(q.awaitTermination(120000))
          assert(message.contains("[ROCKETMQ_DATA_LOSS_QUEUE_GONE]") &&
              message.contains(s"topic '$deleted'"),
            message)
        } else {
          rocketmq.sendBodies(kept, Seq("k1", "k2"))
          awaitRows(q, sink, 4)
          assert(q.isActive && q.exception.isEmpty, q.exception)
          assert(EpochOutput.rows(sink).map(_._1).distinct.sorted === Seq("d0", "k0", "k1", "k2"))
        }
      } finally q.stop()
    }
  }

  test(
    "restarted from its checkpoint, a continuous query goes on after the last recorded epoch: " +
      "nothing lost or repeated") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 2)
    val (sink, checkpoint) = (rocketmq.newTopic("sink"), newDir())
    rocketmq.sendBodies(topic, (0 until 10).map(i => s"a$i"))
    val first = toForeach(topic, sink, checkpoint)
    try {
      awaitRows(first, sink, 10)
      // Epochs end every second; one ended after the rows were handed on holds their offsets.
      val seen = committedEpochs(checkpoint)
      EmbeddedRocketMQ.awaitCondition("two more epochs recorded", 60000)(
        committedEpochs(checkpoint) >= seen + 2)
    } finally first.stop()
    rocketmq.sendBodies(topic, (0 until 10).map(i => s"b$i"))
    val second = toForeach(topic, sink, checkpoint)
    try awaitRows(second, sink, 20)
    finally second.stop()
    val rows = EpochOutput.rows(sink)
    assert(rows.map(_._1).sorted === Seq("a", "b").flatMap(p =>
      (0 until 10).map(i => s"$p$i")).sorted)
    val positions = rows.map(r => (r._2, r._3))
    assert(positions.distinct.size === positions.size, "a (queue, offset) came out twice")
  }

  test(
    "into RocketMQ each row is sent as it arrives; exactly-once and options that bound a batch " +
      "are refused") {
    val (sourceTopic, target) = (rocketmq.newTopic(), rocketmq.newTopic())
    rocketmq.createTopic(sourceTopic, queues = 2)
    rocketmq.createTopic(target, queues = 2)
    def copy(checkpoint: String, source: Map[String, String], sink: Map[String, String])
        : StreamingQuery =
      streamTopic(sourceTopic, ("startingOffsets" -> "earliest") +: source.toSeq: _*).selectExpr(
        "body")
        .writeStream.format("rocketmq").option("nameServer", rocketmq.nameServer).option("topic",
          target)
        .options(sink).option("checkpointLocation", checkpoint).trigger(
          Trigger.Continuous("10 minutes"))
        .start()
    /**
     * The error of a query refused when it starts (options) or when it plans its write (the
     * guarantee).
     */
    def failure(q: => StreamingQuery): String = {
      val e = intercept[Exception](q.awaitTermination(120000))
      assert(
        e.isInstanceOf[StreamingQueryException] || e.isInstanceOf[RocketMQInvalidInputException], e)
      Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString(
        "\n")
    }
    rocketmq.sendBodies(sourceTopic, (0 until 10).map(i => s"y$i"))
    val refused = failure(copy(newDir(), Map.empty, Map("deliveryGuarantee" -> "exactly_once")))
    assert(refused.contains("ROCKETMQ_OPTION_NOT_ALLOWED.CONTINUOUS_EXACTLY_ONCE") &&
        refused.contains("'deliveryGuarantee'"), refused)
    assert(rocketmq.readAll(target).isEmpty,
      "an exactly-once continuous query sent rows before it was refused")
    val bounded = failure(copy(newDir(), Map("maxOffsetsPerTrigger" -> "10"), Map.empty))
    assert(bounded.contains("ROCKETMQ_OPTION_NOT_ALLOWED.CONTINUOUS") &&
        bounded.contains("'maxOffsetsPerTrigger'"),
      bounded)
    // Epochs of 10 minutes: the rows can only be in the target before one ends if each is sent as
    // it comes. Spark's first trigger fires as the query starts, so a task quicker than it starts
    // in epoch 0, which ends at once (epoch 0 committed); the rows are read in the 10-minute epoch
    // 1, whose end is checked.
    val checkpoint = newDir()
    val q = copy(checkpoint, Map.empty, Map.empty)
    try {
      EmbeddedRocketMQ.awaitCondition("10 messages copied", 120000)(
        rocketmq.readAll(target).size >= 10)
      assert(!new File(checkpoint, "commits/1").exists(), "an epoch of 10 minutes ended")
    } finally q.stop()
    assert(
      rocketmq.readAll(target).map(m => new String(m.getBody, StandardCharsets.UTF_8)).sorted ===
        (0 until 10).map(i => s"y$i").sorted)
  }
}
