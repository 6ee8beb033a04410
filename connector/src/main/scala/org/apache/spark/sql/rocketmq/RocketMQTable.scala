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

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.connector.catalog.{SupportsRead, SupportsWrite, TableCapability}
import org.apache.spark.sql.connector.read.ScanBuilder
import org.apache.spark.sql.connector.read.streaming.ReportsSinkMetrics
import org.apache.spark.sql.connector.write.{LogicalWriteInfo, WriteBuilder}
import org.apache.spark.sql.rocketmq.client.RocketMQOffsetReader
import org.apache.spark.sql.rocketmq.common.RocketMQConnection
import org.apache.spark.sql.rocketmq.options.RocketMQOptions
import org.apache.spark.sql.rocketmq.transaction.RocketMQTransactionRuns
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/**
 * RocketMQ topics seen as a table of messages with the fixed [[RocketMQSourceSchema]]: read in
 * batch and streaming, written by streaming queries. Batch writes are not claimed here (Spark would
 * then refuse the default save mode); they go through [[RocketMQSourceProvider]]'s relation write.
 * Any schema can be written: the columns are checked by name when the write is planned. As a
 * streaming query's sink, its metrics (in the query's progress) tell how long the last
 * micro-batch's sends took to be acknowledged (`sendAckMsP50`, `sendAckMsP99`, `sendAckMsMax`,
 * `sendAckCount`: per request, a batch is one), the batch's `sendRetries`, `failedSends` and
 * `possibleDuplicates` (complete: the SQL metrics miss what the tasks' commits did), and how an
 * exactly-once write's last epoch was committed.
 */
private[rocketmq] class RocketMQTable(options: RocketMQOptions)
  extends SupportsRead with SupportsWrite with ReportsSinkMetrics {

  /** The query run writing to this table, as Spark makes one sink table per streaming query run. */
  @volatile private var writingRunId: String = _
  /**
   * What the query's write tasks measured and counted, made on the driver when its write is first
   * planned.
   */
  @volatile private var accumulators: RocketMQWriteAccumulators = _
  /**
   * The topics (with their connection) the query's writes found to exist. Spark plans a stream's
   * write anew for every micro-batch; only its first plan asks the name server, so that no batch
   * end waits for a route lookup (docs/bench-real-time.md). A topic deleted later is reported by
   * the sends, which then find no route.
   */
  private val topicsFound =
    java.util.concurrent.ConcurrentHashMap.newKeySet[(RocketMQConnection, String)]()

  private def requireTopicOnce(writeOptions: RocketMQOptions, topic: String): Unit =
    if (!topicsFound.contains((writeOptions.connection, topic))) {
      RocketMQOffsetReader.requireTopic(writeOptions, topic)
      topicsFound.add((writeOptions.connection, topic))
    }

  /**
   * Spark asks a streaming query's sink for these when a trigger ends, after the micro-batch's
   * write job (its tasks' acknowledgement times all in); a trigger that ran no batch has none.
   */
  override def metrics(): util.Map[String, String] = {
    val acks = Option(accumulators).map { a =>
      RocketMQLatencyAccumulator.progressMetrics(RocketMQCustomMetrics.SendAck,
        a.sendAck.drain()) ++
        a.drainCounts().map { case (name, count) => name -> count.toString }
    }.getOrElse(Map.empty[String, String])
    (acks ++ Option(writingRunId).flatMap(RocketMQTransactionRuns.running).map(_.progressMetrics)
      .getOrElse(Map.empty[String, String])).asJava
  }

  override def name(): String = "rocketmq"

  override def schema(): StructType =
    RocketMQSourceSchema(options(RocketMQOptions.IncludeExtraColumns))

  override def capabilities(): util.Set[TableCapability] =
    util.EnumSet.of(TableCapability.BATCH_READ, TableCapability.MICRO_BATCH_READ,
      TableCapability.CONTINUOUS_READ,
      TableCapability.STREAMING_WRITE, TableCapability.ACCEPT_ANY_SCHEMA)

  override def newScanBuilder(scanOptions: CaseInsensitiveStringMap): ScanBuilder =
    new RocketMQScanBuilder(options)

  override def newWriteBuilder(info: LogicalWriteInfo): WriteBuilder = {
    writingRunId = RocketMQRunEvents.runIdOf(info.queryId())
    if (accumulators == null) accumulators = RocketMQWriteAccumulators.register()
    new RocketMQWriteBuilder(
      new RocketMQOptions(options.all ++ info.options().asCaseSensitiveMap().asScala), info,
      accumulators, requireTopicOnce)
  }
}
