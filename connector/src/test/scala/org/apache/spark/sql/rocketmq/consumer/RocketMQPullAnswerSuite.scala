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

package org.apache.spark.sql.rocketmq.consumer

import org.apache.rocketmq.client.consumer.PullStatus
import org.apache.rocketmq.client.consumer.PullStatus._
import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.rocketmq.consumer.RocketMQPullAnswer._
import org.apache.spark.sql.rocketmq.errors.RocketMQErrorKinds.DataLossReason._

/**
 * What each broker answer to a pull means, case by case: one row per case of the classification.
 */
class RocketMQPullAnswerSuite extends AnyFunSuite {

  /**
   * A reader of [100, 200) at offset 100 (or of an open range), unfiltered, the master's index not
   * yet awaited.
   */
  private def at(offset: Long = 100L, open: Boolean = false, filtered: Boolean = false,
      indexed: Boolean = false, compacted: Boolean = false) =
    Position(offset, if (open) RocketMQQueuePuller.Open else 200L, open, filtered, indexed,
      compacted)

  private def answer(status: PullStatus, next: Long, min: Long = 0L, max: Long = 500L) =
    RocketMQPullAnswer(status, next, min, max)

  /** (case, answer, position, whether the group has a master, what it means). */
  private val table: Seq[(String, RocketMQPullAnswer, Position, Option[Boolean], Kind)] = Seq(
    ("messages", answer(FOUND, 132), at(), None, Messages),
    ("a replica's pull again", answer(NO_MATCHED_MSG, 100), at(), None, PullAgain),
    ("an open range's end", answer(NO_NEW_MSG, 100), at(open = true), None, AtEnd),
    ("no new message: who says so is asked first", answer(NO_NEW_MSG, 100), at(), None, AskRoute),
    ("an illegal offset: who says so is asked first", answer(OFFSET_ILLEGAL, 100), at(), None,
      AskRoute),
    ("unfiltered, no match: who says so is asked first", answer(NO_MATCHED_MSG, 132), at(), None,
      AskRoute),
    ("filtered, no match: nothing to ask", answer(NO_MATCHED_MSG, 132), at(filtered = true), None,
      Skip(132)),
    ("a replica's end, its group without master", answer(NO_NEW_MSG, 90, max = 90), at(),
      Some(false),
      ReplicaTrailing),
    ("a replica's illegal offset, no master", answer(OFFSET_ILLEGAL, 90), at(), Some(false),
      ReplicaTrailing),
    ("a replica's unfiltered no match, no master", answer(NO_MATCHED_MSG, 132), at(), Some(false),
      ReplicaTrailing),
    ("a master's end before the offset, index not awaited", answer(NO_NEW_MSG, 90, max = 90), at(),
      Some(true),
      AwaitIndexing),
    ("a master's illegal offset past the end, index not awaited",
      answer(OFFSET_ILLEGAL, 90, max = 90), at(),
      Some(true), AwaitIndexing),
    ("an open queue that went back", answer(NO_NEW_MSG, 20, min = 5, max = 20),
      at(open = true, indexed = true),
      Some(true), WentBack(TopicRecreated(20), 5)),
    ("the broker removing what it skipped", answer(NO_MATCHED_MSG, 132), at(), Some(true),
      Lost(100, 132, BeingRemoved, 132)),
    ("removed past the range's end", answer(NO_MATCHED_MSG, 232), at(), Some(true),
      Lost(100, 200, BeingRemoved, 232)),
    ("a consume queue gone ahead", answer(NO_NEW_MSG, 150), at(), Some(true),
      Lost(100, 150, ConsumeQueueGone, 150)),
    ("a compacted queue's emptied file", answer(NO_NEW_MSG, 150), at(compacted = true),
      Some(true), Skip(150)),
    ("a truncated queue", answer(NO_NEW_MSG, 90, max = 90), at(indexed = true), Some(true),
      Lost(100, 200, Truncated(90), 200)),
    ("expired offsets", answer(OFFSET_ILLEGAL, 150, min = 150), at(), Some(true),
      Lost(100, 150, Expired(150), 150)),
    ("expired past the range's end", answer(OFFSET_ILLEGAL, 250, min = 250), at(), Some(true),
      Lost(100, 200, Expired(250), 250)),
    ("a recreated queue, closed range", answer(OFFSET_ILLEGAL, 0, max = 40), at(indexed = true),
      Some(true),
      Lost(100, 200, TopicRecreated(40), 200)))

  table.foreach { case (name, given, position, hasMaster, expected) =>
    test(s"$name: ${given.status} next ${given.next} at ${position.offset} -> $expected") {
      assert(given.classify(position, hasMaster) === expected)
    }
  }

  test("an answer whose meaning depends on the route is classified again once the route is known") {
    val lost = answer(NO_NEW_MSG, 150)
    assert(lost.classify(at(), None) === AskRoute)
    assert(lost.classify(at(), Some(true)) === Lost(100, 150, ConsumeQueueGone, 150))
    assert(lost.classify(at(), Some(false)) === ReplicaTrailing)
    // Whatever the route says, an answer that needs none never asks.
    Seq(Some(true), Some(false), None).foreach { master =>
      assert(answer(FOUND, 132).classify(at(), master) === Messages)
      assert(answer(NO_MATCHED_MSG, 100).classify(at(), master) === PullAgain)
    }
  }
}
