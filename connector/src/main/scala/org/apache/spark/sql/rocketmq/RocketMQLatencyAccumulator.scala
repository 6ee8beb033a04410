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
import org.apache.spark.util.AccumulatorV2

/**
 * The durations a streaming query's tasks measured, gathered on the driver for its progress reports. A stream (or,
 * for the sink, the sink's table) makes one on the driver and hands it to its tasks in their reader or writer
 * factory; each task's copy registers with the task when it is deserialized there, the task adds its histogram
 * when it is done, and Spark merges a successful task's copy into this one when the task ends (a failed task's is
 * dropped). Spark merges the copies of a micro-batch's tasks before their job ends (real-time batches too: their
 * tasks end with the batch), and reports the batch's progress after that: [[drain]], called as progress is made,
 * returns what the batch measured and starts the next batch afresh.
 */
private[rocketmq] final class RocketMQLatencyAccumulator
  extends AccumulatorV2[RocketMQLatencyHistogram, RocketMQLatencyHistogram] {

  private val histogram = new RocketMQLatencyHistogram

  // Merged by Spark's scheduler thread, drained by the query's: each guards the histogram.
  override def isZero: Boolean = synchronized(histogram.isEmpty)

  override def copy(): RocketMQLatencyAccumulator = synchronized {
    val c = new RocketMQLatencyAccumulator
    c.histogram.merge(histogram)
    c
  }

  override def reset(): Unit = synchronized(histogram.reset())

  override def add(v: RocketMQLatencyHistogram): Unit = synchronized(histogram.merge(v))

  override def merge(other: AccumulatorV2[RocketMQLatencyHistogram, RocketMQLatencyHistogram]): Unit =
    other match {
      case o: RocketMQLatencyAccumulator => add(o.value)
      case _ => throw new UnsupportedOperationException(s"Cannot merge ${getClass.getName} with ${other.getClass}")
    }

  override def value: RocketMQLatencyHistogram = synchronized(histogram.copy())

  /** What was measured since the last call, and forgotten. */
  def drain(): RocketMQLatencyHistogram = synchronized {
    val measured = histogram.copy()
    histogram.reset()
    measured
  }
}

private[rocketmq] object RocketMQLatencyAccumulator {

  /** A new accumulator, registered (unnamed: not shown among the stage's accumulators) with the driver's context. */
  def register(): RocketMQLatencyAccumulator = {
    val accumulator = new RocketMQLatencyAccumulator
    SparkContext.getOrCreate().register(accumulator)
    accumulator
  }

  /**
   * A progress report's entries for `measured`: `<name>MsP50`, `<name>MsP99`, `<name>MsMax` and `<name>Count` (how
   * many durations), none when nothing was measured.
   */
  def progressMetrics(name: String, measured: RocketMQLatencyHistogram): Map[String, String] =
    if (measured.isEmpty) Map.empty
    else Map(
      s"${name}MsP50" -> measured.percentile(0.5).toString,
      s"${name}MsP99" -> measured.percentile(0.99).toString,
      s"${name}MsMax" -> measured.max.toString,
      s"${name}Count" -> measured.count.toString)
}
