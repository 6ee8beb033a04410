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

import java.nio.file.Files
import java.util.UUID

import org.apache.spark.sql.rocketmq.client.RocketMQOffsetReader
import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}
import org.scalatest.DoNotDiscover

import org.apache.spark.sql.rocketmq.RocketMQClusterProcess.{GroupA, GroupB, GroupC}

/**
 * Streams on the shared cluster through master kills: micro-batch and real-time queries read on
 * from a replica (even one that trails where the stream is), ride out a controller-mode election,
 * and take up a broker group that joins their topic. Every message exactly once, checked against
 * what was sent.
 */
@DoNotDiscover // run by RocketMQClusterSuites, with the other suites of the shared cluster
class RocketMQClusterStreamSuite extends RocketMQClusterSuiteBase {

  private def newDir(): String = Files.createTempDirectory("rocketmq-cluster-stream-").toString

  /** `topic` from its earliest offsets into the foreach sink `sink`, with `trigger`. */
  private def toSink(topic: String, sink: String, checkpoint: String, trigger: Trigger)
      : StreamingQuery =
    stream(topic, "startingOffsets" -> "earliest").selectExpr("CAST(body AS STRING) AS body")
      .writeStream.outputMode("update").foreach(new EpochOutput(sink))
      .option("checkpointLocation", checkpoint).trigger(trigger).start()

  /** Waits until `sink` holds each of `sent` (a query that failed throws here). */
  private def awaitRows(q: StreamingQuery, sink: String, sent: Seq[String]): Unit =
    EmbeddedRocketMQ.awaitCondition(s"${sent.size} rows in $sink", 120000) {
      if (q.exception.isDefined) throw q.exception.get
      EpochOutput.rows(sink).map(_._1).distinct.size >= sent.size
    }

  /** Sends `count` messages, which the producer spreads over every queue of the live groups. */
  private def send(topic: String, prefix: String, count: Int = 300): Seq[String] = {
    val sent = (0 until count).map(i => s"$prefix$i")
    cluster.produce(topic, count, i => sent(i))
    sent
  }

  test(
    "a micro-batch stream restarted while a master is down reads on from its replica, which " +
      "trails it") {
    val topic = newTopic("stream-replica", groups = Seq(GroupA, GroupB))
    val (sink, checkpoint) = (s"cluster-mb-${UUID.randomUUID().toString.take(8)}", newDir())
    def start(): StreamingQuery =
      toSink(topic, sink, checkpoint, Trigger.ProcessingTime("200 milliseconds"))
    var sent = send(topic, "a")
    val first = start()
    try {
      awaitRows(first, sink, sent)
      // The replica stops indexing what it copies: its offsets fall behind what the stream reads
      // from the master.
      cluster.command("a-replica", "pauseIndexing")
      sent ++= send(topic, "b")
      awaitRows(first, sink, sent)
      // Its last batch committed: the next run plans anew, from the replica.
      first.processAllAvailable()
    } finally first.stop()
    try {
      sent ++= send(topic,
        "c") // on group a's master and in its replica's log, not yet in its replica's index
      cluster.awaitReplicatedLog(GroupA)
      val waitingOnA = cluster.bodiesOn(topic, GroupA).filter(_.startsWith("c")).toSet
      assert(waitingOnA.nonEmpty, "the producer spread no message to group a")
      withKilled("a-master") {
        val second = start()
        try {
          // Group a now answers from the replica, whose offsets are below the stream's: nothing new
          // there yet.
          sent ++= send(topic, "d") // to group b alone, while a has no master
          val notOnA = sent.toSet -- waitingOnA
          EmbeddedRocketMQ.awaitCondition("every message not waiting on group a's replica",
            120000) {
            if (second.exception.isDefined) throw second.exception.get
            notOnA.subsetOf(EpochOutput.rows(sink).map(_._1).toSet)
          }
          cluster.command("a-replica", "resumeIndexing")
          awaitRows(second, sink, sent)
        } finally second.stop()
      }
    } finally cluster.command("a-replica", "resumeIndexing")
    val third = start()
    try {
      sent ++= send(topic, "e")
      awaitRows(third, sink, sent)
    } finally third.stop()
    assert(EpochOutput.rows(sink).map(_._1).sorted === sent.sorted)
  }

  test(
    "a broker group wholly down (a master without replicas) is unavailable to an AvailableNow " +
      "run, not gone: the run waits for it (failOnDataLoss=false), and every message comes once") {
    val topic = newTopic("stream-whole-group", groups = Seq(GroupA, GroupB))
    val (sink, checkpoint) = (s"cluster-an-${UUID.randomUUID().toString.take(8)}", newDir())
    def availableNow(): StreamingQuery =
      stream(topic, "startingOffsets" -> "earliest", "failOnDataLoss" -> "false")
        .selectExpr("CAST(body AS STRING) AS body").writeStream.foreach(new EpochOutput(sink))
        .option("checkpointLocation", checkpoint).trigger(Trigger.AvailableNow()).start()
    def run(q: StreamingQuery): Unit = {
      assert(q.awaitTermination(180000), "the AvailableNow run did not end")
      if (q.exception.isDefined) throw q.exception.get
    }
    var sent = send(topic, "a")
    assert(cluster.storedOffsets("b-master", topic).sum > 0,
      "the producer spread no message to group b")
    run(availableNow())
    cluster.kill(
      "b-master") // the name server forgets group b: the topic's route lists group a alone
    var down = true
    try {
      sent ++= send(topic, "b") // to group a alone
      val second = availableNow()
      // The checkpoint names group b's queues: the run waits for the group (retryTimeoutMs), which
      // comes back.
      EmbeddedRocketMQ.awaitCondition("the run's first trigger under way", 60000)(
        second.status.isTriggerActive)
      cluster.restart("b-master")
      down = false
      run(second)
    } finally if (down) cluster.restart("b-master")
    sent ++= send(topic, "c")
    run(availableNow())
    // Group b's queues were never taken for gone: no message of theirs is read twice.
    assert(EpochOutput.rows(sink).map(_._1).sorted === sent.sorted)
  }

  test(
    "a broker group wholly down is unavailable to a continuous query too: its plan waits for the " +
      "group, which is read on from where it was (failOnDataLoss=false)") {
    val topic = newTopic("continuous-whole-group", groups = Seq(GroupA, GroupB),
      queues = 1) // a task slot each
    val sink = s"cluster-cont-${UUID.randomUUID().toString.take(8)}"
    var sent = send(topic, "a", 100)
    val q = stream(topic, "startingOffsets" -> "earliest", "failOnDataLoss" -> "false")
      .selectExpr("CAST(body AS STRING) AS body").writeStream.foreach(new EpochOutput(sink))
      .option("checkpointLocation", newDir()).trigger(Trigger.Continuous("1 second")).start()
    try {
      awaitRows(q, sink, sent)
      val pauses = RocketMQOffsetReader.unavailablePauses.get()
      withKilled("b-master") {
        // The stream sees its queues change and plans again: it waits for group b, whose queue it
        // reads.
        EmbeddedRocketMQ.awaitCondition("the continuous plan to wait for group b", 60000) {
          if (q.exception.isDefined) throw q.exception.get
          RocketMQOffsetReader.unavailablePauses.get() > pauses
        }
      }
      sent ++= send(topic, "c", 100)
      awaitRows(q, sink, sent)
    } finally q.stop()
    // Group b's queue was never taken for gone, and so never read again from its first message.
    assert(EpochOutput.rows(sink).map(_._1).sorted === sent.sorted)
  }

  for ((kind, trigger) <- Seq("micro-batch" -> Trigger.ProcessingTime("200 milliseconds"),
      "real-time" -> Trigger.RealTime("5 seconds"))) {
    test(
      s"a broker group wholly down is unavailable to a $kind stream, not gone: it reads on from " +
        "where it was once the group is back (failOnDataLoss=false)") {
      // One queue a group: a real-time batch runs a task per queue at once, on 2 task slots.
      val topic = newTopic(s"whole-group-$kind", groups = Seq(GroupA, GroupB), queues = 1)
      val sink = s"cluster-whole-$kind-${UUID.randomUUID().toString.take(8)}"
      var sent = send(topic, "a", 100)
      val q = stream(topic, "startingOffsets" -> "earliest", "failOnDataLoss" -> "false")
        .selectExpr("CAST(body AS STRING) AS body").writeStream.outputMode("update").foreach(
          new EpochOutput(sink))
        .option("checkpointLocation", newDir()).trigger(trigger).start()
      try {
        awaitRows(q, sink, sent)
        val pauses = RocketMQOffsetReader.unavailablePauses.get()
        withKilled("b-master") {
          val duringOutage = send(topic, "b", 100) // to group a alone
          sent ++= duringOutage
          // A micro-batch plan waits for group b (its queue is in the checkpoint); a real-time
          // batch reads group a's rows on while its task of group b's queue waits for the broker.
          EmbeddedRocketMQ.awaitCondition(s"the $kind stream to meet group b's outage", 60000) {
            if (q.exception.isDefined) throw q.exception.get
            RocketMQOffsetReader.unavailablePauses.get() > pauses ||
            duringOutage.toSet.subsetOf(EpochOutput.rows(sink).map(_._1).toSet)
          }
        }
        sent ++= send(topic, "c", 100)
        awaitRows(q, sink, sent)
      } finally q.stop()
      // Group b's queue was never taken for gone, and so never read again from its first message.
      assert(EpochOutput.rows(sink).map(_._1).sorted === sent.sorted)
    }
  }

  test(
    "a real-time stream reads on from the replica while the master is down, and through an " +
      "election") {
    // A real-time batch runs a task per queue at once for its whole length: one queue a group, on 2
    // task slots.
    val topic = newTopic("stream-real-time", groups = Seq(GroupA, GroupC), queues = 1)
    val sink = s"cluster-rt-${UUID.randomUUID().toString.take(8)}"
    val q = toSink(topic, sink, newDir(), Trigger.RealTime("5 seconds"))
    def awaitRows(sent: Seq[String]): Unit = this.awaitRows(q, sink, sent)
    try {
      var sent = send(topic, "a")
      awaitRows(sent)
      cluster.awaitReplicated(GroupA, topic)
      withKilled("a-master") {
        sent ++= send(topic, "b")
        awaitRows(sent)
      }
      val master = cluster.awaitMaster(GroupC)
      cluster.awaitReplicated(GroupC, topic)
      withKilled(master.label) {
        assert(cluster.awaitMaster(GroupC) != master)
        sent ++= send(topic, "c")
        awaitRows(sent)
      }
      sent ++= send(topic, "d")
      awaitRows(sent)
      assert(q.exception.isEmpty)
      assert(EpochOutput.rows(sink).map(_._1).sorted === sent.sorted)
    } finally q.stop()
  }

  test("a broker group that joins a running stream's topic is read from its first message") {
    val topic = newTopic("stream-join", groups = Seq(GroupB))
    val sink = s"cluster-join-${UUID.randomUUID().toString.take(8)}"
    val q = toSink(topic, sink, newDir(), Trigger.ProcessingTime("200 milliseconds"))
    try {
      var sent = send(topic, "a")
      awaitRows(q, sink, sent)
      cluster.createTopic(topic, queues = 4, groups = Seq(GroupA, GroupB))
      sent ++= send(topic, "b")
      awaitRows(q, sink, sent)
      assert(cluster.storedOffsets("a-master", topic).sum > 0,
        "nothing was sent to the group that joined")
      assert(EpochOutput.rows(sink).map(_._1).sorted === sent.sorted)
    } finally q.stop()
  }

  test(
    "a master that has not indexed all it stored is not a queue gone back: the stream waits for " +
      "its index") {
    // As a restarted master is while it rebuilds its queues' tails from its commit log: its queue
    // ends before where the stream already is. Made here by holding its indexing back and starting
    // the stream past its end.
    val topic = newTopic("stream-indexing", groups = Seq(GroupB), queues = 1)
    val sink = s"cluster-indexing-${UUID.randomUUID().toString.take(8)}"
    cluster.produce(topic, 100, i => s"a$i")
    cluster.command("b-master", "pauseIndexing")
    try {
      cluster.produce(topic, 100,
        i => s"b$i") // stored and acknowledged at offsets 100 to 199, not indexed yet
      // Planning asks the broker's status until its index has caught up.
      cluster.command("b-master", s"resumeIndexingAfterStatusRequests $StatusPolls")
      val query = stream(topic, "startingOffsets" -> s"""{"$topic":{"$GroupB":{"0":150}}}""")
        .selectExpr("CAST(body AS STRING) AS body").writeStream.outputMode("update").foreach(
          new EpochOutput(sink))
        .option("checkpointLocation", newDir()).trigger(
          Trigger.ProcessingTime("200 milliseconds")).start()
      val expected = (50 until 100).map(i => s"b$i")
      try awaitRows(query, sink, expected)
      finally query.stop()
      assert(EpochOutput.rows(sink).map(_._1).sorted === expected.sorted)
      assert(cluster.command("b-master", "statusRequests").split(" ").last.toInt >= StatusPolls)
    } finally cluster.command("b-master", "resumeIndexing")
  }
}
