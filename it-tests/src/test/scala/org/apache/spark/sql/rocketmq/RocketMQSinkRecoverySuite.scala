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

import java.nio.charset.StandardCharsets
import java.nio.file.Files

import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}

/**
 * The sink's broker stops while a streaming query writes to it: the query fails (nothing is lost
 * silently), and once the broker is back the query, restarted from its checkpoint, writes every
 * row.
 */
class RocketMQSinkRecoverySuite extends RocketMQSparkSuiteBase {

  /** The sink's own broker, which this suite stops; the source stays on the shared one. */
  override protected def newRocketMQ(): EmbeddedRocketMQ = {
    val mq = new EmbeddedRocketMQ().start()
    Runtime.getRuntime.addShutdownHook(new Thread(() => mq.discard()))
    mq
  }

  private lazy val sourceBroker = EmbeddedRocketMQ.shared

  /** Failed tasks are retried, as on a cluster (a retry borrows a fresh producer). */
  override protected def sparkMaster: String = "local[2,4]"

  test(
    "the sink's broker down for longer than retryTimeoutMs: the query fails; restarted, every " +
      "row lands") {
    val (in, out) = (sourceBroker.newTopic("in"), rocketmq.newTopic("out"))
    sourceBroker.createTopic(in, queues = 2)
    rocketmq.createTopic(out, queues = 2)
    val checkpoint = Files.createTempDirectory("rocketmq-recovery-").toString
    def start(): StreamingQuery =
      spark.readStream.format("rocketmq").option("nameServer", sourceBroker.nameServer).option(
        "topic", in)
        .option("startingOffsets", "earliest").option("maxOffsetsPerTrigger", "50").load()
        .selectExpr("body")
        .writeStream.format("rocketmq").option("nameServer", rocketmq.nameServer).option("topic",
          out)
        .option("sendTimeoutMs", "2000").option("retryTimeoutMs", "3000")
        .option("checkpointLocation", checkpoint).trigger(Trigger.ProcessingTime(0)).start()
    def stored: Seq[String] =
      rocketmq.readAll(out).map(m => new String(m.getBody, StandardCharsets.UTF_8))

    sourceBroker.sendBodies(in, (0 until 100).map(i => s"m$i"))
    val first = start()
    first.processAllAvailable()
    assert(stored.sorted === (0 until 100).map(i => s"m$i").sorted)

    rocketmq.stopBroker()
    sourceBroker.sendBodies(in, (100 until 200).map(i => s"m$i"))
    val failure = intercept[Exception](first.awaitTermination(120000))
    assert(!first.isActive)
    // The next batch's sends find no broker to send to: each task retries for 3 s, then fails. (The
    // driver does not ask the name server again at each micro-batch's plan: only the query's first
    // plan checks the topic.)
    assert(failure.getMessage.contains("[ROCKETMQ_SEND_FAILED.RETRIES_EXHAUSTED]") &&
        failure.getMessage.contains(s"'$out'") &&
        failure.getMessage.contains("'retryTimeoutMs' (3000 ms)"),
      failure.getMessage)

    rocketmq.startBroker()
    val second = start()
    try second.processAllAvailable()
    finally second.stop()
    // At least once: every row is there; a batch that failed part-way may have written some twice.
    assert(stored.toSet === (0 until 200).map(i => s"m$i").toSet)
  }
}
