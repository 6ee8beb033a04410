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

package org.apache.spark.sql.rocketmq.producer

import org.apache.rocketmq.client.producer.SendResult

/**
 * Where a sender of an exactly-once write's half messages records each one the broker stored: the
 * sender knows only this, not the transaction that commits them.
 */
private[rocketmq] trait RocketMQHalfMessageLog {

  /** The place among the task's rows of the half message prepared last. */
  def lastPrepared: Int

  /**
   * Half message `seq` is stored where `result` says (called from send callbacks, on any thread);
   * `keyed`: its commit must keep its place in its queue (a sharding key).
   */
  def record(result: SendResult, seq: Int, keyed: Boolean): Unit
}
