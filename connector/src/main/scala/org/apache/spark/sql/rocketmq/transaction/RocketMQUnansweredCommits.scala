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

/**
 * Commit requests whose answer never came, each waiting to be found in its broker's index of keys:
 * found, it is confirmed; not found within `budgetMs` of its time-out, it is left to the broker's
 * check-back.
 *
 * A broker does not carry out every request it read: one that waited too long in its queue (3 s by
 * default, as after a long pause) is dropped with an answer nobody hears. Such a commit is never
 * found, and it must not hold back the others: a round asks about at most `missesPerRound` commits
 * that are not found, and those go to the back, behind the ones not asked yet. A round stops asking
 * at the first commit the broker cannot be asked about now (it is down: the others would fail the
 * same way). Each round leaves every commit past its budget, asked or not.
 */
private[transaction] final class RocketMQUnansweredCommits[A](budgetMs: Long, missesPerRound: Int) {
  require(missesPerRound > 0, "missesPerRound must be positive")

  /** Each waiting commit, and when its answer timed out (System.nanoTime). */
  private val waiting = new java.util.ArrayDeque[(A, Long)]()

  def add(commit: A, timedOutNs: Long): Unit = waiting.add((commit, timedOutNs))
  def isEmpty: Boolean = waiting.isEmpty
  def size: Int = waiting.size

  /**
   * One round of look-ups. `lookUp` answers Some(true) when the commit is in its topic, Some(false)
   * when the broker says it is not (yet), None when the broker cannot be asked now; `found` and
   * `left` hear of the commits confirmed and of those given up to the broker.
   */
  def round(nowNs: Long)(lookUp: A => Option[Boolean])(found: A => Unit, left: A => Unit): Unit = {
    val budgetNs = budgetMs * 1000000L
    val notAsked, missed = ArrayBuffer[(A, Long)]()
    var misses = 0
    var reachable = true
    while (!waiting.isEmpty) {
      val entry @ (commit, timedOutNs) = waiting.poll()
      val expired = nowNs - timedOutNs > budgetNs
      if (reachable && misses < missesPerRound) {
        lookUp(commit) match {
          case Some(true) => found(commit)
          case answer =>
            if (answer.isEmpty) reachable = false
            misses += 1
            if (expired) left(commit) else missed += entry
        }
      } else if (expired) left(commit)
      else notAsked += entry
    }
    notAsked.foreach(waiting.add)
    missed.foreach(waiting.add)
  }
}
