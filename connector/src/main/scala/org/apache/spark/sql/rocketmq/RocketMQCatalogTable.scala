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

import org.apache.spark.sql.connector.catalog.{TableCapability, TableCatalog}
import org.apache.spark.sql.connector.read.ScanBuilder
import org.apache.spark.sql.connector.write.{LogicalWriteInfo, WriteBuilder}
import org.apache.spark.sql.rocketmq.client.RocketMQOffsetReader
import org.apache.spark.sql.rocketmq.errors.RocketMQErrors
import org.apache.spark.sql.rocketmq.options.RocketMQOptions
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/**
 * One topic of a [[RocketMQCatalog]] as a table: the source's table ([[RocketMQTable]], the same
 * columns, reads and streaming writes) that also takes batch writes, so that INSERT INTO works (the
 * source's own table leaves them to `DataFrameWriter.save()`, see [[RocketMQSourceProvider]]). Any
 * schema may be written, as to the sink: the columns are taken by name when the write is planned.
 *
 * `tableOptions` are the catalog's options with the topic. A query's own options (reader and writer
 * options) go on top, except the two the table fixes: the topic (a write naming another one fails),
 * and `includeExtraColumns` (its columns). Its properties, for DESCRIBE TABLE EXTENDED, are asked
 * of the brokers when first shown: the readable queues of each broker group (`queues.<group>`) and
 * the messages they hold (`messageCount`, the sum of max - min offset over the queues).
 */
private[rocketmq] class RocketMQCatalogTable(qualifiedName: String, topic: String,
    tableOptions: RocketMQOptions)
  extends RocketMQTable(tableOptions) {

  override def name(): String = qualifiedName

  override def capabilities(): util.Set[TableCapability] = {
    val capabilities = util.EnumSet.copyOf(super.capabilities())
    capabilities.add(TableCapability.BATCH_WRITE)
    capabilities
  }

  /** The source table's scan, built as the source builds it, with this query's options. */
  override def newScanBuilder(scanOptions: CaseInsensitiveStringMap): ScanBuilder =
    new RocketMQTable(withQueryOptions(scanOptions)).newScanBuilder(scanOptions)

  /**
   * A write of either kind: the source table's builder (which also keeps the query for the sink's
   * metrics) for a stream, and a batch write planned like `DataFrameWriter.save()`'s (see
   * [[RocketMQCatalogWriteBuilder]]).
   */
  override def newWriteBuilder(info: LogicalWriteInfo): WriteBuilder = {
    refuseOtherTopic(info.options())
    new RocketMQCatalogWriteBuilder(super.newWriteBuilder(info), withQueryOptions(info.options()),
      info)
  }

  /**
   * The options of a restarted stream into this table, from the writer's options its earlier run
   * recorded (see [[RocketMQSinkRun]]), as its writes take them.
   */
  def resumedOptions(writerOptions: Map[String, String]): RocketMQOptions = {
    val query = new CaseInsensitiveStringMap(writerOptions.asJava)
    refuseOtherTopic(query)
    withQueryOptions(query)
  }

  /**
   * A write's `topic` option naming another topic is refused, for a batch write and a stream alike
   * (this is where both are built): otherwise the stream's builder, which takes the query's options
   * as they are, would send this table's rows to that topic.
   */
  private def refuseOtherTopic(query: CaseInsensitiveStringMap): Unit =
    Option(query.get(RocketMQOptions.Topic.key)).filter(_ != topic).foreach { other =>
      throw RocketMQErrors.optionFixedByTable(RocketMQOptions.Topic.key, other, qualifiedName,
        topic)
    }

  override def properties(): util.Map[String, String] = described

  private lazy val described: util.Map[String, String] = {
    val reader = new RocketMQOffsetReader(tableOptions)
    val ranges = try reader.fetchQueueRanges(Seq(topic))
    finally reader.close()
    val queues = ranges.keys.groupBy(_.brokerName).toSeq.sortBy(_._1).map { case (group, inGroup) =>
      s"${RocketMQCatalogTable.QueuesPrefix}$group" -> inGroup.size.toString
    }
    val messages = ranges.values.map(range => range.max - range.min).sum
    (Seq(TableCatalog.PROP_PROVIDER -> "rocketmq",
      RocketMQCatalogTable.MessageCount -> messages.toString) ++ queues)
      .toMap.asJava
  }

  /**
   * The table's options with a query's on top (keys matched without case), but for the ones the
   * table fixes.
   */
  private def withQueryOptions(query: CaseInsensitiveStringMap): RocketMQOptions = {
    val fixed = RocketMQCatalogTable.FixedOptions
    val given = query.asCaseSensitiveMap().asScala.toMap.filter { case (k, _) =>
      !fixed(k.toLowerCase(Locale.ROOT))
    }
    val overridden = given.keySet.map(_.toLowerCase(Locale.ROOT))
    new RocketMQOptions(tableOptions.all.filter { case (k, _) =>
      !overridden(k.toLowerCase(Locale.ROOT))
    } ++ given)
  }
}

private[rocketmq] object RocketMQCatalogTable {

  /** Table property: the readable queues of one broker group, `queues.<group>`. */
  val QueuesPrefix = "queues."

  /** Table property: the messages the topic holds now. */
  val MessageCount = "messageCount"

  /** Options a query cannot change on a catalog table (lower case): its topic, and its columns. */
  private val FixedOptions: Set[String] =
    Set(RocketMQOptions.Topic.key, RocketMQOptions.IncludeExtraColumns.key).map(
      _.toLowerCase(Locale.ROOT))
}
