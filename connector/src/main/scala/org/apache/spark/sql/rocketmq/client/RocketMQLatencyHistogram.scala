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

import RocketMQLatencyHistogram._

/**
 * Durations in milliseconds, counted in fixed log-spaced buckets: a bounded size (592 counters)
 * whatever it holds, and nothing allocated to record one. Durations below 16 ms have a bucket each;
 * above, each power of two is cut into 16 buckets, so a bucket is at most 1/16 of its values wide.
 * A percentile is the highest value of its bucket, but never above the exact maximum: it is never
 * below the true percentile, and less than 6.25% above it. Negative durations (clocks of two
 * machines apart) count as 0; those from 2^40 ms (about 35 years) up share the last bucket. The
 * maximum and the count are exact. Not thread-safe: its owner guards it where threads share it.
 */
private[rocketmq] final class RocketMQLatencyHistogram {

  private val counts = new Array[Long](Buckets)
  private var total = 0L
  private var largest = 0L

  /** How many durations it holds. */
  def count: Long = total

  def isEmpty: Boolean = total == 0

  /** The longest duration recorded (exact), 0 when empty. */
  def max: Long = largest

  def record(ms: Long): Unit = {
    val value = math.max(0L, ms)
    counts(bucketOf(value)) += 1
    total += 1
    if (value > largest) largest = value
  }

  /**
   * The smallest bucket bound that at least `fraction` of the durations do not exceed (nearest
   * rank), at most the maximum; 0 when empty.
   */
  def percentile(fraction: Double): Long = {
    require(fraction > 0 && fraction <= 1, s"a percentile is a fraction in (0, 1], not $fraction")
    if (total == 0) return 0L
    val rank = math.max(1L, math.ceil(fraction * total).toLong)
    var seen = 0L
    var i = 0
    while (seen + counts(i) < rank) { seen += counts(i); i += 1 }
    math.min(highestOf(i), largest)
  }

  /** Adds every duration `other` holds. */
  def merge(other: RocketMQLatencyHistogram): Unit = if (other.total > 0) {
    var i = 0
    while (i < Buckets) { counts(i) += other.counts(i); i += 1 }
    total += other.total
    largest = math.max(largest, other.largest)
  }

  def reset(): Unit = if (total > 0) {
    java.util.Arrays.fill(counts, 0L)
    total = 0
    largest = 0
  }

  def copy(): RocketMQLatencyHistogram = {
    val c = new RocketMQLatencyHistogram
    c.merge(this)
    c
  }

  /**
   * The histogram as plain numbers, for a Spark accumulator of Longs (a class of the connector's
   * own would not load where Spark reads task results over Spark Connect, the jar a session's
   * artifact): one per non-empty bucket (its index above [[PackShift]] bits, its count below), and
   * one for the maximum. [[unpack]] adds them back, in any order and mixed with other histograms'
   * numbers.
   */
  def packed: Seq[Long] = {
    val numbers = Seq.newBuilder[Long]
    var i = 0
    while (i < Buckets) {
      if (counts(i) != 0) numbers += (i.toLong << PackShift) | counts(i)
      i += 1
    }
    if (total > 0) numbers += (MaxTag.toLong << PackShift) | math.min(largest, PackMask)
    numbers.result()
  }

  /** Adds one number of [[packed]]. */
  def unpack(number: Long): Unit = {
    val (tag, value) = ((number >>> PackShift).toInt, number & PackMask)
    if (tag == MaxTag) largest = math.max(largest, value)
    else { counts(tag) += value; total += value }
  }
}

private[rocketmq] object RocketMQLatencyHistogram {

  /** Sub-buckets per power of two (2^4 = 16): the precision. */
  private val SubBits = 4
  private val Sub = 1 << SubBits
  /** Durations from 2^TopBits ms up share the last bucket. */
  private val TopBits = 40
  private[client] val Buckets = Sub + (TopBits - SubBits) * Sub

  // A packed number: a bucket's index (or MaxTag) above PackShift bits, a count (or the maximum)
  // below.
  private val PackShift = 44
  private val PackMask = (1L << PackShift) - 1
  private val MaxTag = Buckets

  /** The bucket of `value` (>= 0): `value` itself below 16; above, 16 per power of two. */
  private[client] def bucketOf(value: Long): Int =
    if (value < Sub) value.toInt
    else {
      val v = math.min(value, (1L << TopBits) - 1)
      val exponent = 63 - java.lang.Long.numberOfLeadingZeros(v) // >= SubBits
      val shift = exponent - SubBits
      Sub + shift * Sub + ((v >>> shift) & (Sub - 1)).toInt
    }

  /** The highest value bucket `i` holds (the last one's: no bound, Long.MaxValue). */
  private[client] def highestOf(i: Int): Long =
    if (i < Sub) i.toLong
    else if (i == Buckets - 1) Long.MaxValue
    else {
      val shift = (i - Sub) / Sub
      val sub = (i - Sub) % Sub
      ((Sub + sub + 1).toLong << shift) - 1
    }
}
