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

import scala.jdk.CollectionConverters._

import org.apache.rocketmq.client.trace.{TraceContext, TraceType}
import org.apache.rocketmq.common.message.MessageType
import org.apache.rocketmq.common.topic.TopicValidator
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt

/**
 * traceEnabled: each message a write stores gets a Pub record of RocketMQ's message trace in the
 * trace topic, which RocketMQ's own decoder and admin (the look-up by message id its consoles
 * make) read back.
 */
class RocketMQTraceSuite extends RocketMQSparkSuiteBase {
  import testImplicits._

  /** Writes rows with tags and keys to a new topic; the messages stored, by message id. */
  private def write(options: (String, String)*): Map[String, (String, String, String)] = {
    val topic = rocketmq.newTopic("traced")
    rocketmq.createTopic(topic, queues = 2)
    val rows = (0 until 12).map(i => (s"body-$i", s"tag${i % 3}", s"key-$i"))
    val df = rows.toDF("body", "tags", "keys")
    val batched = df.filter($"tags" =!= "tag2")
    // One by one (a sharding key each) and in message batches: both are recorded per message.
    val alone = df.filter($"tags" === "tag2").withColumn("shardingKey", $"keys")
    Seq(batched, alone).foreach(
      _.write.format("rocketmq").options(Map("nameServer" -> rocketmq.nameServer,
        "topic" -> topic) ++ options).save())
    rocketmq.readAll(topic).map(m =>
      m.getMsgId -> (topic, m.getTags, m.getKeys)).toMap
  }

  /** Waits for a Pub record of each of `written` in `traceTopic`, and checks what it says. */
  private def assertTraced(written: Map[String, (String, String, String)], traceTopic: String,
      msgType: MessageType = MessageType.Normal_Msg): Unit = {
    assert(written.size === 12)
    var records = Map.empty[String, TraceContext]
    EmbeddedRocketMQ.awaitCondition(s"a trace record of each message in $traceTopic", 60000) {
      records = RocketMQTraceRecords.pubRecords(rocketmq, traceTopic)
        .map(c => c.getTraceBeans.get(0).getMsgId -> c).toMap
      written.keySet.subsetOf(records.keySet)
    }
    written.foreach { case (msgId, (topic, tags, keys)) =>
      val record = records(msgId)
      val bean = record.getTraceBeans.get(0)
      assert((bean.getTopic, bean.getTags, bean.getKeys) === ((topic, tags, keys)), msgId)
      assert(record.getGroupName === "spark-rocketmq-writer" && record.isSuccess)
      assert(bean.getMsgType === msgType && bean.getBodyLength > 0)
      assert(bean.getStoreHost === rocketmq.brokerController.getBrokerAddr)
      assert(bean.getOffsetMsgId != null && bean.getOffsetMsgId != "null")
    }
  }

  test("traceEnabled records a Pub record of each message written in RMQ_SYS_TRACE_TOPIC, " +
    "which RocketMQ's admin finds by message id") {
    val traceTopic = TopicValidator.RMQ_SYS_TRACE_TOPIC
    rocketmq.createTopic(traceTopic, queues = 1)
    val written = write("traceEnabled" -> "true")
    assertTraced(written, traceTopic)

    // What `mqadmin queryMsgTraceById` and the consoles do: the trace topic's messages keyed with
    // the message id, decoded.
    rocketmq.awaitIndexed()
    val admin = new DefaultMQAdminExt(5000L)
    admin.setNamesrvAddr(rocketmq.nameServer)
    admin.setInstanceName(s"trace-admin-${System.nanoTime()}")
    admin.start()
    try {
      val msgId = written.keys.head
      val found = admin.queryMessage(traceTopic, msgId, 64, 0L, System.currentTimeMillis())
        .getMessageList.asScala.flatMap(m => RocketMQTraceRecords.decode(m.getBody))
      assert(found.exists(c =>
          c.getTraceType == TraceType.Pub &&
            c.getTraceBeans.get(0).getMsgId == msgId), found)
    } finally admin.shutdown()
  }

  test("traceTopic: the records go to the topic named") {
    val traceTopic = rocketmq.newTopic("trace")
    rocketmq.createTopic(traceTopic, queues = 1)
    assertTraced(write("traceEnabled" -> "true", "traceTopic" -> traceTopic), traceTopic)
  }

  test(
    "an exactly-once write records each half message as RocketMQ's transactional producer does") {
    val traceTopic = rocketmq.newTopic("trace-eos")
    rocketmq.createTopic(traceTopic, queues = 1)
    val written = write("traceEnabled" -> "true", "traceTopic" -> traceTopic,
      "deliveryGuarantee" -> "exactly_once")
    assertTraced(written, traceTopic, MessageType.Trans_Msg_Half)
  }

  test("without traceEnabled nothing is recorded") {
    val traceTopic = rocketmq.newTopic("trace-off")
    rocketmq.createTopic(traceTopic, queues = 1)
    val untraced = write("traceTopic" -> traceTopic)
    // A traced write afterwards: once its records are in, the first write's would be too.
    assertTraced(write("traceEnabled" -> "true", "traceTopic" -> traceTopic), traceTopic)
    val recorded = RocketMQTraceRecords.tracedIds(rocketmq, traceTopic)
    assert(untraced.keySet.intersect(recorded).isEmpty)
    assert(recorded.size === 12)
  }

  test("a bad traceTopic fails naming the option") {
    val message = errorMessage(Seq("x").toDF("body").write.format("rocketmq")
      .option("nameServer", rocketmq.nameServer).option("topic", "t")
      .option("traceEnabled", "true").option("traceTopic", "no spaces").save())
    assert(message.contains("'traceTopic'") && message.contains("no spaces"), message)
  }

  test("a traced write of 50,000 rows stores every row, and records what the dispatcher has room " +
    "for (the rest are dropped, never waited for)") {
    val n = 50000
    def timedWrite(options: (String, String)*): (String, Long) = {
      val topic = rocketmq.newTopic("trace-load")
      rocketmq.createTopic(topic, queues = 4)
      val start = System.nanoTime()
      spark.range(0, n, 1, 2).selectExpr("CAST(id AS STRING) AS body").write.format("rocketmq")
        .options(Map("nameServer" -> rocketmq.nameServer, "topic" -> topic) ++ options).save()
      (topic, (System.nanoTime() - start) / 1000000)
    }
    val traceTopic = rocketmq.newTopic("trace-load-records")
    rocketmq.createTopic(traceTopic, queues = 1)
    val traced = Seq("traceEnabled" -> "true", "traceTopic" -> traceTopic)
    // Each first: its producer (and trace dispatcher) starts, and the JVM's code is not yet warm.
    timedWrite()
    timedWrite(traced: _*)
    val (_, plainMs) = timedWrite()
    val (topic, tracedMs) = timedWrite(traced: _*)
    assert(rocketmq.latestOffsets(topic).values.sum === n.toLong)
    // Records go on arriving after the write: until none came for longer than the dispatcher's
    // five-second flush interval.
    var (stored, changedAt) = (-1L, System.nanoTime())
    EmbeddedRocketMQ.awaitCondition("the trace records to stop arriving", 120000) {
      val now = rocketmq.latestOffsets(traceTopic).values.sum
      if (now != stored) { stored = now; changedAt = System.nanoTime() }
      System.nanoTime() - changedAt > 6000L * 1000000
    }
    val recorded = RocketMQTraceRecords.pubRecords(rocketmq, traceTopic)
      .filter(_.getTraceBeans.get(0).getTopic == topic).map(_.getTraceBeans.get(0).getMsgId).toSet
    info(s"$n rows of 2 tasks: $plainMs ms untraced, $tracedMs ms traced; ${recorded.size} " +
      s"recorded")
    assert(recorded.nonEmpty && recorded.size <= n)
  }
}
