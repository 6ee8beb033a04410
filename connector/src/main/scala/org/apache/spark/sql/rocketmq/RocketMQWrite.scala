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

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.metric.CustomMetric
import org.apache.spark.sql.connector.write.{BatchWrite, Write}
import org.apache.spark.sql.connector.write.streaming.StreamingWrite
import org.apache.spark.sql.rocketmq.producer.RocketMQWriteSettings
import org.apache.spark.sql.rocketmq.transaction.{
  RocketMQDecisionLog, RocketMQTransactionCoordinator,
  RocketMQTransactionRuns, RocketMQTransactionScope
}
import org.apache.spark.sql.types.StructType

/**
 * A write to RocketMQ: at-least-once, each task committing only when all its sends are acknowledged;
 * or, with `transaction` set in the settings, exactly-once through a [[RocketMQTransactionCoordinator]].
 * `checkpointLocation` is the streaming query's, where an exactly-once stream keeps its decisions.
 */
private[rocketmq] class RocketMQWrite(
    val settings: RocketMQWriteSettings, val columns: RocketMQWriteColumns, queryId: String, runKey: String,
    checkpointLocation: Option[String])
  extends Write {

  override def description(): String =
    s"RocketMQWrite[topic=${settings.topic.getOrElse("(from column topic)")}, ${settings.deliveryGuarantee}]"

  override def toBatch: BatchWrite =
    new RocketMQBatchWrite(settings, columns, () => RocketMQWrite.batchCoordinator(settings))

  override def toStreaming: StreamingWrite = {
    val coordinator = settings.transaction.map { _ =>
      val dir = checkpointLocation.getOrElse(throw RocketMQErrors.exactlyOnceNeedsCheckpoint())
      val session = SparkSession.active
      RocketMQTransactionRuns.coordinator(runKey)(
        scope =>
          new RocketMQTransactionCoordinator(settings, scope,
            new RocketMQDecisionLog.Files(s"$dir/rocketmq-sink/decisions", session.sessionState.newHadoopConf())),
        end => RocketMQQueryEndListener.closeWhenQueryEnds(session.sparkContext, queryId, end))
    }
    new RocketMQStreamingWrite(settings, columns, coordinator)
  }

  override def supportedCustomMetrics(): Array[CustomMetric] = RocketMQCustomMetrics.writeMetrics
}

private[rocketmq] object RocketMQWrite {

  /**
   * Checks the options and the columns, and that a topic named by the option exists, before any row is
   * sent. `queryId` names an exactly-once write's transaction group (stable across restarts of a stream).
   * A streaming write is planned again for every micro-batch: its transaction scope is the query run's
   * ([[RocketMQTransactionRuns]], keyed by the query id, until the run ends). A batch write
   * (`checkpointLocation` None) gets a scope of its own.
   */
  def plan(options: RocketMQOptions, schema: StructType, queryId: String, checkpointLocation: Option[String])
      : RocketMQWrite = {
    options.validateForWrite()
    val base = RocketMQWriteSettings(options)
    val runKey = queryId // Spark runs one run of a query id at a time in a driver
    val settings = base.deliveryGuarantee match {
      case DeliveryGuarantee.ExactlyOnce =>
        // RocketMQ does not deliver transactional messages late.
        if (base.deliveryDelayMs.isDefined) {
          throw RocketMQErrors.conflictingOptions(Seq(RocketMQOptions.DeliveryGuaranteeOption.key,
            RocketMQOptions.DeliveryDelayMs.key))
        }
        val group = base.connection.onBroker(s"spark-rocketmq-txn-$queryId")
        val scope =
          if (checkpointLocation.isEmpty) {
            RocketMQTransactionScope(group, RocketMQTransactionScope.newRun(), base.transactionTimeoutMs)
          } else RocketMQTransactionRuns.scope(runKey, group, base.transactionTimeoutMs)
        base.copy(transaction = Some(scope))
      case DeliveryGuarantee.AtLeastOnce => base
    }
    val columns = RocketMQWriteColumns.resolve(schema, settings.topic)
    settings.topic.foreach(topic => RocketMQOffsetReader.requireTopic(options, topic))
    new RocketMQWrite(settings, columns, queryId, runKey, checkpointLocation)
  }

  /** A batch job's coordinator, if the write is exactly-once: its decisions live as long as the job. */
  def batchCoordinator(settings: RocketMQWriteSettings): Option[RocketMQTransactionCoordinator] =
    settings.transaction.map(scope =>
      new RocketMQTransactionCoordinator(settings, scope, new RocketMQDecisionLog.InMemory, waitForCheckBacks = true))
}
