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

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.rocketmq.common.{RocketMQOffsetRange, RocketMQQueue}
import org.apache.spark.sql.rocketmq.consumer.RocketMQReadSettings
import org.apache.spark.sql.rocketmq.options.RocketMQOptions

class RocketMQOffsetRangeCalculatorSuite extends AnyFunSuite {

  private val q0 = RocketMQQueue("t", "b", 0)
  private val q1 = RocketMQQueue("t", "b", 1)

  test("rate limit: exactly min(limit, backlog), shared by backlog") {
    val q2 = RocketMQQueue("t", "b", 2)
    val from = Map(q0 -> 0L, q1 -> 100L, q2 -> 50L)
    val until = Map(q0 -> 700L, q1 -> 400L, q2 -> 50L)
    val limited = RocketMQOffsetRangeCalculator.rateLimit(from, until, 100)
    assert(limited.map { case (q, u) => u - from(q) }.sum === 100)
    assert(limited === Map(q0 -> 70L, q1 -> 130L, q2 -> 50L))
    assert(RocketMQOffsetRangeCalculator.rateLimit(from, until, 5000) === until)
    val odd = RocketMQOffsetRangeCalculator.rateLimit(Map(q0 -> 0L, q1 -> 0L, q2 -> 0L),
      Map(q0 -> 10L, q1 -> 10L, q2 -> 10L), 10)
    assert(odd.values.sum === 10 && odd.values.forall(v => v == 3 || v == 4))
  }

  test("minPartitions splits large ranges; unsplit queues keep a stable preferred executor") {
    val settings =
      RocketMQReadSettings(new RocketMQOptions(Map("nameServer" -> "h:1", "topic" -> "t")))
    val ranges = Seq(RocketMQOffsetRange(q0, 0, 900), RocketMQOffsetRange(q1, 0, 100))
    val parts =
      RocketMQOffsetRangeCalculator.partitions(ranges, Some(10), settings,
        Seq("executor_h_1", "executor_h_2"))
    assert(parts.map(p => p.untilOffset - p.fromOffset).sum === 1000)
    assert(parts.count(_.queue == q0) === 9 && parts.count(_.queue == q1) === 1)
    assert(parts.filter(_.queue == q0).forall(_.preferredLocation.isEmpty))
    assert(parts.find(_.queue == q1).get.preferredLocation.isDefined)
    val q0Pieces = parts.filter(_.queue == q0).sortBy(_.fromOffset)
    assert(q0Pieces.zip(q0Pieces.tail).forall { case (a, b) => a.untilOffset == b.fromOffset })
    val executors = Seq("executor_a_1", "executor_b_2", "executor_c_3")
    val chosen = (0 until 3).map(_ =>
      RocketMQOffsetRangeCalculator.preferredExecutor(q1, executors))
    assert(chosen.distinct.size === 1 && chosen.head.isDefined)
    assert(RocketMQOffsetRangeCalculator.partitions(ranges, None, settings, Nil).size === 2)
    assert(RocketMQOffsetRangeCalculator.partitions(
      Seq(RocketMQOffsetRange(q0, 5, 5)), None, settings, Nil).isEmpty)
  }
}
