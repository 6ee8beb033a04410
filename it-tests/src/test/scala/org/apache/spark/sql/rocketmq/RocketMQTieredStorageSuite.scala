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

import java.nio.file.{Files, Path}
import java.sql.Timestamp

import org.apache.spark.sql.rocketmq.EmbeddedRocketMQ.awaitCondition

/**
 * RocketMQ 5's tiered storage: a broker whose old commit-log files were offloaded to a second
 * store (here the file-system backend) and then deleted locally serves reads of those offsets from
 * the tier. Reads by offset, by store time (the start option and a pushed filter) must return the
 * offloaded messages exactly. Each queue holds more than the tier reads at once (4,096 messages),
 * read one pull at a time: RocketMQ 5.5's file-system backend reads wrong bytes when two reads of a
 * queue's tier files run at once (docs/reading.md#tiered-storage).
 */
class RocketMQTieredStorageSuite extends RocketMQSparkSuiteBase {
  import testImplicits._

  private lazy val tierDir: Path = Files.createTempDirectory("rocketmq-spark-tier-")

  // Small commit-log files, so that most of the topic's messages are in files that can be deleted.
  override protected def newRocketMQ(): EmbeddedRocketMQ = new EmbeddedRocketMQ(
    commitLogFileSize = 1024 * 1024,
    brokerProperties = TieredStorage.plugIn(tierDir)).start()

  private val Queues = 2
  private val PerHalf = 8000
  private val Padding = "x" * 200

  private def bodies(from: Int, until: Int): Seq[String] = (from until until).map(i =>
    s"m$i-$Padding")

  /** The topic, its store-time mark between the halves, once the tier holds every message. */
  private lazy val (topic, secondHalfFromMs) = {
    val topic = rocketmq.newTopic("tiered")
    rocketmq.createTopic(topic, queues = Queues)
    write(topic, bodies(0, PerHalf))
    val mark = System.currentTimeMillis() + 1
    awaitCondition("the clock to pass the mark", 5000)(System.currentTimeMillis() > mark)
    write(topic, bodies(PerHalf, 2 * PerHalf))
    TieredStorage.offloadAndDeleteLocally(rocketmq, topic, Queues)
    (topic, mark)
  }

  private def write(topic: String, rows: Seq[String]): Unit =
    rows.toDF("body").repartition(Queues).write.format("rocketmq")
      .option("nameServer", rocketmq.nameServer).option("topic", topic).save()

  /** A batch read of the topic, one pull at a time per queue. */
  private def readTiered(options: (String, String)*) =
    readTopic(topic, ("pullsInFlight" -> "1") +: options: _*)

  private def readBodies(df: org.apache.spark.sql.DataFrame): Seq[String] =
    df.selectExpr("CAST(body AS STRING)").as[String].collect().toSeq

  test(
    "a batch read from the earliest offset returns the messages offloaded to the tier and " +
      "deleted locally, each once, in queue order") {
    val local = rocketmq.localStore
    // More of each queue is in the tier alone than it reads at once.
    (0 until Queues).foreach(q => assert(local.getMinOffsetInQueue(topic, q) > 4096, s"queue $q"))
    val rows = readTiered().selectExpr("queueId", "queueOffset", "CAST(body AS STRING)")
      .as[(Int, Long, String)].collect().toSeq
    assert(rows.map(_._3).sorted === bodies(0, 2 * PerHalf).sorted)
    rows.groupBy(_._1).values.foreach { inQueue =>
      assert(inQueue.map(_._2) === (0L until inQueue.size.toLong), "every offset from 0, once")
    }
  }

  test("a read by store time, as a start option or a pushed filter, is exact on the tier") {
    val second = bodies(PerHalf, 2 * PerHalf).sorted
    assert(readBodies(readTiered("startingTimestamp" -> secondHalfFromMs.toString)).sorted
      === second)
    val filtered = readTiered().where($"storeTimestamp" >= new Timestamp(secondHalfFromMs))
    assert(readBodies(filtered).sorted === second)
    val before = readTiered().where($"storeTimestamp" < new Timestamp(secondHalfFromMs))
    assert(readBodies(before).sorted === bodies(0, PerHalf).sorted)
  }
}
