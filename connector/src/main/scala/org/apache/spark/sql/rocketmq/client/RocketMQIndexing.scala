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

package org.apache.spark.sql.rocketmq.client

import org.apache.rocketmq.client.exception.MQBrokerException
import org.apache.rocketmq.client.impl.MQClientAPIImpl

import org.apache.spark.sql.rocketmq.common.RocketMQRetry

/**
 * How far a broker has indexed its commit log. A broker acknowledges a send once the message is in
 * its commit log and adds it to its queue's index (the consume queue) a moment later, longer on a
 * busy machine; a restarted broker rebuilds the tail of its indexes from its log before it has them
 * all. Queue offsets count indexed messages only, so a broker's word on where a queue ends covers
 * every message it acknowledged only once it has indexed what it had stored when asked.
 */
private[rocketmq] object RocketMQIndexing {

  /** The pause between two looks at how far a broker has indexed. */
  val PollMs = 10L

  /**
   * Where the commit log of the broker at `address` ends now; None from a broker that cannot tell
   * (RocketMQ 4.x).
   */
  def storedEnd(api: MQClientAPIImpl, address: String, timeoutMs: Long): Option[Long] =
    try Some(api.getBrokerHAStatus(address, timeoutMs).getMasterCommitLogMaxOffset)
    catch { case e: MQBrokerException if !RocketMQRetry.isRetryable(e) => None }

  /**
   * Bytes at the end of its commit log that the broker at `address` has not indexed yet; None from
   * a broker that refuses to tell (to a user without admin rights).
   */
  def behindBytes(api: MQClientAPIImpl, address: String, timeoutMs: Long): Option[Long] =
    try Some(Option(api.getBrokerRuntimeInfo(address, timeoutMs).getTable.get(
        "dispatchBehindBytes")).fold(0L)(_.toLong))
    catch { case e: MQBrokerException if !RocketMQRetry.isRetryable(e) => None }

  /**
   * Waits until the broker has indexed every message it had stored when first asked, or `budgetMs`
   * passes; returns the bytes still unindexed then (0: all indexed, or the broker cannot tell).
   * Nothing behind, asked after the caller began, already covers every message acknowledged before:
   * one request, where a broker far away costs a round trip each. Otherwise the log's end then is
   * the target, and each look after it asks where the log ends (`storedEnd`, None keeping the
   * target), then how far behind its end indexing is (`behind`): what is indexed is at least the
   * first minus the second. `onPoll` runs before each pause.
   */
  def await(budgetMs: Long)(storedEnd: () => Option[Long], behind: () => Option[Long],
      onPoll: () => Unit): Long = {
    if (behind().forall(_ <= 0)) return 0L
    storedEnd().fold(0L) { target =>
      val begin = System.nanoTime()
      var end = target
      var lag = behind().getOrElse(0L)
      while (end - lag < target) {
        if ((System.nanoTime() - begin) / 1000000 > budgetMs) return target - (end - lag)
        onPoll()
        Thread.sleep(PollMs)
        end = storedEnd().getOrElse(target)
        lag = behind().getOrElse(0L)
      }
      0L
    }
  }
}
