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

import org.apache.spark.sql.streaming.Trigger

/**
 * A name server that does not know a topic for a moment (it restarted, or dropped the broker's
 * registration) while the broker still has the topic and every message: the queues are unavailable,
 * not gone (DESIGN: only a broker that answers and denies a topic or queue is data loss).
 */
class RocketMQRouteLossSuite extends RocketMQSparkSuiteBase {

  test(
    "a stream survives a topic route missing from the name server for a few triggers, and loses " +
      "nothing") {
    val topic = rocketmq.newTopic("route")
    rocketmq.createTopic(topic, queues = 4)
    rocketmq.sendBodies(topic, (0 until 40).map(i => s"m$i"))
    val checkpoint = Files.createTempDirectory("rocketmq-route-").toString
    spark.conf.set("spark.sql.streaming.noDataProgressEventInterval", "0")
    val q = streamTopic(topic, "startingOffsets" -> "earliest")
      .selectExpr("CAST(body AS STRING) AS body", "queueId", "queueOffset")
      .writeStream.format("memory").queryName("route_loss")
      .option("checkpointLocation", checkpoint).trigger(Trigger.ProcessingTime(200)).start()
    try {
      q.processAllAvailable()
      rocketmq.dropRoute(topic)
      // Five triggers plan against the missing route (each reports progress, data or not).
      val batchesBefore = q.recentProgress.length
      EmbeddedRocketMQ.awaitCondition("five triggers without the route", 60000) {
        !q.isActive || q.recentProgress.length >= batchesBefore + 5
      }
      assert(q.isActive,
        s"the query stopped while the route was missing: ${q.exception.map(_.getMessage)}")
      rocketmq.createTopic(topic, queues = 4) // the route is back
      rocketmq.sendBodies(topic, (40 until 60).map(i => s"m$i"))
      q.processAllAvailable()
      val rows = spark.table("route_loss").collect()
      assert(rows.map(r => (r.getInt(1), r.getLong(2))).distinct.length === rows.length,
        "a message was read twice")
      assert(rows.map(_.getString(0)).sorted.toSeq === (0 until 60).map(i => s"m$i").sorted)
    } finally {
      q.stop()
      spark.conf.unset("spark.sql.streaming.noDataProgressEventInterval")
    }
  }
}
