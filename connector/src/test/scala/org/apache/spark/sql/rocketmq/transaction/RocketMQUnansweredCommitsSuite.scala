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

package org.apache.spark.sql.rocketmq.transaction

import scala.collection.mutable.ArrayBuffer

import org.scalatest.funsuite.AnyFunSuite

/**
 * How commits whose answer never came are looked up: none holds back the others, none waits past
 * its budget.
 */
class RocketMQUnansweredCommitsSuite extends AnyFunSuite {

  private val SecondNs = 1000000000L

  /** One round over `commits`, answered by `state`; returns (asked, found, left) in order. */
  private def round(commits: RocketMQUnansweredCommits[String], nowNs: Long)(
      state: String => Option[Boolean]) = {
    val asked, found, left = ArrayBuffer[String]()
    commits.round(nowNs) { c => asked += c; state(c) }(found = found += _, left = left += _)
    (asked.toSeq, found.toSeq, left.toSeq)
  }

  test(
    "a commit the broker dropped (never found) does not hold back those it carried out behind it") {
    val commits = new RocketMQUnansweredCommits[String](budgetMs = 60000, missesPerRound = 64)
    Seq("dropped", "a", "b", "c").foreach(commits.add(_, 0L))
    val (asked, found, left) = round(commits, SecondNs)(c => Some(c != "dropped"))
    assert(asked === Seq("dropped", "a", "b", "c"))
    assert(found === Seq("a", "b", "c") && left.isEmpty)
    assert(commits.size === 1)
  }

  test("commits not found go to the back: rounds of few misses still come round to every commit") {
    val commits = new RocketMQUnansweredCommits[String](budgetMs = 60000, missesPerRound = 2)
    Seq("x", "y", "z", "w", "v").foreach(commits.add(_, 0L))
    val notYet: String => Option[Boolean] = _ => Some(false)
    assert(round(commits, SecondNs)(notYet)._1 === Seq("x", "y"))
    assert(round(commits, 2 * SecondNs)(notYet)._1 === Seq("z", "w"))
    assert(round(commits, 3 * SecondNs)(notYet)._1 === Seq("v", "x"))
    // Now the broker has carried them out: one round finds them all, whatever the misses before.
    val (_, found, _) = round(commits, 4 * SecondNs)(_ => Some(true))
    assert(found.sorted === Seq("v", "w", "x", "y", "z") && commits.isEmpty)
  }

  test(
    "a broker that cannot be asked stops the round; past the budget every commit is left, asked " +
      "or not") {
    val commits = new RocketMQUnansweredCommits[String](budgetMs = 5000, missesPerRound = 64)
    commits.add("early", 0L)
    commits.add("late", 3 * SecondNs)
    val (asked, found, left) = round(commits, SecondNs)(_ => None)
    assert(asked === Seq("early") && found.isEmpty && left.isEmpty && commits.size === 2)
    // 6 s: "early" (asked last round, so now behind "late") is past its 5 s budget: left unasked,
    // as the round stopped at "late", which is within its budget and stays.
    val (asked2, _, left2) = round(commits, 6 * SecondNs)(_ => None)
    assert(asked2 === Seq("late") && left2 === Seq("early") && commits.size === 1)
  }

  test("a commit whose request never reached the broker is asked again; one that may have is not") {
    import org.apache.rocketmq.remoting.exception._
    assert(RocketMQTransactionEnd.surelyNotSent(new RemotingConnectException("127.0.0.1:1")))
    // Also how the client fails requests that went out when their connection closes: they may have
    // been carried out.
    assert(!RocketMQTransactionEnd.surelyNotSent(new RemotingSendRequestException("127.0.0.1:1")))
    assert(RocketMQTransactionEnd.surelyNotSent(new RemotingTooMuchRequestException("too many")))
    assert(
      !RocketMQTransactionEnd.surelyNotSent(new RemotingTimeoutException("no answer in 30000 ms")))
    assert(!RocketMQTransactionEnd.surelyNotSent(new IllegalStateException("connection closed")))
  }
}
