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

import org.apache.spark.SparkContext
import org.apache.spark.sql.rocketmq.client.RocketMQLatencyHistogram
import org.apache.spark.util.CollectionAccumulator

/**
 * The durations a streaming query's tasks measured, gathered on the driver for its progress
 * reports. A stream (or, for the sink, the sink's table) makes one on the driver and hands it to
 * its tasks in their reader or writer factory; each task adds its histogram when it is done, and
 * Spark merges a successful task's additions into the driver's when the task ends (a failed task's
 * are dropped). Spark merges the additions of a micro-batch's tasks before their job ends
 * (real-time batches too: their tasks end with the batch), and reports the batch's progress after
 * that: [[drain]], called as progress is made, returns what the batch measured and starts the next
 * batch afresh.
 *
 * What travels is Spark's own accumulator of Longs, the histograms packed into numbers
 * ([[RocketMQLatencyHistogram.packed]]): Spark reads task results on the driver with its own class
 * loader, where a class of the connector's is not found when the jar is a Spark Connect session's
 * artifact.
 */
private[rocketmq] final class RocketMQLatencyAccumulator private (
    numbers: CollectionAccumulator[java.lang.Long])
  extends Serializable {

  /** In a task: adds the durations `measured` holds. */
  def add(measured: RocketMQLatencyHistogram): Unit = measured.packed.foreach(n => numbers.add(n))

  /**
   * On the driver: what was measured since the last call, and forgotten (taken and reset at once).
   */
  def drain(): RocketMQLatencyHistogram = {
    val taken = numbers.synchronized {
      val all = numbers.value
      numbers.reset()
      all
    }
    val measured = new RocketMQLatencyHistogram
    taken.forEach(n => measured.unpack(n))
    measured
  }
}

private[rocketmq] object RocketMQLatencyAccumulator {

  /**
   * A new accumulator, registered (unnamed: not shown among the stage's accumulators) with the
   * driver's context.
   */
  def register(): RocketMQLatencyAccumulator = {
    val numbers = new CollectionAccumulator[java.lang.Long]
    SparkContext.getOrCreate().register(numbers)
    new RocketMQLatencyAccumulator(numbers)
  }

  /**
   * A progress report's entries for `measured`: `<name>MsP50`, `<name>MsP99`, `<name>MsMax` and
   * `<name>Count` (how many durations), none when nothing was measured.
   */
  def progressMetrics(name: String, measured: RocketMQLatencyHistogram): Map[String, String] =
    if (measured.isEmpty) Map.empty
    else Map(
      s"${name}MsP50" -> measured.percentile(0.5).toString,
      s"${name}MsP99" -> measured.percentile(0.99).toString,
      s"${name}MsMax" -> measured.max.toString,
      s"${name}Count" -> measured.count.toString)
}
