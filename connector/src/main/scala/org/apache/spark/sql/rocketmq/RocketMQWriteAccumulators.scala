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

import org.apache.spark.SparkContext
import org.apache.spark.sql.rocketmq.producer.RocketMQMessageSender
import org.apache.spark.util.LongAccumulator

/**
 * What a write's tasks tell the driver once all their sends are done. Spark reads a writer's task
 * metrics before `DataWriter.commit()`, where the last sends go out and timed-out ones are sent
 * again: the counts of resends, failures and possible duplicates are complete only here, as the
 * acknowledgement times are.
 */
private[rocketmq] final class RocketMQWriteAccumulators private (
    val sendAck: RocketMQLatencyAccumulator, retries: LongAccumulator, failed: LongAccumulator,
    duplicates: LongAccumulator)
  extends Serializable {

  /** In a task whose sends are all done: what its sender measured and counted. */
  def add(sender: RocketMQMessageSender): Unit = {
    sender.ackLatency(sendAck.add)
    retries.add(sender.retries)
    failed.add(sender.failedSends)
    duplicates.add(sender.possibleDuplicates)
  }

  private def counters = Seq(RocketMQCustomMetrics.SendRetries -> retries,
    RocketMQCustomMetrics.FailedSends -> failed,
    RocketMQCustomMetrics.PossibleDuplicates -> duplicates)

  /** On the driver: the counts of the tasks done so far, by metric name. */
  def counts: Map[String, Long] = counters.map { case (name, acc) => name -> acc.sum }.toMap

  /**
   * On the driver: the counts since the last call, by metric name, then forgotten (one batch's).
   */
  def drainCounts(): Map[String, Long] = synchronized {
    val taken = counts
    counters.foreach(_._2.reset())
    taken
  }
}

private[rocketmq] object RocketMQWriteAccumulators {

  /**
   * New accumulators, registered (unnamed: not listed among a stage's accumulators) with the
   * driver.
   */
  def register(): RocketMQWriteAccumulators = {
    val sc = SparkContext.getOrCreate()
    def counter(): LongAccumulator = {
      val acc = new LongAccumulator
      sc.register(acc)
      acc
    }
    new RocketMQWriteAccumulators(RocketMQLatencyAccumulator.register(), counter(), counter(),
      counter())
  }
}
