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

import org.apache.spark.SparkThrowable
import org.apache.spark.sql.rocketmq.common.{
  RocketMQOffsetRangeLimit, RocketMQQueue, RocketMQQueueRange
}
import org.apache.spark.sql.rocketmq.common.RocketMQOffsetRangeLimit._
import org.apache.spark.sql.rocketmq.options.RocketMQOffsetsJson

/** Per-queue JSON, checkpoint offsets and resolving start/end limits against queue ranges. */
class RocketMQOffsetsSuite extends AnyFunSuite {

  private def errorOf(body: => Any): RocketMQInvalidInputException =
    intercept[RocketMQInvalidInputException](body)

  private val q0 = RocketMQQueue("t", "b", 0)
  private val q1 = RocketMQQueue("t", "b", 1)

  test("offsets JSON round trip, and each shape error names its sub-condition and details") {
    val offsets = Map(q0 -> 1L, q1 -> 2L, RocketMQQueue("u", "c", 3) -> 4L)
    val json = RocketMQOffsetsJson.format(offsets)
    assert(json === """{"t":{"b":{"0":1,"1":2}},"u":{"c":{"3":4}}}""")
    assert(RocketMQOffsetsJson.parseOption("x", json) === offsets)
    for ((bad, sub, detail) <- Seq(
        ("{", "NOT_JSON", "not valid JSON"),
        ("[]", "NOT_AN_OBJECT", "not a JSON object"),
        ("""{"t":1}""", "TOPIC_NOT_AN_OBJECT", "topic 't' does not map to an object"),
        ("""{"t":{"b":[1]}}""", "BROKER_NOT_AN_OBJECT",
          "broker 'b' of topic 't' does not map to an object"),
        ("""{"t":{"b":{"x":1}}}""", "QUEUE_ID_NOT_AN_INTEGER",
          "queue id 'x' of broker 'b' is not an integer"),
        ("""{"t":{"b":{"0":1.5}}}""", "VALUE_NOT_AN_INTEGER",
          "the value of queue t/b/0 is 1.5, not an integer"))) {
      val e = errorOf(RocketMQOffsetsJson.parseOption("startingOffsets", bad))
      assert(e.getCondition === s"ROCKETMQ_INVALID_OFFSETS_JSON.$sub")
      assert(e.getMessage.contains(detail) && e.getMessage.contains("'startingOffsets'") &&
          e.getMessage.contains(s"'$bad'"), e.getMessage)
    }
  }

  test("streaming offsets carry a version that is checked") {
    val offset = RocketMQSourceOffset(Map(q0 -> 3L, q1 -> 4L))
    assert(offset.json() === """{"version":1,"offsets":{"t":{"b":{"0":3,"1":4}}}}""")
    assert(RocketMQSourceOffset.parse(offset.json()) === offset)
    val newer = errorOf(RocketMQSourceOffset.parse("""{"version":2,"offsets":{}}"""))
    assert(newer.getCondition === "ROCKETMQ_INVALID_CHECKPOINT_OFFSET.UNSUPPORTED_VERSION")
    assert(newer.getMessage.contains("version 2") && newer.getMessage.contains("versions 1 to 1"),
      newer.getMessage)
    assert(errorOf(RocketMQSourceOffset.parse("""{"t":{"b":{"0":3}}}""")).getMessage.contains(
      "no integer 'version'"))
    val shape =
      errorOf(RocketMQSourceOffset.parse("""{"version":1,"offsets":{"t":{"b":{"0":"x"}}}}"""))
    assert(shape.getCondition === "ROCKETMQ_INVALID_CHECKPOINT_OFFSET.VALUE_NOT_AN_INTEGER")
    assert(shape.getMessageParameters.get("queue") === "t/b/0")
    assert(errorOf(RocketMQSourceOffset.parse("nope")).getCondition ===
      "ROCKETMQ_INVALID_CHECKPOINT_OFFSET.NOT_JSON")
    assert(errorOf(RocketMQSourceOffset.parse("""{"version":1}""")).isInstanceOf[SparkThrowable])
  }

  test("resolving limits against queue ranges (no broker request for offsets)") {
    val ranges = Map(q0 -> RocketMQQueueRange(10, 20), q1 -> RocketMQQueueRange(0, 5))
    def resolve(limit: RocketMQOffsetRangeLimit, isStart: Boolean) =
      RocketMQOffsetResolver.resolve(limit, ranges, isStart, fail("no broker request expected"))
    assert(resolve(Earliest, isStart = true) === Map(q0 -> 10L, q1 -> 0L))
    assert(resolve(Latest, isStart = false) === Map(q0 -> 20L, q1 -> 5L))
    assert(resolve(Specific(Map(q0 -> 12L)), isStart = true) === Map(q0 -> 12L, q1 -> 0L))
    assert(resolve(Specific(Map(q0 -> 12L)), isStart = false) === Map(q0 -> 12L, q1 -> 5L))
    assert(resolve(Specific(Map(q1 -> LatestOffset, q0 -> EarliestOffset)), isStart = false) ===
      Map(q0 -> 10L, q1 -> 5L))
    val e = errorOf(resolve(Specific(Map(RocketMQQueue("t", "b", 9) -> 0L)), isStart = true))
    assert(e.getCondition === "ROCKETMQ_UNKNOWN_QUEUE")
    assert(
      e.getMessage.contains("t/b/9") && e.getMessage.contains("b/0, b/1") &&
        e.getMessage.contains("'startingOffsets'"))
  }
}
