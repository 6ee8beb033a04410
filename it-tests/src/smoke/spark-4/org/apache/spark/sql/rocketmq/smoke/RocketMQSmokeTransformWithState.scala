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

package org.apache.spark.sql.rocketmq.smoke

import org.apache.spark.sql.{DataFrame, Encoders}
import org.apache.spark.sql.streaming.{
  OutputMode, StatefulProcessor, TimeMode, TimerValues, TTLConfig, ValueState
}

/**
 * The smoke suite's transformWithState query, of the Spark 4 build only (Spark 3.5 has no such
 * API): the bodies grouped by themselves, each group's count kept in a value state, and
 * `body:count` emitted as it changes. The suite shared with the Spark 3.5 builds loads it by name
 * and runs it under Spark 4.3's real-time mode.
 */
final class RocketMQSmokeTransformWithState extends (DataFrame => DataFrame) {
  override def apply(bodies: DataFrame): DataFrame = {
    val strings = Encoders.STRING
    bodies.as(strings).groupByKey(identity)(strings)
      .transformWithState(new RocketMQSmokeCountPerBody, TimeMode.None(), OutputMode.Update())(
        strings)
      .toDF("body")
  }
}

/** A running count per key, in a value state. */
final class RocketMQSmokeCountPerBody extends StatefulProcessor[String, String, String] {
  @transient private var count: ValueState[Long] = _

  override def init(outputMode: OutputMode, timeMode: TimeMode): Unit =
    count = getHandle.getValueState[Long]("count", Encoders.scalaLong, TTLConfig.NONE)

  override def handleInputRows(key: String, rows: Iterator[String], timerValues: TimerValues)
      : Iterator[String] = {
    val now = (if (count.exists()) count.get() else 0L) + rows.size
    count.update(now)
    Iterator(s"$key:$now")
  }
}
