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

import java.sql.Timestamp
import java.time.Instant

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.rocketmq.common.{RocketMQOffsetRange, RocketMQQueue}
import org.apache.spark.sql.sources._

class RocketMQPushdownSuite extends AnyFunSuite {

  private def translate(filter: Filter, tagsPushable: Boolean = true) =
    RocketMQPushdown.translate(filter, tagsPushable)

  test("topic, brokerName and queueId equalities and IN lists prune queues, exactly") {
    val t = translate(And(EqualTo("topic", "a"), In("queueId", Array(1, 3, null)))).get
    assert(t.exact)
    assert(t.narrowing.keeps(RocketMQQueue("a", "b0", 3)))
    assert(!t.narrowing.keeps(RocketMQQueue("a", "b0", 2)))
    assert(!t.narrowing.keeps(RocketMQQueue("other", "b0", 1)))
    val broker = translate(In("brokerName", Array("b1", "b2"))).get
    assert(broker.exact && broker.narrowing.brokers === Some(Set("b1", "b2")))
    val both = t.narrowing.and(translate(EqualTo("topic", "c")).get.narrowing)
    assert(both.topics === Some(Set.empty[String]))
  }

  test("queueOffset bounds become a half-open range; an IN list only narrows") {
    def range(f: Filter) = {
      val n = translate(f).get.narrowing
      n.narrow(RocketMQOffsetRange(RocketMQQueue("t", "b", 0), 0, 100))
    }
    assert(range(GreaterThanOrEqual("queueOffset", 10L)).from === 10)
    assert(range(GreaterThan("queueOffset", 10L)).from === 11)
    assert(range(LessThan("queueOffset", 10L)).until === 10)
    assert(range(LessThanOrEqual("queueOffset", 10L)).until === 11)
    assert((range(EqualTo("queueOffset", 7L)).from, range(EqualTo("queueOffset", 7L)).until) ===
      ((7, 8)))
    assert(range(GreaterThan("queueOffset", 500L)).size === 0)
    val in = translate(In("queueOffset", Array(5L, 9L))).get
    assert(
      !in.exact && in.narrowing.offsetFrom === Some(5L) && in.narrowing.offsetUntil === Some(10L))
  }

  test(
    "queueOffset bounds at Long.MaxValue do not wrap round: '<= max' keeps every row, '> max' " +
      "none") {
    val whole = RocketMQOffsetRange(RocketMQQueue("t", "b", 0), 0, 100)
    def outcome(f: Filter) = {
      val t = translate(f).get
      (t.narrowing.narrow(whole).size, t.exact)
    }
    val max = Long.MaxValue
    assert(outcome(LessThanOrEqual("queueOffset", max)) === ((100, true)))
    assert(outcome(LessThan("queueOffset", max)) === ((100, true)))
    assert(outcome(GreaterThan("queueOffset", max)) === ((0, true)))
    assert(outcome(GreaterThanOrEqual("queueOffset", max)) === ((0, true)))
    assert(outcome(EqualTo("queueOffset", max)) === ((0, true)))
    // An IN list holding Long.MaxValue still reads its other offsets.
    assert(outcome(In("queueOffset", Array(5L, max))) === ((95, false)))
    // Store-time edges at the ends of the microsecond range do not wrap round either.
    assert(RocketMQPushdown.millisEdge(Long.MaxValue, lower = true, inclusive = true) ===
      Long.MaxValue / 1000 + 1)
    assert(RocketMQPushdown.millisEdge(Long.MinValue, lower = true, inclusive = true) ===
      Long.MinValue / 1000)
  }

  test(
    "store time bounds in microseconds become millisecond edges, from Timestamp and Instant " +
      "values") {
    import RocketMQPushdown.millisEdge
    assert(millisEdge(5000500L, lower = true, inclusive = true) === 5001) // >= 5000.5 ms: from 5001
    assert(millisEdge(5000000L, lower = true, inclusive = true) === 5000)
    assert(millisEdge(5000000L, lower = true, inclusive = false) === 5001) // > 5000 ms
    assert(millisEdge(5000500L, lower = false, inclusive = false) ===
      5001) // < 5000.5 ms: until 5001
    assert(millisEdge(5000000L, lower = false, inclusive = false) === 5000)
    assert(millisEdge(5000000L, lower = false, inclusive = true) === 5001) // <= 5000 ms
    assert(millisEdge(-1500L, lower = true, inclusive = true) === -1)
    val ts = new Timestamp(1700000000123L)
    assert(translate(GreaterThanOrEqual("storeTimestamp", ts)).get ===
      RocketMQPushdown.Translated(RocketMQPushdown(storeFromMs = Some(1700000000123L)),
        exact = true))
    val instant = Instant.ofEpochMilli(1700000000123L).plusNanos(1000)
    assert(translate(LessThan("storeTimestamp", instant)).get.narrowing.storeUntilMs ===
      Some(1700000000124L))
    val at = translate(EqualTo("storeTimestamp", ts)).get
    assert(at.exact && at.narrowing.storeFromMs === Some(1700000000123L) &&
      at.narrowing.storeUntilMs === Some(1700000000124L))
  }

  test(
    "a born time bound narrows the store time from below, less producerClockSkewMs, and only " +
      "given it") {
    val ts = new Timestamp(1700000000000L)
    // Unset: a producer's clock may run ahead of its broker's, so a born time says nothing of the
    // store time.
    assert(translate(GreaterThan("bornTimestamp", ts)).isEmpty)
    assert(translate(EqualTo("bornTimestamp", ts)).isEmpty)
    val born = RocketMQPushdown.translate(GreaterThan("bornTimestamp", ts), tagsPushable = true,
      Some(5000L)).get
    assert(!born.exact && born.narrowing.storeTimeFromMs === Some(1700000000001L - 5000L))
    assert(RocketMQPushdown.translate(LessThan("bornTimestamp", ts), tagsPushable = true,
      Some(5000L)).isEmpty)
  }

  test(
    "tags: equality and IN become the tag expression, intersected with the option's; not beside " +
      "a SQL filter") {
    val tags = translate(In("tags", Array("paid", "shipped"))).get
    assert(tags.exact)
    assert(tags.narrowing.tagExpression("*") === Some("paid || shipped"))
    assert(tags.narrowing.tagExpression("shipped || lost") === Some("shipped"))
    assert(tags.narrowing.tagExpression("lost") === None)
    assert(RocketMQPushdown().tagExpression("a || b") === Some("a || b"))
    assert(translate(EqualTo("tags", "paid"), tagsPushable = false).isEmpty)
    assert(translate(EqualTo("tags", "a||b")).isEmpty)
    assert(translate(EqualTo("tags", "*")).isEmpty)
  }

  test(
    "what is not understood is left to Spark; a conjunction with one side understood only " +
      "narrows") {
    assert(translate(Or(EqualTo("queueId", 1), EqualTo("queueId", 2))).isEmpty)
    assert(translate(EqualTo("body", Array[Byte](1))).isEmpty)
    assert(translate(IsNotNull("tags")).isEmpty)
    assert(translate(IsNotNull("queueId")).get.exact)
    val half = translate(And(EqualTo("queueId", 1), StringStartsWith("properties", "{"))).get
    assert(!half.exact && half.narrowing.queueIds === Some(Set(1)))
  }

  test("EXPLAIN's description names each narrowing") {
    val n = RocketMQPushdown(queueIds = Some(Set(3, 1)), storeFromMs = Some(0L), limit = Some(10))
    assert(n.describe === "queueId IN (1, 3), storeTimestamp >= 1970-01-01T00:00:00Z, limit 10")
    assert(RocketMQPushdown().describe === "")
  }
}
