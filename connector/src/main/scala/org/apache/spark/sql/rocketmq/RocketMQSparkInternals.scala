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

import java.util.UUID

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.streaming.StreamingQuery

/**
 * Every Spark internal the connector reads, in one place: what Spark's connector API does not tell
 * a source or sink (a query's trigger and plan, its sink and checkpoint, the stream thread's local
 * properties). Members are reached by name, as the classes holding them moved between releases
 * (Spark 3.5 to 4.3 name them alike). RocketMQSparkInternalsSuite, and test_spark_versions.py on
 * each leg, resolve every one, so that a Spark release that renames one fails CI.
 */
private[rocketmq] object RocketMQSparkInternals {

  /** The stream thread's local properties (StreamExecution.runStream). */
  val QueryIdProperty = "sql.streaming.queryId"
  val JobGroupProperty = "spark.jobGroup.id"

  /** Set on a continuous query's thread and tasks (ContinuousExecution). */
  val ContinuousProcessingProperty = "__is_continuous_processing"

  /** Query `queryId`'s execution (StreamExecution) among those `session`'s shared state runs. */
  def runningExecution(session: SparkSession, queryId: String): Option[AnyRef] = {
    val running = call(call(session, "sharedState"), "activeStreamingQueries")
      .asInstanceOf[java.util.Map[UUID, AnyRef]]
    Option(running.get(UUID.fromString(queryId)))
  }

  /** The execution behind a query handle of the classic API (StreamingQueryWrapper). */
  def executionOf(query: StreamingQuery): AnyRef = call(query, "streamingQuery")

  /** An execution's trigger: `RealTimeTrigger` from Spark 4.1 on. */
  def triggerOf(execution: AnyRef): AnyRef = call(execution, "trigger")

  def isRealTimeTrigger(trigger: AnyRef): Boolean =
    trigger.getClass.getSimpleName == "RealTimeTrigger"

  /** An execution's analysed plan, with its sources' relations. */
  def logicalPlanOf(execution: AnyRef): LogicalPlan =
    call(execution, "logicalPlan").asInstanceOf[LogicalPlan]

  /** An execution's sink: the Table a DSv2 sink resolved to. */
  def sinkOf(execution: AnyRef): AnyRef = call(execution, "sink")

  /** Where an execution keeps its checkpoint (its resolved root). */
  def checkpointRootOf(execution: AnyRef): String =
    call(execution, "resolvedCheckpointRoot").toString

  private def call(target: AnyRef, method: String): AnyRef =
    target.getClass.getMethod(method).invoke(target)
}
