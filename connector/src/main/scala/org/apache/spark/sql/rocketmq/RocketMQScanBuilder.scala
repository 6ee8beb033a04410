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

import org.apache.spark.sql.connector.read.{
  Scan, ScanBuilder, SupportsPushDownFilters, SupportsPushDownLimit
}
import org.apache.spark.sql.rocketmq.options.RocketMQOptions
import org.apache.spark.sql.sources.Filter

/**
 * Builds the scan, taking the filters and the limit Spark offers a batch read ([[RocketMQPushdown]]
 * says what each narrows): a filter the read answers exactly is reported pushed and Spark does not
 * check it again; one that only narrows the read (a born time, a set of offsets) is used and handed
 * back. Streaming reads are not offered filters by Spark: they read whole.
 */
private[rocketmq] class RocketMQScanBuilder(options: RocketMQOptions)
  extends ScanBuilder with SupportsPushDownFilters with SupportsPushDownLimit {

  private var narrowing = RocketMQPushdown()
  private var pushed: Array[Filter] = Array.empty

  override def pushFilters(filters: Array[Filter]): Array[Filter] = {
    val tagsPushable = options(RocketMQOptions.SqlFilter).isEmpty
    val skew = options(RocketMQOptions.ProducerClockSkewMs)
    val translated = filters.map(f => f -> RocketMQPushdown.translate(f, tagsPushable, skew))
    narrowing = translated.flatMap(_._2).map(_.narrowing).foldLeft(narrowing)(_ and _)
    pushed = translated.collect { case (f, Some(t)) if t.exact => f }
    // A not-null filter on the tags passes exactly the rows a tag filter keeps.
    val tagsImplied: Filter => Boolean = {
      case org.apache.spark.sql.sources.IsNotNull("tags") => narrowing.tags.isDefined
      case _ => false
    }
    pushed = pushed ++ filters.filter(tagsImplied)
    filters.filterNot(pushed.contains)
  }

  override def pushedFilters(): Array[Filter] = pushed

  /**
   * Each task stops after `limit` rows, and a read the broker does not filter reads that many
   * offsets a queue.
   */
  override def pushLimit(limit: Int): Boolean = {
    narrowing = narrowing.and(RocketMQPushdown(limit = Some(limit)))
    true
  }

  /** Spark still applies the limit over all tasks. */
  override def isPartiallyPushed(): Boolean = true

  override def build(): Scan = new RocketMQScan(options, narrowing, pushed.toSeq)
}
