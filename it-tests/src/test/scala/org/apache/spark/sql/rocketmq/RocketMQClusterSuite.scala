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

import org.scalatest.DoNotDiscover

import org.apache.spark.sql.rocketmq.RocketMQClusterProcess.{GroupA, GroupB, GroupC}

/**
 * Reads and writes on a real cluster ([[RocketMQClusterProcess]]: groups of master and replica, a
 * master alone, a controller-mode pair, every broker a JVM of its own) while masters are killed
 * with SIGKILL: a replica that serves reads stands in for its master, a group that nothing can
 * serve is unavailable (never left out of a read), and a read planned after a write sees all of it.
 * One cluster and one Spark session for the suite; each test leaves every broker running.
 */
@DoNotDiscover // run by RocketMQClusterSuites, with the other suites of the shared cluster
class RocketMQClusterSuite extends RocketMQClusterSuiteBase {

  test(
    "a batch read goes on from the replica while its group's master is down: every message once") {
    val topic = newTopic("replica-read")
    cluster.produce(topic, 2000, i => s"m$i")
    cluster.awaitReplicated(GroupA, topic)
    val expected = (0 until 2000).map(i => s"m$i")
    val onA = cluster.storedOffsets("a-master", topic).sum
    assert(onA > 0, "the producer spread no message to group a")
    withKilled("a-master") {
      val df = read(topic)
      assert(bodies(df).sorted === expected.sorted)
      val fromA = df.where(s"brokerName = '$GroupA'").count()
      assert(fromA === onA)
    }
  }

  test(
    "a group whose master is down and whose replica refuses reads is unavailable: the read fails " +
      "naming it") {
    val topic = newTopic("replica-refuses")
    cluster.produce(topic, 400, i => s"m$i")
    cluster.awaitReplicated(GroupA, topic)
    assert(cluster.storedOffsets("a-master", topic).forall(_ > 0),
      "a queue of group a holds no message")
    cluster.command("a-replica", "set slaveReadEnable false")
    try {
      val message = withKilled("a-master") {
        errorMessage(bodies(read(topic, "retryTimeoutMs" -> "3000")))
      }
      assert(message.contains("[ROCKETMQ_BROKER_UNAVAILABLE.NO_MASTER]") &&
          message.contains(s"'$GroupA'"), message)
    } finally cluster.command("a-replica", "set slaveReadEnable true")
    // With the master back, the same read returns everything.
    assert(bodies(read(topic)).size === 400)
  }

  test("a group wholly down (a master without replicas) is forgotten by the name server: " +
    "expectedBrokerGroups " +
    "makes the read wait for it and fail naming it, as offsets naming its queues do (a stream's " +
    "too); with the group back, every message") {
    val topic = newTopic("whole-group", groups = Seq(GroupA, GroupB))
    cluster.produce(topic, 1000, i => s"m$i")
    val onB = cluster.storedOffsets("b-master", topic).sum
    assert(onB > 0, "the producer spread no message to group b")
    withKilled("b-master") {
      // Without the option the read sees only what the route still lists: group a's messages, no
      // error.
      assert(bodies(read(topic)).size === 1000 - onB)
      for (expected <- Seq(s"$GroupA,$GroupB", "2")) {
        val message = errorMessage(bodies(read(topic, "expectedBrokerGroups" -> expected,
          "retryTimeoutMs" -> "1500")))
        assert(message.contains("[ROCKETMQ_BROKER_UNAVAILABLE.EXPECTED_GROUPS]") &&
            message.contains(s"'$topic'") &&
            message.contains(s"served by broker groups $GroupA now"), message)
        val missing =
          if (expected == "2") "1 more broker group(s), 2 in all" else s"broker group(s) '$GroupB'"
        assert(message.contains(missing), message)
      }
      // Offsets that name the group's queues: waited for as unavailable, not refused as unknown
      // queues.
      val named = errorMessage(bodies(read(topic, "retryTimeoutMs" -> "1500",
        "startingOffsets" -> s"""{"$topic":{"$GroupA":{"0":0},"$GroupB":{"0":0}}}""")))
      assert(named.contains("[ROCKETMQ_BROKER_UNAVAILABLE.UNREACHABLE]") &&
          named.contains(s"'$GroupB'"), named)
      // A stream started from such offsets waits as the batch read does.
      val streamed = errorMessage {
        val q = stream(topic, "retryTimeoutMs" -> "1500",
          "startingOffsets" -> s"""{"$topic":{"$GroupA":{"0":0},"$GroupB":{"0":0}}}""")
          .writeStream.format("noop").option("checkpointLocation",
            Files.createTempDirectory("named").toString)
          .start()
        try q.processAllAvailable()
        finally q.stop()
      }
      assert(streamed.contains("[ROCKETMQ_BROKER_UNAVAILABLE.UNREACHABLE]") &&
          streamed.contains(s"'$GroupB'"),
        streamed)
    }
    assert(bodies(read(topic, "expectedBrokerGroups" -> s"$GroupA,$GroupB")).sorted ===
      (0 until 1000).map(i => s"m$i").sorted)
  }

  test(
    "a replica that has not copied the topic yet does not make its group's queues gone: planning " +
      "waits, fails") {
    // A topic created on the masters; the master of group a dies before its replica copies the
    // topic (it copies every few seconds: when it did in the moment between, the attempt is made
    // again, a few times).
    val attempts = 5
    def attempt(left: Int): String = {
      val topic = s"uncopied-${UUID.randomUUID().toString.take(8)}"
      cluster.createTopicOn("a-master", topic)
      cluster.createTopic(topic, groups = Seq(GroupB))
      cluster.produce(topic, 200, i => s"m$i")
      cluster.kill("a-master")
      if (!cluster.knowsTopic("a-replica", topic)) topic
      else {
        cluster.restart("a-master")
        assert(left > 1,
          s"the replica copied the topic before the master's kill in each of $attempts attempts")
        attempt(left - 1)
      }
    }
    val topic = attempt(attempts)
    try {
      val message = errorMessage(read(topic, "retryTimeoutMs" -> "2000").count())
      assert(message.contains("[ROCKETMQ_BROKER_UNAVAILABLE.NO_MASTER]") &&
          message.contains(s"'$GroupA'") &&
          message.contains("does not know the topic"), message)
    } finally cluster.restart("a-master")
    assert(bodies(read(topic)).size === 200)
  }

  test(
    "a batch read planned after an acknowledged write sees all of it, though the broker indexes " +
      "it later") {
    val topic = newTopic("read-after-write", groups = Seq(GroupB))
    cluster.produce(topic, 100, i => s"m$i")
    cluster.command("b-master", "pauseIndexing")
    try {
      // Stored and acknowledged, not yet indexed: offsets do not count them.
      cluster.produce(topic, 300, i => s"n$i")
      // Planning asks the broker's status until its index has caught up.
      cluster.command("b-master", s"resumeIndexingAfterStatusRequests $StatusPolls")
      assert(read(topic).count() === 400)
      assert(cluster.command("b-master", "statusRequests").split(" ").last.toInt >= StatusPolls)
    } finally cluster.command("b-master", "resumeIndexing")
  }

  test(
    "controller mode: the master killed, a replica elected; a batch read before and after sees " +
      "every message") {
    val topic = newTopic("controller", groups = Seq(GroupC))
    cluster.produce(topic, 500, i => s"m$i")
    val master = cluster.awaitMaster(GroupC)
    cluster.awaitReplicated(GroupC, topic)
    withKilled(master.label) {
      val elected = cluster.awaitMaster(GroupC)
      assert(elected != master)
      assert(bodies(read(topic)).sorted === (0 until 500).map(i => s"m$i").sorted)
      cluster.produce(topic, 100, i => s"n$i")
    }
    assert(bodies(read(topic)).size === 600)
  }

  test(
    "a write while a master is down: rows without a key go to the live groups, keyed rows keep " +
      "their queue") {
    val topic = newTopic("write-outage", groups = Seq(GroupA, GroupB))
    def write(rows: Seq[(String, String)], options: (String, String)*): Unit =
      spark.createDataFrame(rows).toDF("body", "shardingKey").write.format("rocketmq").option(
        "nameServer",
        cluster.nameServer)
        .option("topic", topic).options(options.toMap).save()
    // Keys pick among the 8 queues by name: those of group a first.
    val keyOnA = Iterator.from(0).map(i => s"k$i").find(k => Math.floorMod(k.hashCode, 8) < 4).get
    val keyOnB = Iterator.from(0).map(i => s"k$i").find(k => Math.floorMod(k.hashCode, 8) >= 4).get
    write(Seq("before" -> keyOnA))
    withKilled("a-master") {
      val unkeyed = (0 until 500).map(i => s"u$i")
      spark.createDataFrame(unkeyed.map(Tuple1(_))).toDF("body").write.format("rocketmq")
        .option("nameServer", cluster.nameServer).option("topic", topic).save()
      assert(cluster.bodiesOn(topic, GroupB).filter(_.startsWith("u")).sorted === unkeyed.sorted)
      write(Seq("during" -> keyOnB))
      val message = errorMessage(write(Seq("waiting" -> keyOnA), "retryTimeoutMs" -> "2000"))
      assert(message.contains("ROCKETMQ_SEND_FAILED") && message.contains(GroupA), message)
      assert(!cluster.bodiesOn(topic, GroupB).contains("waiting"),
        "a keyed row moved to another group's queue")
    }
    write(Seq("after" -> keyOnA))
    assert(cluster.bodiesOn(topic, GroupA).filterNot(_.startsWith("u")) === Seq("before", "after"))
    assert(cluster.bodiesOn(topic, GroupB).filterNot(_.startsWith("u")) === Seq("during"))
  }
}
