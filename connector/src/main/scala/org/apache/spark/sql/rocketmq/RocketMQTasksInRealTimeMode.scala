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
 * The tasks of this executor that read RocketMQ in real-time mode, so that a sink in the same task can tell. Spark
 * tells a writer nothing of the trigger, and a real-time task runs for its whole batch: a sink that held rows for
 * a fuller send request would hold them until the batch ends. The real-time reader marks its task; the mark goes
 * when the task completes.
 */
private[rocketmq] object RocketMQTasksInRealTimeMode {

  private val attempts = ConcurrentHashMap.newKeySet[java.lang.Long]()

  /** Marks the running task as one that reads in real-time mode, until it completes. */
  def markCurrent(): Unit = Option(TaskContext.get()).foreach { context =>
    val attempt = context.taskAttemptId()
    if (attempts.add(attempt)) context.addTaskCompletionListener[Unit](_ => attempts.remove(attempt))
  }

  /** Whether the running task reads in real-time mode. */
  def current: Boolean = Option(TaskContext.get()).exists(context => attempts.contains(context.taskAttemptId()))
}
