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

import scala.jdk.CollectionConverters._

import org.apache.rocketmq.common.lite.LiteUtil
import org.apache.rocketmq.common.message.MessageDecoder

/**
 * Lite topics (RocketMQ 5.5): a row's `liteTopic` files its message under that lite topic of the
 * topic it is written to, on a broker with lite topics on (`enableLmq`, `enableMultiDispatch`,
 * which RocketMQ leaves off); the topic itself holds every message.
 */
class RocketMQLiteTopicSuite extends RocketMQSparkSuiteBase {
  import testImplicits._

  override protected def newRocketMQ(): EmbeddedRocketMQ = new EmbeddedRocketMQ(
    brokerProperties = Map("enableLmq" -> "true", "enableMultiDispatch" -> "true")).start()

  /** The bodies the broker filed under `lite` of `topic`. */
  private def filedUnder(topic: String, lite: String): Seq[String] = {
    val store = rocketmq.brokerController.getMessageStore
    val lmq = LiteUtil.toLmqName(topic, lite)
    val result = store.getMessage("test", lmq, 0, 0L, 1000, null)
    try result.getMessageBufferList.asScala.toSeq.map(b =>
        new String(MessageDecoder.decode(b).getBody, StandardCharsets.UTF_8))
    finally result.release()
  }

  test(
    "rows with a lite topic are filed under it, each once; the topic holds every " +
      "row, a read of it gives each with its lite topic") {
    val topic = rocketmq.newTopic("lite")
    rocketmq.createTopic(topic, queues = 2, messageType = Some("LITE"))
    val rows = (0 until 30).map(i => (s"m$i", if (i % 3 == 0) null else s"user-${i % 3}"))
    rows.toDF("body", "liteTopic").coalesce(1).write.format("rocketmq")
      .option("nameServer", rocketmq.nameServer).option("topic", topic).save()
    rocketmq.awaitIndexed()
    Seq("user-1", "user-2").foreach { lite =>
      assert(filedUnder(topic, lite).sorted === rows.filter(_._2 == lite).map(_._1).sorted, lite)
    }
    val read = readTopic(topic)
      .selectExpr("CAST(body AS STRING)", "get_json_object(properties, '$.__LITE_TOPIC')")
      .as[(String, String)].collect().toSeq
    assert(read.sortBy(_._1) === rows.sortBy(_._1))
  }

  test(
    "a lite topic that is not a RocketMQ name fails naming the row; with exactly-once or a " +
      "delivery delay the write is refused before any send") {
    val topic = rocketmq.newTopic("lite-bad")
    rocketmq.createTopic(topic, queues = 1, messageType = Some("LITE"))
    def write(df: org.apache.spark.sql.DataFrame, options: (String, String)*): Unit =
      df.write.format("rocketmq").option("nameServer", rocketmq.nameServer)
        .option("topic", topic).options(options.toMap).mode("append").save()
    val bad = errorMessage(write(Seq(("a", "ok"), ("b", "not ok")).toDF("body", "liteTopic")
      .coalesce(1)))
    assert(bad.contains("ROCKETMQ_INVALID_LITE_TOPIC") && bad.contains("Row 1 ") &&
        bad.contains("'not ok'"), bad)
    val rows = Seq(("c", "u1")).toDF("body", "liteTopic")
    val once = errorMessage(write(rows, "deliveryGuarantee" -> "exactly_once",
      "checkpointLocation" -> java.nio.file.Files.createTempDirectory("lite-eo-").toString))
    assert(once.contains("ROCKETMQ_LITE_TOPIC_NOT_SUPPORTED.EXACTLY_ONCE"), once)
    val delayed = errorMessage(write(rows, "deliveryDelayMs" -> "1000"))
    assert(delayed.contains("ROCKETMQ_LITE_TOPIC_NOT_SUPPORTED.DELIVERY_TIME"), delayed)
    // Only the row before the bad name was sent.
    assert(rocketmq.readAll(topic).map(m => new String(m.getBody, StandardCharsets.UTF_8)) ===
      Seq("a"))
  }
}
