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

import org.apache.spark.sql.rocketmq.common.RocketMQQueue

/** The end of a read with no end, from task offsets that name their queue. */
class RocketMQOpenPlanSuite extends AnyFunSuite {

  private val a0 = RocketMQQueue("t", "broker-a", 0)
  private val a1 = RocketMQQueue("t", "broker-a", 1)
  private val b0 = RocketMQQueue("t", "broker-b", 0)
  /** A broker group whose name sorts first: planned later, it comes before every queue above. */
  private val first0 = RocketMQQueue("t", "0-broker", 0)

  test(
    "each task's offset moves its own queue on, whatever the plan's order and whichever plan " +
      "runs") {
    val before = RocketMQOpenPlan(Map(a0 -> 10L, a1 -> 20L, b0 -> 30L))
    val reported = Array(RocketMQQueueOffset(b0, 33L), RocketMQQueueOffset(a0, 11L))
    assert(before.end(reported).queueOffsets === Map(a0 -> 11L, a1 -> 20L, b0 -> 33L))
    // Planned again with a group that sorts first: every queue's place in the plan moved by one.
    // Offsets the old plan's tasks report still move their own queues (by place, a0's would have
    // moved first0).
    val after = RocketMQOpenPlan(Map(first0 -> 0L, a0 -> 10L, a1 -> 20L, b0 -> 30L))
    assert(after.queues === IndexedSeq(first0, a0, a1, b0))
    assert(after.end(reported).queueOffsets === Map(first0 -> 0L, a0 -> 11L, a1 -> 20L, b0 -> 33L))
  }

  test(
    "an offset of a queue the plan does not read fails, naming the queue id and the queues " +
      "planned") {
    val plan = RocketMQOpenPlan(Map(a0 -> 10L, b0 -> 30L))
    val e = intercept[IllegalStateException](plan.end(Array(RocketMQQueueOffset(a1, 21L))))
    assert(e.getMessage.contains("offset 21 of queue id 1"))
    assert(e.getMessage.contains("not one of the 2 queues planned: t/broker-a/0, t/broker-b/0"))
    val other = intercept[IllegalArgumentException](
      plan.end(Array(new org.apache.spark.sql.connector.read.streaming.PartitionOffset {})))
    assert(other.getMessage.startsWith("Not the offset of a RocketMQ queue"))
  }

  test(
    "the offset travels in Spark's own class, and a queue's fingerprint is the same on every JVM " +
      "and release") {
    val offset = RocketMQQueueOffset(RocketMQQueue("orders", "broker-a", 3), 7L)
    assert(offset.getClass.getName ===
      "org.apache.spark.sql.execution.streaming.continuous.RateStreamPartitionOffset")
    val RocketMQQueueOffset(name, next) = offset
    assert(next === 7L && name.queueId === 3)
    // The first half of the name-based (MD5) UUID of "orders\u0000broker-a\u00003": fixed, not a
    // hash of this JVM.
    assert(name.fingerprint === -1887233909370898250L)
    assert(RocketMQQueueOffset.fingerprint(RocketMQQueue("orders", "broker-b", 3)) !==
      name.fingerprint)
  }
}
