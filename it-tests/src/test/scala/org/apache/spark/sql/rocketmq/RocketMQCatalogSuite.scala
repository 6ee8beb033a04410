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
import java.util.UUID
import java.util.concurrent.atomic.AtomicInteger

import scala.jdk.CollectionConverters._

import org.apache.rocketmq.common.message.MessageConst
import org.apache.rocketmq.common.topic.TopicValidator

import org.apache.spark.sql.catalyst.analysis.{
  NoSuchNamespaceException, NoSuchTableException, TableAlreadyExistsException
}
import org.apache.spark.sql.connector.catalog.{Column, Identifier}
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.rocketmq.common.RocketMQQueue
import org.apache.spark.sql.streaming.Trigger
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/**
 * The RocketMQ catalog through Spark SQL: a cluster's topics listed, read, written, created and
 * dropped as tables.
 */
class RocketMQCatalogSuite extends RocketMQSparkSuiteBase {

  private val registered = new AtomicInteger()

  /**
   * A catalog of the embedded cluster with `options`, under a name not used before: a session keeps
   * the catalog it made for a name, whatever the configuration says later.
   */
  private def newCatalog(options: (String, String)*): String = {
    val name = s"rmq${registered.incrementAndGet()}"
    spark.conf.set(s"spark.sql.catalog.$name", classOf[RocketMQCatalog].getName)
    (("nameServer" -> rocketmq.nameServer) +: options).foreach { case (k, v) =>
      spark.conf.set(s"spark.sql.catalog.$name.$k", v)
    }
    name
  }

  private def tables(catalog: String): Set[String] =
    spark.sql(s"SHOW TABLES IN $catalog").collect().map(_.getAs[String]("tableName")).toSet

  private def storedBodies(topic: String): Seq[String] =
    rocketmq.readAll(topic).map(m => new String(m.getBody, StandardCharsets.UTF_8))

  private def selectBodies(table: String): Seq[String] =
    spark.sql(s"SELECT CAST(body AS STRING) FROM $table").collect().map(_.getString(0)).toSeq

  private def identifier(name: String): Identifier = Identifier.of(Array.empty[String], name)

  test("SHOW TABLES lists the topics users made, none of RocketMQ's own") {
    val topic = rocketmq.newTopic("listed")
    rocketmq.createTopic(topic, queues = 2)
    val listed = tables(newCatalog())
    assert(listed.contains(topic), listed)
    val own = Set(rocketmq.brokerName, rocketmq.clusterName, s"${rocketmq.clusterName}_REPLY_TOPIC",
      "TBW102",
      "SELF_TEST_TOPIC", "OFFSET_MOVED_EVENT", "SCHEDULE_TOPIC_XXXX", "BenchmarkTest",
      "RMQ_SYS_TRANS_HALF_TOPIC")
    assert(listed.intersect(own).isEmpty, listed)
    assert(!listed.exists(t =>
        t.startsWith("%RETRY%") || t.startsWith("%DLQ%") || t.startsWith("rmq_sys_")), listed)
  }

  test("with a namespace, the catalog holds that namespace's topics, by their plain names") {
    val topic = rocketmq.newTopic("tenant")
    rocketmq.createTopic(s"tenant-c%$topic", queues = 1)
    rocketmq.sendBodies(s"tenant-c%$topic", Seq("a", "b"))
    val catalog = newCatalog("namespace" -> "tenant-c")
    val listed = tables(catalog)
    assert(listed.contains(topic) && !listed.exists(_.contains("%")), listed)
    assert(selectBodies(s"$catalog.`$topic`").sorted === Seq("a", "b"))
    assert(spark.sql(s"SELECT DISTINCT topic FROM $catalog.`$topic`").collect().map(
      _.getString(0)) === Array(topic))
  }

  test("SELECT reads a topic: its messages counted, and whole") {
    val topic = rocketmq.newTopic("select")
    rocketmq.createTopic(topic, queues = 3)
    val sent = (0 until 30).map(i => s"m$i")
    rocketmq.sendBodies(topic, sent)
    val catalog = newCatalog()
    assert(spark.sql(s"SELECT count(*) FROM $catalog.`$topic`").head().getLong(0) === 30)
    assert(selectBodies(s"$catalog.`$topic`").sorted === sent.sorted)
    val queues =
      spark.sql(s"SELECT DISTINCT topic, brokerName, queueId FROM $catalog.`$topic`").collect()
        .map(r => (r.getString(0), r.getString(1), r.getInt(2))).toSet
    assert(queues === (0 until 3).map(q => (topic, rocketmq.brokerName, q)).toSet)
    // A catalog option applies to every table: here, the columns.
    val extra = newCatalog("includeExtraColumns" -> "true")
    assert(spark.table(s"$extra.`$topic`").columns.toSeq.takeRight(3) === Seq("tags", "keys",
      "msgId"))
  }

  test(
    "INSERT INTO sends rows as messages, columns taken by name; they read back; OVERWRITE is " +
      "refused") {
    val topic = rocketmq.newTopic("insert")
    rocketmq.createTopic(topic, queues = 2)
    val catalog = newCatalog()
    val table = s"$catalog.`$topic`"
    spark.sql(
      s"INSERT INTO $table SELECT 'inserted' AS tags, concat('row-', CAST(id AS STRING)) AS body " +
        "FROM range(25)")
    val expected = (0 until 25).map(i => s"row-$i")
    assert(storedBodies(topic).sorted === expected.sorted)
    assert(rocketmq.readAll(topic).forall(_.getTags == "inserted"))
    assert(selectBodies(table).sorted === expected.sorted)

    val noBody = errorMessage(spark.sql(s"INSERT INTO $table SELECT 'x' AS value"))
    assert(noBody.contains("ROCKETMQ_MISSING_COLUMN.BODY"), noBody)
    intercept[Exception](spark.sql(s"INSERT OVERWRITE $table SELECT 'x' AS body"))
    assert(storedBodies(topic).size === 25)
  }

  test(
    "INSERT INTO ... SELECT * copies a table: bodies, tags, keys and user properties arrive " +
      "unchanged") {
    val sent = Seq(
      TestMessage("plain"),
      TestMessage("tagged", tags = "tag-a", keys = "k1 k2",
        properties = Map("region" -> "eu", "q\"uote" -> "a\nb")),
      TestMessage("unicode", tags = "tag-b", keys = "k3",
        properties = Map("naïve" -> "日本 \uD83D\uDE80")))
    def copied(topic: String): Seq[(String, String, String, Map[String, String])] =
      rocketmq.readAll(topic).map { m =>
        val user = m.getProperties.asScala.toMap.filter { case (k, _) =>
          !MessageConst.STRING_HASH_SET.contains(k)
        }
        (new String(m.getBody, StandardCharsets.UTF_8), m.getTags, m.getKeys, user)
      }.sortBy(_._1)
    val expected = sent.map(m => (m.body, m.tags, m.keys, m.properties)).sortBy(_._1)
    // Tags and keys travel in the properties text of a plain table, and in their own columns with
    // the extra ones.
    for (catalog <- Seq(newCatalog(), newCatalog("includeExtraColumns" -> "true"))) {
      val (from, to) = (rocketmq.newTopic("copy-from"), rocketmq.newTopic("copy-to"))
      rocketmq.createTopic(from, queues = 2)
      rocketmq.createTopic(to, queues = 2)
      rocketmq.sendMessages(from, sent)
      spark.sql(s"INSERT INTO $catalog.`$to` SELECT * FROM $catalog.`$from`")
      assert(copied(to) === expected, catalog)
      assert(copied(from) === expected, catalog)
    }
  }

  test("a query cannot point a catalog table's write at another topic, in batch or streaming") {
    val (in, table, other) =
      (rocketmq.newTopic("fixed-in"), rocketmq.newTopic("fixed"), rocketmq.newTopic("other"))
    Seq(in, table, other).foreach(rocketmq.createTopic(_, queues = 1))
    rocketmq.sendBodies(in, Seq("a", "b"))
    val catalog = newCatalog()
    def refusedFor(message: String): Unit =
      assert(message.contains("ROCKETMQ_OPTION_NOT_ALLOWED.CATALOG_TABLE") &&
          message.contains(s"'$other'") &&
          message.contains(s"'$table'"), message)

    refusedFor(
      errorMessage(spark.table(s"$catalog.`$in`").select("body").writeTo(s"$catalog.`$table`")
        .option("topic", other).append()))
    val checkpoint = Files.createTempDirectory("rocketmq-catalog-fixed-").toString
    refusedFor(errorMessage {
      val query = spark.readStream.option("startingOffsets", "earliest").table(
        s"$catalog.`$in`").select("body")
        .writeStream.option("checkpointLocation", checkpoint).option("topic", other).trigger(
          Trigger.AvailableNow())
        .toTable(s"$catalog.`$table`")
      try query.awaitTermination(120000)
      finally query.stop()
    })
    assert(storedBodies(other).isEmpty && storedBodies(table).isEmpty)
  }

  test(
    "DESCRIBE TABLE EXTENDED shows the queues of each broker group and the message count, never " +
      "a secret") {
    val topic = rocketmq.newTopic("describe")
    rocketmq.createTopic(topic, queues = 4)
    rocketmq.sendBodies(topic, (0 until 10).map(i => s"d$i"))
    val secret = s"catalog-secret-${UUID.randomUUID()}"
    val catalog = newCatalog("accessKey" -> "catalog-reader", "secretKey" -> secret)
    val text =
      spark.sql(s"DESCRIBE TABLE EXTENDED $catalog.`$topic`").collect().map(_.toSeq.mkString(" | "))
        .mkString("\n")
    assert(text.contains("queues.broker-a=4") && text.contains("messageCount=10"), text)
    assert(text.contains("body | binary"), text)
    assert(!text.contains(secret), text)
    val missing = errorMessage(spark.sql(s"SELECT * FROM $catalog.`${topic}-missing`").collect())
    assert(missing.contains("TABLE_OR_VIEW_NOT_FOUND") && !missing.contains(secret), missing)
  }

  test(
    "CREATE TABLE creates the topic with the queues and on the cluster asked; an existing one is " +
      "refused") {
    val catalog = newCatalog()
    val topic = rocketmq.newTopic("created")
    spark.sql(
      s"CREATE TABLE $catalog.`$topic` TBLPROPERTIES ('queues'='3', " +
        s"'cluster'='${rocketmq.clusterName}')")
    assert(rocketmq.latestOffsets(topic).keySet === (0 until 3).map(RocketMQQueue(topic,
      rocketmq.brokerName, _)).toSet)
    assert(tables(catalog).contains(topic))
    spark.sql(s"INSERT INTO $catalog.`$topic` SELECT 'first' AS body")
    assert(storedBodies(topic) === Seq("first"))

    intercept[TableAlreadyExistsException](spark.sql(s"CREATE TABLE $catalog.`$topic`"))
    spark.sql(s"CREATE TABLE IF NOT EXISTS $catalog.`$topic` TBLPROPERTIES ('queues'='5')")
    assert(rocketmq.latestOffsets(topic).size === 3, "an existing topic is left as it is")

    val defaulted = rocketmq.newTopic("created")
    spark.sql(s"CREATE TABLE $catalog.`$defaulted`")
    assert(rocketmq.latestOffsets(defaulted).size === RocketMQCatalog.DefaultQueues)
  }

  test(
    "CREATE TABLE refuses bad properties, columns and partitioning, naming them, and creates " +
      "nothing") {
    val catalog = newCatalog()
    val topic = rocketmq.newTopic("refused")
    def refusal(ddl: String): String =
      errorMessage(spark.sql(s"CREATE TABLE $catalog.`$topic` $ddl"))

    val queues = refusal("TBLPROPERTIES ('queues'='abc')")
    assert(
      queues.contains("ROCKETMQ_INVALID_TABLE_PROPERTY.QUEUES") && queues.contains("'queues'") &&
        queues.contains("'abc'") && queues.contains("positive integer"), queues)
    val tooMany = refusal("TBLPROPERTIES ('queues'='100000')")
    assert(tooMany.contains("ROCKETMQ_INVALID_TABLE_PROPERTY.QUEUES") &&
        tooMany.contains("at most 1024"), tooMany)
    val unknown = refusal("TBLPROPERTIES ('partitions'='3')")
    assert(unknown.contains("ROCKETMQ_INVALID_TABLE_PROPERTY.UNKNOWN_PROPERTY") &&
        unknown.contains("'partitions'"),
      unknown)
    val cluster = refusal("TBLPROPERTIES ('cluster'='no-such-cluster')")
    assert(cluster.contains("ROCKETMQ_INVALID_TABLE_PROPERTY.UNKNOWN_CLUSTER") &&
        cluster.contains(rocketmq.clusterName), cluster)
    val columns = refusal("(a INT)")
    assert(columns.contains("ROCKETMQ_CATALOG_OPERATION_NOT_SUPPORTED.COLUMNS") &&
        columns.contains("a INT"), columns)
    val partitioned = refusal("(topic STRING) PARTITIONED BY (topic)")
    assert(partitioned.contains("ROCKETMQ_CATALOG_OPERATION_NOT_SUPPORTED.PARTITIONING"),
      partitioned)
    assert(!tables(catalog).contains(topic))

    // The source's columns, written out, are its columns.
    spark.sql(s"CREATE TABLE $catalog.`$topic` (${RocketMQSourceSchema.schema.toDDL})")
    assert(tables(catalog).contains(topic))
  }

  test(
    "DROP TABLE deletes the topic only where the catalog allows it; ALTER and RENAME are refused") {
    val topic = rocketmq.newTopic("dropped")
    rocketmq.createTopic(topic, queues = 2)
    rocketmq.sendBodies(topic, Seq("kept"))
    val guarded = newCatalog()
    val refused = errorMessage(spark.sql(s"DROP TABLE $guarded.`$topic`"))
    assert(refused.contains("ROCKETMQ_CATALOG_OPERATION_NOT_SUPPORTED.DROP_TABLE") &&
        refused.contains(s"spark.sql.catalog.$guarded.allowDropTable=true"), refused)
    assert(storedBodies(topic) === Seq("kept"))
    val altered =
      errorMessage(spark.sql(s"ALTER TABLE $guarded.`$topic` SET TBLPROPERTIES ('queues'='4')"))
    assert(altered.contains("ROCKETMQ_CATALOG_OPERATION_NOT_SUPPORTED.ALTER_TABLE"), altered)
    val renamed =
      errorMessage(spark.sql(s"ALTER TABLE $guarded.`$topic` RENAME TO $guarded.`$topic-new`"))
    assert(renamed.contains("ROCKETMQ_CATALOG_OPERATION_NOT_SUPPORTED.RENAME_TABLE"), renamed)

    val dropping = newCatalog("allowDropTable" -> "true")
    spark.sql(s"DROP TABLE $dropping.`$topic`")
    assert(!tables(dropping).contains(topic))
    assert(rocketmq.brokerController.getTopicConfigManager.selectTopicConfig(topic) == null)
    val gone = errorMessage(spark.sql(s"SELECT * FROM $dropping.`$topic`").collect())
    assert(gone.contains("TABLE_OR_VIEW_NOT_FOUND"), gone)
    spark.sql(s"DROP TABLE IF EXISTS $dropping.`$topic`")
  }

  test("DROP TABLE refuses RocketMQ's own topics, which SHOW TABLES hides, and leaves them") {
    val group = rocketmq.newTopic("group")
    val (retry, deadLetter) = (s"%RETRY%$group", s"%DLQ%$group")
    rocketmq.createTopic(retry, queues = 1)
    rocketmq.createTopic(deadLetter, queues = 1)
    val own = Seq(retry, deadLetter, rocketmq.brokerName, rocketmq.clusterName,
      TopicValidator.RMQ_SYS_SELF_TEST_TOPIC)
    val catalog = newCatalog("allowDropTable" -> "true")
    for (topic <- own) {
      val refused = errorMessage(spark.sql(s"DROP TABLE $catalog.`$topic`"))
      assert(refused.contains("ROCKETMQ_CATALOG_OPERATION_NOT_SUPPORTED.DROP_ROCKETMQ_TOPIC") &&
          refused.contains(s"'$topic'"), refused)
      assert(rocketmq.brokerController.getTopicConfigManager.selectTopicConfig(topic) != null,
        topic)
    }
  }

  test("readStream.table and writeStream.toTable copy a topic (Trigger.AvailableNow)") {
    val (in, out) = (rocketmq.newTopic("stream-in"), rocketmq.newTopic("stream-out"))
    rocketmq.createTopic(in, queues = 2)
    rocketmq.createTopic(out, queues = 2)
    val sent = (0 until 40).map(i => s"s$i")
    rocketmq.sendBodies(in, sent)
    val catalog = newCatalog()
    val checkpoint = Files.createTempDirectory("rocketmq-catalog-stream-").toString
    // The query's own option (where a new stream starts) goes on top of the catalog's.
    val query = spark.readStream.option("startingOffsets", "earliest").table(s"$catalog.`$in`")
      .selectExpr("body", "'copied' AS tags")
      .writeStream.option("checkpointLocation", checkpoint).trigger(Trigger.AvailableNow())
      .toTable(s"$catalog.`$out`")
    try assert(query.awaitTermination(120000), "the stream did not finish")
    finally query.stop()
    assert(query.exception.isEmpty, query.exception)
    assert(storedBodies(out).sorted === sent.sorted)
    assert(rocketmq.readAll(out).forall(_.getTags == "copied"))
  }

  test(
    "the catalog API: a missing topic is NoSuchTableException, only the empty namespace, no " +
      "secret shown") {
    val catalog = new RocketMQCatalog()
    catalog.initialize("direct",
      new CaseInsensitiveStringMap(Map("nameServer" -> rocketmq.nameServer,
        "accessKey" -> "direct-reader", "secretKey" -> "direct-secret").asJava))
    assert(catalog.name() === "direct")
    assert(!catalog.toString.contains("direct-secret"), catalog.toString)

    val missing = identifier(rocketmq.newTopic("missing"))
    intercept[NoSuchTableException](catalog.loadTable(missing))
    assert(!catalog.tableExists(missing))
    intercept[NoSuchTableException](catalog.loadTable(Identifier.of(Array("db"), "orders")))
    intercept[NoSuchNamespaceException](catalog.listTables(Array("db")))

    val topic = rocketmq.newTopic("direct")
    rocketmq.createTopic(topic, queues = 1)
    val table = catalog.loadTable(identifier(topic))
    assert(table.name() === s"direct.$topic")
    assert(table.schema() === RocketMQSourceSchema.schema)
    assert(!table.properties().asScala.exists(_._2.contains("direct-secret")))
    intercept[TableAlreadyExistsException](catalog.createTable(identifier(topic),
      Array.empty[Column],
      Array.empty[Transform], new java.util.HashMap[String, String]()))
    intercept[UnsupportedOperationException](catalog.alterTable(identifier(topic)))
    intercept[UnsupportedOperationException](catalog.renameTable(identifier(topic),
      identifier(s"$topic-new")))
    intercept[UnsupportedOperationException](catalog.dropTable(identifier(topic)))
    assert(catalog.listTables(Array.empty[String]).contains(identifier(topic)))
  }
}
