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

package org.apache.spark.sql.rocketmq.client

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.{SparkConf, SparkContext}

import org.apache.spark.sql.rocketmq.{
  RocketMQCustomMetrics, RocketMQLatencyAccumulator, RocketMQQueueWaitP50Metric,
  RocketMQQueueWaitP99Metric, RocketMQSendAckMaxMetric
}

/**
 * The latency histogram: its percentiles against exact ones, its bounds, merging, and what it
 * reports.
 */
class RocketMQLatencyHistogramSuite extends AnyFunSuite {

  private def histogram(values: Long*): RocketMQLatencyHistogram = {
    val h = new RocketMQLatencyHistogram
    values.foreach(h.record)
    h
  }

  /** The nearest-rank percentile of `values`. */
  private def exact(values: Seq[Long], fraction: Double): Long = {
    val sorted = values.sorted
    sorted(math.max(1, math.ceil(fraction * sorted.size).toInt) - 1)
  }

  test("empty: count, max and every percentile are 0, and no progress entries") {
    val h = new RocketMQLatencyHistogram
    assert(h.isEmpty && h.count === 0 && h.max === 0)
    assert(h.percentile(0.5) === 0 && h.percentile(0.99) === 0 && h.percentile(1.0) === 0)
    assert(RocketMQLatencyAccumulator.progressMetrics("queueWait", h).isEmpty)
    intercept[IllegalArgumentException](h.percentile(0))
    intercept[IllegalArgumentException](h.percentile(1.5))
  }

  test("below 16 ms every value is exact") {
    val h = histogram(0L to 15L: _*)
    assert(h.count === 16 && h.max === 15)
    assert(h.percentile(0.5) === 7) // the 8th of 16
    assert(h.percentile(1.0 / 16) === 0)
    assert(h.percentile(1.0) === 15)
    assert(histogram(3, 3, 3).percentile(0.99) === 3)
  }

  test("percentiles are never below the exact ones and less than 1/16 above, the max exact") {
    val random = new Random(38)
    for (round <- 0 until 50) {
      // Spread over many orders of magnitude: from sub-millisecond to days.
      val values = Seq.fill(1 + random.nextInt(2000))(math.exp(random.nextDouble() * 20).toLong)
      val h = histogram(values: _*)
      assert(h.count === values.size && h.max === values.max, s"round $round")
      for (p <- Seq(0.01, 0.5, 0.9, 0.99, 0.999, 1.0)) {
        val (got, want) = (h.percentile(p), exact(values, p))
        assert(got >= want && got <= math.max(want, want + want / 16),
          s"round $round p$p: $got for $want")
        assert(got <= h.max)
      }
    }
  }

  test("a percentile is never above the maximum, even when its bucket is wide") {
    val h = histogram(1000, 1001, 1002)
    // 1000..1002 share the bucket [992, 1023]: the percentile is cut to the exact maximum.
    assert(h.percentile(0.5) === 1002 && h.percentile(0.99) === 1002 && h.max === 1002)
    val one = histogram(1500)
    assert(one.percentile(0.5) === 1500 && one.percentile(0.99) === 1500)
  }

  test(
    "bounds: negative durations count as 0, huge ones share the last bucket and keep an exact " +
      "max") {
    val h = histogram(-5, -1, 0)
    assert(h.count === 3 && h.max === 0 && h.percentile(0.99) === 0)
    val huge = histogram(1L << 45, Long.MaxValue)
    assert(huge.count === 2 && huge.max === Long.MaxValue)
    assert(huge.percentile(0.5) === Long.MaxValue) // the last bucket has no upper bound but the max
    val buckets = (0 until 64).map(b =>
      RocketMQLatencyHistogram.bucketOf(if (b == 0) 0L else 1L << (b - 1)))
    assert(buckets.forall(i => i >= 0 && i < RocketMQLatencyHistogram.Buckets))
    assert(
      RocketMQLatencyHistogram.bucketOf(Long.MaxValue) === RocketMQLatencyHistogram.Buckets - 1)
    // Each bucket's highest value is in it, and the next value is in the next bucket.
    for (i <- 0 until RocketMQLatencyHistogram.Buckets - 1) {
      val top = RocketMQLatencyHistogram.highestOf(i)
      assert(RocketMQLatencyHistogram.bucketOf(top) === i &&
        RocketMQLatencyHistogram.bucketOf(top + 1) === i + 1)
    }
  }

  test("merge adds counts and keeps the larger max; reset empties; copy is independent") {
    val a = histogram(10, 20, 30)
    val b = histogram(5000, 7)
    a.merge(b)
    assert(
      a.count === 5 && a.max === 5000 && a.percentile(0.5) === 20 && a.percentile(1.0) === 5000)
    a.merge(new RocketMQLatencyHistogram)
    assert(a.count === 5)
    val c = a.copy()
    a.reset()
    assert(a.isEmpty && a.max === 0 && a.percentile(0.5) === 0)
    assert(c.count === 5 && c.max === 5000)
    assert(b.count === 2, "the merged histogram is left as it was")
  }

  test(
    "packed into numbers (a bucket each, and the max), it comes back the same, mixed with " +
      "another's") {
    val values = Seq(0L, 1L, 17L, 1500L, 1500L, 86400000L)
    val (h, other) = (histogram(values: _*), histogram(3L, 1600L))
    assert(h.packed.size === 6, "5 non-empty buckets and the maximum")
    val back = new RocketMQLatencyHistogram
    Random.shuffle(h.packed ++ other.packed).foreach(back.unpack)
    val both = histogram(values ++ Seq(3L, 1600L): _*)
    assert(back.count === both.count && back.max === both.max)
    for (p <- Seq(0.1, 0.5, 0.99, 1.0)) assert(back.percentile(p) === both.percentile(p))
    assert(new RocketMQLatencyHistogram().packed.isEmpty)
  }

  test("the accumulator gathers what tasks add and drains what a batch measured") {
    val sc =
      new SparkContext(new SparkConf().setMaster("local[1]").setAppName("latency-accumulator"))
    try {
      val acc = RocketMQLatencyAccumulator.register()
      // Two tasks, each adding its histogram on an executor; Spark merges them into the driver's.
      sc.parallelize(Seq(Seq(1600L, 1700L), Seq(1800L)), 2).foreach { values =>
        val h = new RocketMQLatencyHistogram
        values.foreach(h.record)
        acc.add(h)
      }
      // 1700 is in the bucket [1664, 1727]: its percentile is that bucket's top.
      val metrics =
        RocketMQLatencyAccumulator.progressMetrics(RocketMQCustomMetrics.QueueWait, acc.drain())
      assert(metrics === Map("queueWaitMsP50" -> "1727", "queueWaitMsP99" -> "1800",
        "queueWaitMsMax" -> "1800",
        "queueWaitCount" -> "3"))
      assert(acc.drain().isEmpty, "the next batch starts empty")
    } finally sc.stop()
  }

  test("the SQL UI's aggregates leave out tasks that measured nothing") {
    assert(new RocketMQQueueWaitP50Metric().aggregateTaskMetrics(Array(-1L, 10L, 30L, 20L)) ===
      "20")
    assert(new RocketMQQueueWaitP99Metric().aggregateTaskMetrics(Array(5L, -1L, 90L)) === "90")
    assert(new RocketMQSendAckMaxMetric().aggregateTaskMetrics(Array(-1L, -1L)) === "n/a")
    assert(new RocketMQSendAckMaxMetric().aggregateTaskMetrics(Array.empty) === "n/a")
    val task = RocketMQCustomMetrics.latencyTaskMetrics("a", "b", "c", histogram(4, 8, 100))
    assert(task.map(m => m.name() -> m.value()) === Seq("a" -> 8L, "b" -> 100L, "c" -> 100L))
    assert(RocketMQCustomMetrics.latencyTaskMetrics("a", "b", "c", histogram()).forall(
      _.value() == -1L))
  }
}
