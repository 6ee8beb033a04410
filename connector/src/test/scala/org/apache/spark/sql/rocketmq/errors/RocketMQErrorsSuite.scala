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

package org.apache.spark.sql.rocketmq.errors

import java.nio.charset.StandardCharsets

import scala.jdk.CollectionConverters._
import scala.util.Try

import org.apache.rocketmq.client.exception.MQBrokerException
import org.apache.rocketmq.remoting.protocol.ResponseCode
import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.SparkThrowable
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.util.ArrayBasedMapData
import org.apache.spark.sql.connector.catalog.{Column, Identifier}
import org.apache.spark.sql.connector.expressions.{Expressions, Transform}
import org.apache.spark.sql.rocketmq.{
  RocketMQCatalog, RocketMQException, RocketMQInvalidInputException, RocketMQOffsetResolver,
  RocketMQRowToMessage,
  RocketMQSourceOffset, RocketMQUnsupportedOperationException, RocketMQWriteColumns
}
import org.apache.spark.sql.rocketmq.common.{
  RocketMQExpectedGroups, RocketMQOffsetRangeLimit, RocketMQQueue, RocketMQQueueRange
}
import org.apache.spark.sql.rocketmq.errors.RocketMQErrorKinds.{
  AdminRequest, BrokerRequest, DataLossReason, GaveUp
}
import org.apache.spark.sql.rocketmq.errors.RocketMQErrors.NoServingBroker
import org.apache.spark.sql.rocketmq.options.{RocketMQConnectionOptions, RocketMQOptions}
import org.apache.spark.sql.rocketmq.producer.RocketMQWriteSettings
import org.apache.spark.sql.rocketmq.transaction.RocketMQBrokerCheckSettings
import org.apache.spark.sql.types._
import org.apache.spark.sql.util.CaseInsensitiveStringMap
import org.apache.spark.unsafe.types.UTF8String

/**
 * Every condition of `error/rocketmq-error-conditions.json` is raised here once, through the code
 * that raises it in the connector wherever that runs without a broker (the factory otherwise), and
 * its message must fill every placeholder of its template with a parameter and carry no parameter
 * the template does not use.
 */
class RocketMQErrorsSuite extends AnyFunSuite {

  private def options(kv: (String, String)*) =
    new RocketMQOptions((Seq("nameServer" -> "h:1", "topic" -> "t") ++ kv).toMap)

  private def raised(body: => Any): Throwable =
    Try(body).failed.getOrElse(fail("no error was raised"))

  private val q = RocketMQQueue("t", "b", 0)
  private val cause = new IllegalStateException("the broker said no")

  private def rowError(row: InternalRow, schema: StructType, topic: Option[String] = None)
      : Throwable = {
    val settings = RocketMQWriteSettings(
      new RocketMQOptions(Map("nameServer" -> "h:1") ++ topic.map("topic" -> _)))
    raised(new RocketMQRowToMessage(settings,
      RocketMQWriteColumns.resolve(schema, topic)).toMessage(row, 4))
  }

  private def s(v: String) = UTF8String.fromString(v)

  private def withProperty(name: String, value: String = "v"): InternalRow =
    InternalRow(s("x"), ArrayBasedMapData(Array[Any](s(name)), Array[Any](s(value))))

  private val propertySchema =
    new StructType().add("body", StringType).add("properties", MapType(StringType, StringType))

  /** A catalog whose refusals come before any request (its name server is never asked). */
  private val catalog = {
    val c = new RocketMQCatalog()
    c.initialize("rmq", new CaseInsensitiveStringMap(Map("nameServer" -> "h:1").asJava))
    c
  }
  private val table = Identifier.of(Array.empty[String], "t")

  private def createTable(columns: Array[Column], partitions: Array[Transform],
      properties: Map[String, String]) =
    catalog.createTable(table, columns, partitions, properties.asJava)

  private def errors: Seq[Throwable] = Seq(
    raised(new RocketMQOptions(Map.empty)(RocketMQOptions.NameServer)),
    raised(new RocketMQOptions(Map.empty).topicSelection),
    raised(options("pullBatchSize" -> "x")(RocketMQOptions.PullBatchSize)),
    raised(options("sendRetries" -> "-1")(RocketMQOptions.SendRetries)),
    raised(options("failOnDataLoss" -> "x")(RocketMQOptions.FailOnDataLoss)),
    raised(options("maxTriggerDelay" -> "x")(RocketMQOptions.MaxTriggerDelay)),
    raised(options("startingTimestamp" -> "x")(RocketMQOptions.StartingTimestamp)),
    raised(options("nameServer" -> "x")(RocketMQOptions.NameServer)),
    raised(options("topic" -> "a b").topicSelection),
    raised(options("topicPattern" -> "a(").topicSelection),
    raised(options("consumerGroup" -> "a b")(RocketMQOptions.ConsumerGroup)),
    raised(options("sqlFilter" -> "a >>> 5")(RocketMQOptions.SqlFilter)),
    raised(options("namespace" -> "a%b")(RocketMQOptions.Namespace)),
    raised(options("accessChannel" -> "x")(RocketMQOptions.AccessChannelOption)),
    raised(options("expectedBrokerGroups" -> "0")(RocketMQOptions.ExpectedBrokerGroups)),
    raised(RocketMQConnectionOptions.resolve(options("accessKey" -> "ak"), _ => None, _ => None)),
    raised(options("startingOffsets" -> "x").validateForStream()),
    raised(options("maxTriggerDelay" -> "5s").validateForRealTime()),
    raised(options("minPartitions" -> "4").validateForContinuous()),
    raised(options("startingOffset" -> "earliest").validateForStream()),
    raised(throw RocketMQErrors.optionNotAllowed("deliveryGuarantee", "CONTINUOUS_EXACTLY_ONCE")),
    raised(throw RocketMQErrors.optionNotAllowed("deliveryGuarantee", "REAL_TIME_EXACTLY_ONCE")),
    raised(throw RocketMQErrors.optionNotAllowed("deliveryGuarantee", "PROXY_EXACTLY_ONCE")),
    raised(options("startingOffsets" -> "group").validateForStream()),
    raised(options("groupOffsetFallback" -> "first")(RocketMQOptions.GroupOffsetFallback)),
    raised(options("endingOffsets" -> "group").validateForBatchRead()),
    raised(options("startingOffsets" -> """{"t":{"b":{"0":-3}}}""").validateForStream()),
    raised(options("startingOffsetsByTimestamp" -> """{"t":{"b":{"0":-3}}}""").validateForStream()),
    raised(options("startingOffsets" -> "latest").validateForBatchRead()),
    raised(options("startingOffsets" -> """{"t":{"b":{"0":-1}}}""").validateForBatchRead()),
    raised(options("endingOffsets" -> "earliest").validateForBatchRead()),
    raised(options("endingOffsets" -> """{"t":{"b":{"0":-2}}}""").validateForBatchRead()),
    raised(options("startingOffsets" -> """{"u":{"b":{"0":1}}}""").validateForStream()),
    raised(options("minOffsetsPerTrigger" -> "9",
      "maxOffsetsPerTrigger" -> "5").validateForStream()),
    raised(options("startingOffsets" -> "{").validateForStream()),
    raised(options("startingOffsetsByTimestamp" -> "[]").validateForStream()),
    raised(options("endingOffsets" -> """{"t":1}""").validateForBatchRead()),
    raised(options("endingOffsets" -> """{"t":{"b":1}}""").validateForBatchRead()),
    raised(options("endingOffsets" -> """{"t":{"b":{"x":1}}}""").validateForBatchRead()),
    raised(options("endingOffsets" -> """{"t":{"b":{"0":"x"}}}""").validateForBatchRead()),
    raised(options("startingTimestamp" -> "1",
      "startingOffsets" -> "earliest").validateForStream()),
    raised(options("maxOffsetsPerTrigger" -> "1").validateForBatchRead()),
    raised(options("endingTimestamp" -> "1").validateForStream()),
    raised(RocketMQOffsetResolver.resolve(RocketMQOffsetRangeLimit.Specific(Map(RocketMQQueue("t",
        "b", 9) -> 1L)),
      Map(q -> RocketMQQueueRange(0, 1)), isStart = true, fail("no broker request"))),
    RocketMQErrors.startAfterEnd(q, 5, 3),
    RocketMQErrors.saveModeNotSupported("Overwrite"),
    raised(RocketMQWriteColumns.resolve(new StructType().add("value", StringType), Some("t"))),
    raised(RocketMQWriteColumns.resolve(new StructType().add("body", StringType), None)),
    raised(RocketMQWriteColumns.resolve(new StructType().add("body", IntegerType), Some("t"))),
    rowError(InternalRow(null), new StructType().add("body", StringType), Some("t")),
    rowError(InternalRow(s("x"), null),
      new StructType().add("body", StringType).add("topic", StringType)),
    rowError(withProperty(" "), propertySchema, Some("t")),
    rowError(withProperty("TAGS"), propertySchema, Some("t")),
    rowError(withProperty("a\u0001"), propertySchema, Some("t")),
    rowError(withProperty("a", " "), propertySchema, Some("t")),
    rowError(InternalRow(s("x"), s("[1]")),
      new StructType().add("body", StringType).add("properties", StringType),
      Some("t")),
    RocketMQErrors.topicNotFound("t", "h:1"),
    raised(RocketMQSourceOffset.parse("x")),
    raised(RocketMQSourceOffset.parse("[]")),
    raised(RocketMQSourceOffset.parse("{}")),
    raised(RocketMQSourceOffset.parse("""{"version":9}""")),
    raised(RocketMQSourceOffset.parse("""{"version":1}""")),
    raised(RocketMQSourceOffset.parse("""{"version":1,"offsets":{"t":1}}""")),
    raised(RocketMQSourceOffset.parse("""{"version":1,"offsets":{"t":{"b":1}}}""")),
    raised(RocketMQSourceOffset.parse("""{"version":1,"offsets":{"t":{"b":{"x":1}}}}""")),
    raised(RocketMQSourceOffset.parse("""{"version":1,"offsets":{"t":{"b":{"0":[]}}}}""")),
    RocketMQErrors.nameServerUnreachable("h:1", "t", 3, 1000, cause),
    RocketMQErrors.topicListRefused("orders-.*", "h:1", cause),
    RocketMQErrors.endpointUnchecked("h:1", 3, 1000, cause),
    RocketMQErrors.brokerRequestFailed("b", 3, cause, BrokerRequest.TopicStats("t")),
    RocketMQErrors.brokerRequestFailed("b", 3, cause, BrokerRequest.IndexProgress("t")),
    RocketMQErrors.brokerRequestFailed("b", 3, cause, BrokerRequest.SearchOffset(q, 17)),
    RocketMQErrors.brokerRequestFailed("b", 3, cause, BrokerRequest.CommitOffset("g", q, 5)),
    RocketMQErrors.brokerRequestFailed("b", 3, cause, BrokerRequest.QueueOffsets(q)),
    RocketMQErrors.brokerRequestFailed("b", 3, cause, BrokerRequest.GroupOffset("g", q)),
    RocketMQErrors.brokerRequestFailed("b", 3, cause, BrokerRequest.GroupOffsetTable("g", "t")),
    RocketMQErrors.adminNotServed("name server h:1", cause, AdminRequest.ListTopics),
    RocketMQErrors.queueGone(q, 5),
    RocketMQErrors.pullFailed(q, 5, cause, GaveUp.NotRetryable),
    RocketMQErrors.pullFailed(q, 5, cause, GaveUp.BudgetSpent(12, 60100, 60000)),
    RocketMQErrors.pullAnsweredWithoutProgress(q, 5, "NO_MATCHED_MSG", 5, 11),
    RocketMQErrors.sendFailed("t", None, cause, GaveUp.NotRetryable),
    RocketMQErrors.sendFailed("t", Some(("g", 3)), cause, GaveUp.BudgetSpent(12, 60100, 60000)),
    RocketMQErrors.sendFailed("t", None, cause, GaveUp.SendRetriesReached(2)),
    RocketMQErrors.sendFailed("t", None, cause, GaveUp.TooLarge(262144)),
    RocketMQErrors.sendFailed("t", None, cause, GaveUp.ExactlyOnce),
    RocketMQErrors.exactlyOnceNeedsCheckpoint(),
    raised(options("deliveryGuarantee" -> "twice").validateForWrite()),
    raised(options("transactionTimeout" -> "1s").validateForWrite()),
    raised(RocketMQBrokerCheckSettings.defaults("g").requireCheckBacks("transactionTimeout", "10m",
      600000L)),
    raised(RocketMQBrokerCheckSettings.defaults("g").requireCheckBacks("transactionTimeout", "59s",
      59000L)),
    RocketMQErrors.sendFailed("t", None, cause, GaveUp.TopicNotFound("h:1")),
    RocketMQErrors.sendStatusNotOk("t", Some(("g", 1)), "FLUSH_DISK_TIMEOUT"),
    RocketMQErrors.brokerUnavailable("t", Some("b"), "h:1", 60000, cause),
    RocketMQErrors.brokerUnavailable("t", None, "h:1", 60000, null),
    RocketMQErrors.realTimeSlotsShort(Seq("t/b/0", "t/b/1", "t/b/2"), Some("2 tasks of a stage"), 5,
      2, "local[2]"),
    RocketMQErrors.indexingBehind("t", "b", 4096, 60000),
    RocketMQErrors.expectedGroupsMissing("t", RocketMQExpectedGroups.Named(Seq("a", "b")), Set("a"),
      60000),
    RocketMQErrors.brokerUnavailable("t", Some("b"), "h:1", 60000,
      new NoServingBroker("b", "t", Seq("replica r:1 does not know the topic yet"))),
    RocketMQErrors.sendNotAcknowledged(3, 1000),
    RocketMQErrors.transactionUnresolved("t", 12, Seq(3, 1), "2026-11-25T12:00:00Z", 60000),
    raised(RocketMQCatalog.topicSettings("t", Map("queues" -> "abc"))),
    raised(RocketMQCatalog.topicSettings("t", Map("partitions" -> "3"))),
    RocketMQErrors.invalidTableProperty("cluster", "c", "t", "UNKNOWN_CLUSTER",
      "nameServer" -> "h:1",
      "clusters" -> "DefaultCluster"),
    raised(catalog.alterTable(table)),
    raised(catalog.renameTable(table, Identifier.of(Array.empty[String], "u"))),
    raised(catalog.dropTable(table)),
    RocketMQErrors.catalogOperationNotSupported("rmq", "rmq.b", "DROP_ROCKETMQ_TOPIC",
      "topic" -> "b"),
    RocketMQErrors.optionFixedByTable("topic", "u", "rmq.t", "t"),
    RocketMQErrors.invalidPriority(-1, 3),
    RocketMQErrors.invalidLiteTopic("a b", 3),
    RocketMQErrors.liteTopicNotSupported("DELIVERY_TIME", 3),
    RocketMQErrors.liteTopicNotSupported("EXACTLY_ONCE", -1),
    RocketMQErrors.keysRequired("prices", 3),
    RocketMQErrors.sqlFilterOnCompactedTopic(Seq("prices")),
    RocketMQErrors.priorityNotHonoured("SHARDING_KEY", "a sharding key", 3),
    RocketMQErrors.priorityNotHonoured("DELIVERY_TIME", "a delivery time", 3),
    RocketMQErrors.priorityNotHonoured("EXACTLY_ONCE", "a transaction", -1),
    raised(createTable(Array(Column.create("a", IntegerType)), Array.empty[Transform], Map.empty)),
    raised(createTable(Array.empty[Column], Array(Expressions.identity("queueId")), Map.empty)),
    RocketMQErrors.adminRequestFailed("name server h:1", 3, cause, AdminRequest.ListTopics),
    RocketMQErrors.adminRequestFailed("name server h:1", 3, cause, AdminRequest.ClusterBrokers),
    RocketMQErrors.adminRequestFailed("name server h:1", 3, cause, AdminRequest.TopicRoute("t")),
    RocketMQErrors.adminRequestFailed("broker 'b' (h:2)", 3, cause,
      AdminRequest.CreateTopic("t", 8)),
    RocketMQErrors.adminRequestFailed("broker 'b' (h:2)", 3, cause, AdminRequest.DeleteTopic("t")),
    RocketMQErrors.adminRequestFailed("name server h:1", 3, cause, AdminRequest.DeleteRoute("t")),
    RocketMQErrors.unlessAccessDenied(new MQBrokerException(ResponseCode.NO_PERMISSION,
      "check signature failed"),
      Some("ak"), "t")(fail("a denial is an access error"))
  ) ++ Seq(DataLossReason.Expired(7), DataLossReason.BeingRemoved, DataLossReason.ConsumeQueueGone,
    DataLossReason.Truncated(3), DataLossReason.TopicRecreated(3), DataLossReason.OffsetsWentBack,
    DataLossReason.SkippedByBroker).map(RocketMQErrors.dataLoss(q, 1, 5, _))

  /**
   * The condition of one of our errors (through our types: Spark 3.5's SparkThrowable has no
   * getCondition).
   */
  private def condition(e: Throwable): String = e match {
    case e: RocketMQException => e.getCondition
    case e: RocketMQInvalidInputException => e.getCondition
    case e: RocketMQUnsupportedOperationException => e.getCondition
    case other => fail(s"not one of the connector's errors: $other")
  }

  test("every condition is raised once, every placeholder filled, no parameter unused") {
    val all = errors
    val conditions = all.map {
      case e: SparkThrowable => condition(e)
      case other => fail(s"not a SparkThrowable: $other")
    }
    assert(conditions.diff(conditions.distinct).isEmpty, "raised twice")
    assert(conditions.sorted === RocketMQErrors.allConditions,
      "conditions never raised, or unknown")
    for (e <- all) {
      val t = e.asInstanceOf[SparkThrowable]
      val template = RocketMQErrors.template(condition(e))
      val placeholders = "<([a-zA-Z0-9_-]+)>".r.findAllMatchIn(template).map(_.group(1)).toSet
      assert(t.getMessageParameters.keySet.asScala.toSet === placeholders, condition(e))
      assert(e.getMessage.startsWith(s"[${condition(e)}] "), e.getMessage)
      assert(placeholders.forall(p => !e.getMessage.contains(s"<$p>")), e.getMessage)
      assert(t.getSqlState != null && t.getSqlState.length == 5, condition(e))
    }
  }

  test("one exception type per kind of failure") {
    val byType = errors.groupBy(_.getClass.getSimpleName).map { case (k, v) =>
      k -> v.map(condition(_).takeWhile(_ != '.')).distinct.sorted
    }
    assert(byType.keySet === Set("RocketMQInvalidInputException", "RocketMQDataLossException",
      "RocketMQRequestException", "RocketMQUnsupportedOperationException"))
    assert(byType("RocketMQDataLossException") === Seq("ROCKETMQ_DATA_LOSS",
      "ROCKETMQ_DATA_LOSS_QUEUE_GONE"))
    assert(byType("RocketMQRequestException") === Seq("ROCKETMQ_ACCESS_DENIED",
      "ROCKETMQ_ADMIN_NOT_SERVED",
      "ROCKETMQ_ADMIN_REQUEST_FAILED",
      "ROCKETMQ_BROKER_REQUEST_FAILED", "ROCKETMQ_BROKER_UNAVAILABLE",
      "ROCKETMQ_ENDPOINT_UNCHECKED", "ROCKETMQ_NAME_SERVER_UNREACHABLE",
      "ROCKETMQ_PULL_FAILED", "ROCKETMQ_SEND_FAILED", "ROCKETMQ_SEND_NOT_ACKNOWLEDGED",
      "ROCKETMQ_TRANSACTION_UNRESOLVED"))
    assert(byType("RocketMQUnsupportedOperationException") ===
      Seq("ROCKETMQ_CATALOG_OPERATION_NOT_SUPPORTED"))
    assert(errors.filter(_.isInstanceOf[RocketMQUnsupportedOperationException])
      .forall(_.isInstanceOf[UnsupportedOperationException]))
    assert(
      errors.filter(_.isInstanceOf[RocketMQInvalidInputException]).forall(
        _.isInstanceOf[IllegalArgumentException]))
  }

  test("a request error carries its cause and the cause's text") {
    val e =
      RocketMQErrors.pullFailed(q, 5, new RuntimeException("outer", cause), GaveUp.NotRetryable)
    assert(e.getCause.getCause eq cause)
    assert(e.getMessage.endsWith("outer <- caused by: the broker said no"), e.getMessage)
    assert(new String(e.getMessage.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8) ===
      e.getMessage)
  }
}
