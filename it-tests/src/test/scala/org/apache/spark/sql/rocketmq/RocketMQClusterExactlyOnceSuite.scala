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

import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}
import org.apache.spark.sql.rocketmq.RocketMQClusterProcess.{GroupA, GroupB, GroupC}

/**
 * deliveryGuarantee=exactly_once on the shared cluster: a stream writes into a topic on a classic master/replica
 * group and a controller-mode group while the classic master is SIGKILLed and started again under it, then while
 * the controller replaces the other group's master. What a plain consumer (committed messages only) finds
 * afterwards is every source message once.
 */
class RocketMQClusterExactlyOnceSuite extends RocketMQClusterSuiteBase {

  /** A task whose half message went unanswered fails; Spark runs it again (attempts replace each other). */
  override protected def sparkMaster: String = "local[2,4]"

  test("exactly-once writes through a master kill and a controller-mode failover: every row once") {
    val source = newTopic("eo-source", groups = Seq(GroupB))
    val sink = newTopic("eo-sink", groups = Seq(GroupA, GroupC))
    val q: StreamingQuery = stream(source, "startingOffsets" -> "earliest").selectExpr("body")
      .writeStream.format("rocketmq").option("nameServer", cluster.nameServer).option("topic", sink)
      .option("deliveryGuarantee", "exactly_once")
      .option("checkpointLocation", Files.createTempDirectory("rocketmq-cluster-eo-").toString)
      .trigger(Trigger.ProcessingTime("200 milliseconds")).start()
    var sent = Seq.empty[String]
    def send(prefix: String): Unit = {
      val bodies = (0 until 300).map(i => s"$prefix$i")
      cluster.produce(source, bodies.size, bodies)
      sent ++= bodies
    }
    /** Waits until the sink holds as many messages as were sent (a failed query throws here). */
    def awaitSink(): Unit = EmbeddedRocketMQ.awaitCondition(s"${sent.size} messages in $sink", 180000) {
      if (q.exception.isDefined) throw q.exception.get
      cluster.messageCount(sink) >= sent.size
    }
    try {
      send("a")
      awaitSink()
      // Killed while the stream writes: sends to it fail and go to group c, commits wait for it to return.
      cluster.kill("a-master")
      send("b")
      cluster.restart("a-master")
      awaitSink()
      // The controller elects c's replica once the stream is idle and the replica has copied everything.
      val master = cluster.awaitMaster(GroupC)
      cluster.awaitReplicatedLog(GroupC)
      withKilled(master.label) {
        assert(cluster.awaitMaster(GroupC) != master)
        send("c")
        awaitSink()
      }
      send("d")
      awaitSink()
      assert(q.exception.isEmpty)
    } finally q.stop()
    assert(cluster.readBodies(sink).sorted === sent.sorted)
  }
}
