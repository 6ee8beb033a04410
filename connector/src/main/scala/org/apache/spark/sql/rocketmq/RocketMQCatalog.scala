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

import java.util
import java.util.Locale

import scala.jdk.CollectionConverters._
import scala.util.Try

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.analysis.{
  NoSuchNamespaceException, NoSuchTableException, TableAlreadyExistsException
}
import org.apache.spark.sql.connector.catalog.{Column, Identifier, Table, TableCatalog, TableChange}
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.rocketmq.client.RocketMQOffsetReader
import org.apache.spark.sql.rocketmq.errors.RocketMQErrors
import org.apache.spark.sql.rocketmq.options.{
  RocketMQOptionKeys, RocketMQOptionKind, RocketMQOptions
}
import org.apache.spark.sql.types.{DataType, StructType}
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/**
 * The topics of one RocketMQ cluster as a Spark catalog. Set `spark.sql.catalog.<name>` to this
 * class and `spark.sql.catalog.<name>.nameServer`; every other option of the source set as
 * `spark.sql.catalog.<name>.<option>` (credentials, `namespace`, `useTLS`, timeouts, read and write
 * defaults) applies to all the catalog's tables.
 *
 * Each topic is the table `<name>.<topic>`, in the catalog's one namespace (the empty one), with
 * the source's columns: read by SELECT and `readStream.table`, written by INSERT INTO (columns
 * taken by name, as by the sink: `body`, and optionally `tags`, `keys`, `properties` …) and
 * `writeStream.toTable`. A query's own options (reader and writer options) go on top of the
 * catalog's, but never change the topic or the columns.
 *
 * The catalog acts on the cluster: CREATE TABLE creates the topic (see
 * [[RocketMQCatalog.topicSettings]]), DROP TABLE deletes it and its messages, only where option
 * `allowDropTable` is true; a topic's columns cannot be changed, nor a topic renamed. RocketMQ's
 * own topics (system topics, the topics brokers register under their broker-group and cluster
 * names, retry and dead-letter topics) are neither listed nor dropped. With option `namespace` the
 * catalog holds that namespace's topics only, by their plain names. Credentials never show in its
 * description, its tables' or its errors.
 */
class RocketMQCatalog extends TableCatalog {
  import RocketMQCatalog._

  private var catalogName: String = _

  /** The catalog's options as Spark gave them (their keys' case kept; every lookup folds it). */
  private var catalogOptions: Map[String, String] = Map.empty

  /** Where the catalog's name server is, for its description. */
  private var nameServer: String = _

  /**
   * Checks the options (their keys, the name server, credentials, `allowDropTable`) without asking
   * RocketMQ anything.
   */
  override def initialize(name: String, options: CaseInsensitiveStringMap): Unit = {
    catalogName = name
    catalogOptions = options.asCaseSensitiveMap().asScala.toMap
    RocketMQOptionKeys.check(catalogOptions)
    val checked = rootOptions
    checked(RocketMQOptions.AllowDropTable)
    nameServer = checked.connection.nameServer
    // A restarted exactly-once stream into one of its tables answers the broker from its start.
    SparkSession.getActiveSession.foreach(RocketMQSinkRun.listen)
  }

  override def name(): String = catalogName

  override def toString: String = s"RocketMQCatalog($catalogName, nameServer=$nameServer)"

  private def rootOptions: RocketMQOptions = new RocketMQOptions(catalogOptions)

  /** The options of `topic`'s table: the catalog's, and the topic. */
  private def tableOptions(topic: String): RocketMQOptions =
    new RocketMQOptions(catalogOptions.filter { case (k, _) =>
      !k.equalsIgnoreCase(RocketMQOptions.Topic.key)
    } +
      (RocketMQOptions.Topic.key -> topic))

  /** `ident` as queries name it, with the catalog's name. */
  private def qualified(ident: Identifier): String = s"$catalogName." +
    (ident.namespace :+ ident.name).mkString(".")

  /**
   * The topic a table identifier names: its name, when that is a topic name in the catalog's one
   * namespace.
   */
  private def topicOf(ident: Identifier): Option[String] =
    if (ident.namespace.nonEmpty) None
    else Try(RocketMQOptionKind.checkTopicName(RocketMQOptions.Topic.key, ident.name,
      ident.name)).toOption

  private def withAdmin[T](body: RocketMQTopicAdmin => T): T = {
    val admin = new RocketMQTopicAdmin(rootOptions)
    try body(admin)
    finally admin.close()
  }

  override def listTables(namespace: Array[String]): Array[Identifier] = {
    if (namespace.nonEmpty) throw new NoSuchNamespaceException(namespace)
    withAdmin(_.listTopics()).map(topic => Identifier.of(Array.empty[String], topic)).toArray
  }

  /** The topic's table; [[NoSuchTableException]] when the name server has no route for it. */
  override def loadTable(ident: Identifier): Table = {
    val topic = topicOf(ident).getOrElse(throw new NoSuchTableException(ident))
    val options = tableOptions(topic)
    try RocketMQOffsetReader.requireTopic(options, topic)
    catch {
      case e: RocketMQInvalidInputException if e.getCondition == TopicNotFoundCondition =>
        throw new NoSuchTableException(ident)
    }
    new RocketMQCatalogTable(qualified(ident), topic, options)
  }

  /** Called by Spark 4 (through `createTable(ident, TableInfo)`) and Spark 3.5's CREATE TABLE. */
  override def createTable(
      ident: Identifier,
      columns: Array[Column],
      partitions: Array[Transform],
      properties: util.Map[String, String]): Table =
    create(ident, columns.map(c => c.name -> c.dataType).toSeq, partitions, properties)

  /** Abstract in Spark 3.5, deprecated in Spark 4: the same as the column form. */
  override def createTable(
      ident: Identifier,
      schema: StructType,
      partitions: Array[Transform],
      properties: util.Map[String, String]): Table =
    create(ident, schema.fields.map(f => f.name -> f.dataType).toSeq, partitions, properties)

  /**
   * Creates the topic of `ident` once everything asked is checked: no partitioning, no columns but
   * the source's (most often none are given), properties as [[RocketMQCatalog.topicSettings]] reads
   * them, and no topic of that name yet ([[TableAlreadyExistsException]]).
   */
  private def create(
      ident: Identifier,
      columns: Seq[(String, DataType)],
      partitions: Array[Transform],
      properties: util.Map[String, String]): Table = {
    if (ident.namespace.nonEmpty) throw new NoSuchNamespaceException(ident.namespace)
    val topic = RocketMQOptionKind.checkTopicName(RocketMQOptions.Topic.key, ident.name, ident.name)
    val table = qualified(ident)
    if (partitions.nonEmpty) {
      throw RocketMQErrors.catalogOperationNotSupported(catalogName, table, "PARTITIONING",
        "partitioning" -> partitions.map(_.describe).mkString(", "))
    }
    if (columns.nonEmpty && !SourceColumns.contains(shape(columns))) {
      throw RocketMQErrors.catalogOperationNotSupported(catalogName, table, "COLUMNS",
        "columns" -> columns.map { case (n, t) => s"$n ${t.sql}" }.mkString(", "),
        "expected" -> RocketMQSourceSchema(rootOptions(RocketMQOptions.IncludeExtraColumns)).toDDL)
    }
    val settings =
      topicSettings(topic, Option(properties).map(_.asScala.toMap).getOrElse(Map.empty))
    withAdmin { admin =>
      if (admin.route(topic).isDefined) throw new TableAlreadyExistsException(ident)
      admin.createTopic(topic, settings.queues, settings.cluster)
    }
    loadTable(ident)
  }

  override def alterTable(ident: Identifier, changes: TableChange*): Table =
    throw RocketMQErrors.catalogOperationNotSupported(catalogName, qualified(ident), "ALTER_TABLE")

  /**
   * Deletes the topic and its messages, where option `allowDropTable` is true; false when there is
   * no such topic. Not allowed, it fails saying how to allow it, whether the topic exists or not.
   * RocketMQ's own topics are never deleted: a topic that exists but that [[listTables]] leaves out
   * is refused, naming it (the check is the listing itself, so SHOW TABLES and DROP TABLE cannot
   * disagree on which topics are the users').
   */
  override def dropTable(ident: Identifier): Boolean = {
    if (!rootOptions(RocketMQOptions.AllowDropTable)) {
      throw RocketMQErrors.catalogOperationNotSupported(catalogName, qualified(ident), "DROP_TABLE")
    }
    topicOf(ident).exists { topic =>
      withAdmin { admin =>
        if (admin.listTopics().contains(topic)) admin.deleteTopic(topic)
        else if (admin.route(topic).isEmpty) false
        else {
          throw RocketMQErrors.catalogOperationNotSupported(catalogName, qualified(ident),
            "DROP_ROCKETMQ_TOPIC",
            "topic" -> topic)
        }
      }
    }
  }

  override def renameTable(oldIdent: Identifier, newIdent: Identifier): Unit =
    throw RocketMQErrors.catalogOperationNotSupported(catalogName, qualified(oldIdent),
      "RENAME_TABLE")
}

private[rocketmq] object RocketMQCatalog {

  /** Table property: read and write queues of a new topic on each broker group. */
  val QueuesProperty = "queues"

  /** Table property: the cluster whose broker groups get a new topic. */
  val ClusterProperty = "cluster"

  val DefaultQueues = 8

  /**
   * A bound against typos; RocketMQ itself sets none (every queue is a directory of files on each
   * broker).
   */
  val MaxQueues = 1024

  private val TopicNotFoundCondition = "ROCKETMQ_TOPIC_NOT_FOUND"

  /**
   * Properties Spark sets, or reserves, on every table it creates (CREATE TABLE adds `owner`;
   * `provider`, `comment`, `location` … come from their clauses): a topic keeps none of them, and
   * none is an error.
   */
  private val SparkReserved =
    Set("provider", "owner", "comment", "location", "external", "is_managed_location", "collation",
      "table_type")

  /** What CREATE TABLE asks of a new topic. */
  final case class TopicSettings(queues: Int, cluster: Option[String])

  /**
   * The settings of new topic `topic` from CREATE TABLE's properties (keys case-insensitive,
   * OPTIONS given as `option.<key>` too): `queues` (default [[DefaultQueues]], at most
   * [[MaxQueues]]) and `cluster` (default: every broker group the name server knows). A bad value
   * or an unknown property is an error naming it, the value and what is allowed.
   */
  def topicSettings(topic: String, properties: Map[String, String]): TopicSettings = {
    def key(property: String): String =
      property.stripPrefix(TableCatalog.OPTION_PREFIX).toLowerCase(Locale.ROOT)
    val asked = properties.toSeq.sortBy(_._1).map { case (k, v) => (k, Option(v).getOrElse("")) }
    asked.find { case (k, _) =>
      !Set(QueuesProperty, ClusterProperty).contains(key(k)) && !SparkReserved(key(k))
    }
      .foreach { case (k, v) =>
        throw RocketMQErrors.invalidTableProperty(k, v, topic, "UNKNOWN_PROPERTY")
      }
    def valueOf(property: String): Option[(String, String)] = asked.find { case (k, _) =>
      key(k) == property
    }
    val queues = valueOf(QueuesProperty).fold(DefaultQueues) { case (k, v) =>
      RocketMQOptionKind.parseInt(v.trim).filter(q => q >= 1 && q <= MaxQueues).getOrElse(
        throw RocketMQErrors.invalidTableProperty(k, v, topic, "QUEUES",
          "max" -> MaxQueues.toString))
    }
    TopicSettings(queues, valueOf(ClusterProperty).map(_._2.trim).filter(_.nonEmpty))
  }

  /** Columns as compared: names without case, types as SQL writes them (nullability aside). */
  private def shape(columns: Seq[(String, DataType)]): Seq[(String, String)] =
    columns.map { case (n, t) => n.toLowerCase(Locale.ROOT) -> t.sql }

  /**
   * The columns a new table may be declared with: the source's, with or without the extra columns.
   */
  private val SourceColumns: Seq[Seq[(String, String)]] =
    Seq(false, true).map(extra =>
      shape(RocketMQSourceSchema(extra).fields.map(f => f.name -> f.dataType).toSeq))
}
