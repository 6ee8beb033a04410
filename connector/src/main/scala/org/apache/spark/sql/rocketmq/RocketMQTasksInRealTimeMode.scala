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

import java.util.concurrent.ConcurrentHashMap

import org.apache.spark.TaskContext

/**
 * The tasks of this executor that run for a whole real-time batch or continuous epoch, so that a sink in the same
 * task can tell. Spark tells a writer nothing of the trigger, and such a task runs for its whole batch: a sink that
 * held rows for a fuller send request would hold them until the batch ends. The real-time and continuous readers
 * mark their task (the mark goes when the task completes); a task of continuous processing reading another source
 * is told by the local property Spark sets on every continuous query's tasks.
 */
private[rocketmq] object RocketMQTasksInRealTimeMode {

  private val attempts = ConcurrentHashMap.newKeySet[java.lang.Long]()

  /** Marks the running task as one that reads in real-time mode, until it completes. */
  def markCurrent(): Unit = Option(TaskContext.get()).foreach { context =>
    val attempt = context.taskAttemptId()
    if (attempts.add(attempt)) context.addTaskCompletionListener[Unit](_ => attempts.remove(attempt))
  }

  /** Whether the running task reads in real-time mode, or is one of continuous processing. */
  def current: Boolean = Option(TaskContext.get()).exists { context =>
    attempts.contains(context.taskAttemptId()) || "true" == context.getLocalProperty(ContinuousProcessingProperty)
  }

  /** Spark's local property of a continuous query's thread and tasks (its name is the same on 3.5 and 4.x). */
  val ContinuousProcessingProperty = "__is_continuous_processing"
}
