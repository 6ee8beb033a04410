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

import org.apache.spark.sql.connector.metric.{CustomMetric, CustomTaskMetric}
import org.apache.spark.sql.connector.write.BatchWrite
import org.apache.spark.sql.connector.write.streaming.StreamingWrite
import org.apache.spark.sql.rocketmq.client.{RocketMQEndpoint, RocketMQOffsetReader}
import org.apache.spark.sql.rocketmq.errors.RocketMQErrors
import org.apache.spark.sql.rocketmq.options.{DeliveryGuarantee, RocketMQOptions}
import org.apache.spark.sql.rocketmq.producer.{RocketMQTransactionScope, RocketMQWriteSettings}
import org.apache.spark.sql.rocketmq.transaction.{
  RocketMQCoordinatorSettings, RocketMQDecisionLog, RocketMQTransactionCoordinator,
  RocketMQTransactionRuns
}
import org.apache.spark.sql.types.StructType

/**
 * A write to RocketMQ: at-least-once, each task committing only when all its sends are
 * acknowledged; or, with `transaction` set in the settings, exactly-once through a
 * [[RocketMQTransactionCoordinator]]. `checkpointLocation` is the streaming query's, where an
 * exactly-once stream keeps its decisions.
 */
private[rocketmq] class RocketMQWrite(
    val settings: RocketMQWriteSettings, val columns: RocketMQWriteColumns, queryId: String,
    runId: String,
    checkpointLocation: Option[String], accumulators: RocketMQWriteAccumulators = null)
  extends RocketMQDriverMetrics {

  override def description(): String =
    s"RocketMQWrite[topic=${settings.topic.getOrElse("(from column topic)")}, " +
      s"${settings.deliveryGuarantee}]"

  /**
   * A batch write's accumulators, made when Spark asks for it: what its tasks counted, complete.
   */
  @volatile private var batchAccumulators: RocketMQWriteAccumulators = _

  override def toBatch: BatchWrite = {
    batchAccumulators = RocketMQWriteAccumulators.register()
    new RocketMQBatchWrite(settings, columns, () => RocketMQWrite.batchCoordinator(settings),
      batchAccumulators)
  }

  /**
   * After a batch write's job: its tasks' counts, which their own metrics miss what `commit()` did
   * of.
   */
  override def driverMetrics: Array[CustomTaskMetric] =
    Option(batchAccumulators).toSeq.flatMap(_.counts).map { case (name, value) =>
      RocketMQCustomMetrics.taskMetric(name, value)
    }.toArray

  override def toStreaming: StreamingWrite = {
    val coordinator = settings.transaction.map { _ =>
      RocketMQSinkRun.coordinator(settings, runId,
        checkpointLocation.getOrElse(throw RocketMQErrors.exactlyOnceNeedsCheckpoint()))
    }
    new RocketMQStreamingWrite(settings, columns, coordinator, queryId, accumulators)
  }

  override def supportedCustomMetrics(): Array[CustomMetric] = RocketMQCustomMetrics.writeMetrics
}

private[rocketmq] object RocketMQWrite {

  /**
   * Checks the options and the columns, and that a topic named by the option exists, before any row
   * is sent (`requireTopic`: a stream's sink table asks at the query's first plan only, see
   * [[RocketMQTable]]). `queryId` names an exactly-once write's transaction group (stable across
   * restarts of a stream). A streaming write is planned again for every micro-batch: its
   * transaction scope is the query run's ([[RocketMQTransactionRuns]], by Spark's run id, until the
   * run ends). A batch write (`checkpointLocation` None) gets a scope of its own. A stream's tasks
   * add what they measured and counted to `accumulators` (the sink table's).
   */
  def plan(options: RocketMQOptions, schema: StructType, queryId: String,
      checkpointLocation: Option[String],
      accumulators: RocketMQWriteAccumulators = null,
      requireTopic: (RocketMQOptions, String) => Unit =
        RocketMQOffsetReader.requireTopic): RocketMQWrite = {
    val runId = RocketMQRunEvents.runIdOf(queryId)
    val settings = writeSettings(options, queryId) { (group, timeoutMs) =>
      if (checkpointLocation.isEmpty) {
        RocketMQTransactionScope(group, RocketMQTransactionScope.newRun(), timeoutMs)
      } else RocketMQTransactionRuns.scope(queryId, runId, group, timeoutMs)
    }
    val columns = RocketMQWriteColumns.resolve(schema, settings.topic)
    // Columns the broker honours only on a plain send: refused with a transaction or a delay.
    def plainSendsOnly(column: Int, error: String => Throwable): Unit = if (column >= 0) {
      if (settings.transaction.isDefined) throw error("EXACTLY_ONCE")
      if (settings.deliveryDelayMs.isDefined) throw error("DELIVERY_TIME")
    }
    plainSendsOnly(columns.priority,
      sub =>
        RocketMQErrors.priorityNotHonoured(sub,
          if (sub == "EXACTLY_ONCE") "a transaction" else "a delivery time", -1))
    plainSendsOnly(columns.liteTopic, RocketMQErrors.liteTopicNotSupported(_, -1))
    settings.topic.foreach(topic => requireTopic(options, topic))
    val forEndpoint =
      if (RocketMQEndpoint.isProxy(options)) settings.copy(throughProxy = true) else settings
    new RocketMQWrite(forEndpoint, columns, queryId, runId, checkpointLocation, accumulators)
  }

  /**
   * The checked options of a write, with its transaction scope if it is exactly-once: `scopeOf`
   * makes it from the transaction group and timeout.
   */
  def writeSettings(options: RocketMQOptions, queryId: String)(
      scopeOf: (String, Long) => RocketMQTransactionScope): RocketMQWriteSettings = {
    options.validateForWrite()
    val base = RocketMQWriteSettings(options)
    base.deliveryGuarantee match {
      case DeliveryGuarantee.ExactlyOnce =>
        // RocketMQ does not deliver transactional messages late.
        if (base.deliveryDelayMs.isDefined) {
          throw RocketMQErrors.conflictingOptions(Seq(RocketMQOptions.DeliveryGuaranteeOption.key,
            RocketMQOptions.DeliveryDelayMs.key))
        }
        // Through a RocketMQ 5 proxy a commit can be dropped while success is answered: refused
        // before any send.
        if (RocketMQEndpoint.isProxy(options, mustKnow = true)) {
          throw RocketMQErrors.optionNotAllowed(RocketMQOptions.DeliveryGuaranteeOption.key,
            "PROXY_EXACTLY_ONCE")
        }
        val group = base.connection.onBroker(s"spark-rocketmq-txn-$queryId")
        base.copy(transaction = Some(scopeOf(group, base.transactionTimeoutMs)))
      case DeliveryGuarantee.AtLeastOnce => base
    }
  }

  /**
   * Whether `options` ask for an exactly-once write (as given: checked when the write is planned).
   */
  def isExactlyOnce(options: RocketMQOptions): Boolean =
    options.rawValue(RocketMQOptions.DeliveryGuaranteeOption).exists(
      _.equalsIgnoreCase(DeliveryGuarantee.ExactlyOnce.name))

  /**
   * A batch job's coordinator, if the write is exactly-once: its decisions live as long as the job.
   */
  def batchCoordinator(settings: RocketMQWriteSettings): Option[RocketMQTransactionCoordinator] =
    settings.transaction.map(scope =>
      new RocketMQTransactionCoordinator(RocketMQCoordinatorSettings.of(settings), scope,
        new RocketMQDecisionLog.InMemory,
        waitForCheckBacks = true))
}
