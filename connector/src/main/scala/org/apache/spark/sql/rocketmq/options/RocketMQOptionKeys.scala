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

package org.apache.spark.sql.rocketmq.options

import java.util.Locale
import java.util.concurrent.ConcurrentHashMap

import org.slf4j.LoggerFactory

import org.apache.spark.sql.rocketmq.common.RocketMQConnection
import org.apache.spark.sql.rocketmq.errors.RocketMQErrors

/**
 * The keys of a query's or a catalog's options, checked against [[RocketMQOptions.registry]].
 * Spark hands a source every key it was given, so a misspelt option would otherwise do nothing:
 * `startingOffset=earliest` would start a stream at the latest offsets. A key close to a known one
 * ([[nearMiss]]) is refused, naming both; any other unknown key is logged at WARN, once per JVM,
 * and ignored. Keys Spark passes itself are left alone.
 */
private[rocketmq] object RocketMQOptionKeys {

  private val log = LoggerFactory.getLogger(getClass)

  private def fold(key: String): String = key.toLowerCase(Locale.ROOT)

  private lazy val known: Seq[String] = RocketMQOptions.registry.map(_.key)
  private lazy val knownFolded: Set[String] = known.map(fold).toSet

  /**
   * Keys Spark puts among a source's or sink's options (`load(path)`, `start(path)`,
   * `checkpointLocation`, `queryName(...)`, asynchronous progress tracking). Spark's internal keys
   * begin with `_` (`__partition_columns`; `_asyncProgressTrackingOverrideSinkSupportCheck`, which
   * the Python package sets in real-time mode).
   */
  private val SparkKeys: Set[String] = Set("path", "paths", "checkpointLocation", "queryName",
    "asyncProgressTrackingEnabled", "asyncProgressTrackingCheckpointIntervalMs").map(fold)

  private def isSparks(key: String): Boolean = key.startsWith("_") || SparkKeys(fold(key))

  /** Options whose values an error never shows. */
  private lazy val secret: Set[String] =
    Set(RocketMQOptions.SecretKey.key, RocketMQOptions.SecurityToken.key)

  private def looksSecret(key: String): Boolean =
    Seq("secret", "token", "password").exists(word => fold(key).contains(word))

  /**
   * Refuses the first unknown key (in key order) that is a near miss of a known one, then warns
   * about the other unknown keys not warned about before.
   */
  def check(options: Map[String, String]): Unit = {
    val unknown = options.keys.filterNot(k => knownFolded(fold(k)) || isSparks(k)).toSeq.sorted
    for (key <- unknown; meant <- nearMiss(key)) {
      val hidden = secret(meant) || looksSecret(key)
      val shown = if (hidden) RocketMQConnection.Hidden else options(key)
      throw RocketMQErrors.optionNotAllowed(key, "UNKNOWN_OPTION", "known" -> meant,
        "value" -> shown)
    }
    val fresh = unknown.filter(k => warned.size >= MaxWarned || warned.add(fold(k)))
    if (fresh.nonEmpty) {
      log.warn(s"Ignoring options the RocketMQ connector does not know: ${fresh.mkString(", ")} " +
        "(its options are listed in docs/reference/options.md)")
    }
  }

  /**
   * Unknown keys warned about, lower case: a stream's write is planned, and its options checked,
   * again for every micro-batch. Past [[MaxWarned]] keys, every unknown key is warned about each
   * time rather than never.
   */
  private val warned = ConcurrentHashMap.newKeySet[String]()
  private val MaxWarned = 1000

  /**
   * The known key that unknown `key` most likely misspells, if any, comparing without case: one at
   * most two edits away (one for keys of up to 5 characters), a swap of neighbours counting as one
   * (`startingOffset`, `pullTimeout`, `topics`); one that `key` cuts short or extends, sharing at
   * least 6 characters (`readAhead`, `consumerGroupName`); or one that `key` puts after a dotted
   * prefix (`rocketmq.nameServer`). The closest wins; on a tie, the first in the registry.
   */
  def nearMiss(key: String): Option[String] = {
    val k = fold(key)
    val close = known.map(o => (o, fold(o))).flatMap { case (original, o) =>
      val shorter = math.min(k.length, o.length)
      val d = distance(k, o)
      val edited = d <= (if (shorter <= 5) 1 else 2)
      val cutOrExtended = shorter >= 6 && (k.startsWith(o) || o.startsWith(k))
      if (edited || cutOrExtended || k.endsWith("." + o)) Some((original, d)) else None
    }
    if (close.isEmpty) None else Some(close.minBy(_._2)._1)
  }

  /** Edits (insertions, deletions, substitutions, swaps of neighbours) that turn `a` into `b`. */
  private def distance(a: String, b: String): Int = {
    val d = Array.tabulate(a.length + 1, b.length + 1) { (i, j) =>
      if (i == 0) j else if (j == 0) i else 0
    }
    for (i <- 1 to a.length; j <- 1 to b.length) {
      val cost = if (a(i - 1) == b(j - 1)) 0 else 1
      d(i)(j) = math.min(math.min(d(i - 1)(j) + 1, d(i)(j - 1) + 1), d(i - 1)(j - 1) + cost)
      if (i > 1 && j > 1 && a(i - 1) == b(j - 2) && a(i - 2) == b(j - 1)) {
        d(i)(j) = math.min(d(i)(j), d(i - 2)(j - 2) + 1)
      }
    }
    d(a.length)(b.length)
  }
}
