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

/**
 * Store-time cuts checked against store times: whatever the broker's time index answers, no row is
 * lost.
 */
class RocketMQStoreTimeCutSuite extends AnyFunSuite {

  // A queue's store times by offset (offsets 10 to 25): runs of messages stored in the same
  // millisecond, gaps.
  private val base = 10L
  private val times =
    Seq(100L, 100, 100, 103, 104, 104, 110, 110, 110, 110, 111, 120, 121, 121, 130, 131)
  private val (from, until) = (base, base + times.size)
  private def storeTime(offset: Long): Option[Long] = Some(times((offset - base).toInt))
  /** The offset a cut at `t` must have: the first stored at or after `t`. */
  private def truth(t: Long): Long = base + times.indexWhere(_ >= t) match {
    case o if o < base => until
    case o => o
  }

  test(
    "every answer the broker may give (nearest, not the first of a millisecond, 0 after a " +
      "failure) is checked") {
    for (t <- 95L to 135L; answer <- Seq(0L) ++ (from - 2 to until + 2)) {
      val lower = RocketMQStoreTimeCut.cut(t, from, until, answer, lower = true)(storeTime)
      val upper = RocketMQStoreTimeCut.cut(t, from, until, answer, lower = false)(storeTime)
      // Never a row lost: a lower cut at or before the truth, an upper cut at or after it.
      assert(lower <= truth(t), s"lower cut at $t, answer $answer: $lower > ${truth(t)}")
      assert(upper >= truth(t), s"upper cut at $t, answer $answer: $upper < ${truth(t)}")
      // And exact whenever the answer was wrong on the side that loses rows (or right).
      if (answer >= truth(t)) assert(lower === truth(t), s"lower cut at $t, answer $answer")
      if (answer <= truth(t)) assert(upper === truth(t), s"upper cut at $t, answer $answer")
    }
  }

  test("a store time that cannot be read leaves that side of the range uncut") {
    val unreadable: Long => Option[Long] = _ => None
    assert(RocketMQStoreTimeCut.cut(110, from, until, until, lower = true)(unreadable) === from)
    assert(RocketMQStoreTimeCut.cut(110, from, until, from, lower = false)(unreadable) === until)
    // An answer that needs no check is taken as it is.
    assert(RocketMQStoreTimeCut.cut(110, from, until, from, lower = true)(unreadable) === from)
    assert(RocketMQStoreTimeCut.cut(110, from, until, until, lower = false)(unreadable) === until)
  }
}
