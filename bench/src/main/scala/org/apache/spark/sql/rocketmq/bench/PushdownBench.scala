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

package org.apache.spark.sql.rocketmq.bench

import java.sql.Timestamp

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.functions.{col, unix_millis}

/**
 * A time window read from a topic that holds many windows: the topic is written in `windows` rounds
 * of `messages / windows` rows, one after the other, and the read asks for the rows stored during
 * one round in the middle (`storeTimestamp` for RocketMQ, `timestamp` for Kafka, the time its
 * producer stamped). Timed: the same window read with the filter pushed down, and with it written
 * so that Spark cannot push it (`unix_millis(...)`), which reads the whole topic and filters in
 * Spark, as Spark's Kafka connector does with its `timestamp` filter (on its default settings).
 * Each read's count is checked against the round's rows.
 */
final class PushdownBench(
    spark: SparkSession,
    results: BenchResults,
    messages: Int,
    bodyBytes: Int,
    queues: Int,
    windows: Int,
    runs: Int) {

  private val perWindow = messages / windows

  def measure(system: BenchSystem, timeColumn: String): Unit = {
    val topic = s"bench-window-${System.nanoTime()}"
    system.createTopic(topic, queues)
    val bounds = (0 until windows).map { _ =>
      val from = System.currentTimeMillis()
      spark.range(0, perWindow.toLong, 1, queues).selectExpr(
        s"repeat('x', $bodyBytes) AS ${system.bodyColumn}")
        .write.format(system.format).options(system.sinkOptions(topic)).save()
      system.awaitReadable()
      val until = System.currentTimeMillis() + 1
      waitPast(until)
      (from, until)
    }
    val (from, until) = bounds(windows / 2)
    def source: DataFrame =
      spark.read.format(system.format).options(system.sourceOptions(topic)).load()
    def timed(label: String, window: () => DataFrame): Unit =
      results.add(Figure("pushdown", label, system.name, "s",
        Measure.seconds(runs) { _ => () =>
          {
            val counted = window().count()
            require(counted == perWindow,
              s"${system.name}: the window of $label held $counted rows, not $perWindow")
          }
        }))
    val share = s"1 window of $windows (${perWindow * windows} rows in all)"
    timed(s"read $share, filter on the time column",
      () =>
        source.where(
          col(timeColumn) >= new Timestamp(from) && col(timeColumn) < new Timestamp(until)))
    if (system.name == "rocketmq") {
      timed(s"read $share, the same filter not pushed down",
        () =>
          source.where(
            unix_millis(col(timeColumn)) >= from && unix_millis(col(timeColumn)) < until))
    }
  }

  /** The next window's messages are stamped after this one's end. */
  private def waitPast(ms: Long): Unit = while (System.currentTimeMillis() <= ms) Thread.sleep(1)
}
