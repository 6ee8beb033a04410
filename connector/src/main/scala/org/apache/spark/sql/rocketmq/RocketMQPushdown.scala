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

import org.apache.spark.sql.rocketmq.common.{RocketMQOffsetRange, RocketMQQueue}
import org.apache.spark.sql.sources._

/**
 * What a batch read's filters and limit narrow it to, before any message is read: the topics,
 * broker groups and queue ids kept, a range of queue offsets, a range of store times (turned into
 * offsets by the brokers' time index: a broker's store time rises with the offset), a lower bound
 * of born times (a message is stored after it is born, so this narrows the store time from below,
 * less the producers' clock skew the user allows: without it, no narrowing, as a producer's clock
 * may run ahead of its broker's; a born time does not rise with the offset: never exact), the tags
 * (the broker's tag filter, checked again by the client), and a limit of rows. Every range is half
 * open: `from` included, `until` excluded; times are epoch milliseconds.
 */
private[rocketmq] final case class RocketMQPushdown(
    topics: Option[Set[String]] = None,
    brokers: Option[Set[String]] = None,
    queueIds: Option[Set[Int]] = None,
    offsetFrom: Option[Long] = None,
    offsetUntil: Option[Long] = None,
    storeFromMs: Option[Long] = None,
    storeUntilMs: Option[Long] = None,
    bornFromMs: Option[Long] = None,
    tags: Option[Set[String]] = None,
    limit: Option[Int] = None) {

  /** Both narrowings at once. */
  def and(other: RocketMQPushdown): RocketMQPushdown = {
    def both[T](a: Option[Set[T]], b: Option[Set[T]]) = (a ++ b).reduceOption(_ intersect _)
    def max(a: Option[Long], b: Option[Long]): Option[Long] = (a ++ b).reduceOption((x, y) =>
      math.max(x, y))
    def min(a: Option[Long], b: Option[Long]): Option[Long] = (a ++ b).reduceOption((x, y) =>
      math.min(x, y))
    RocketMQPushdown(both(topics, other.topics), both(brokers, other.brokers),
      both(queueIds, other.queueIds),
      max(offsetFrom, other.offsetFrom), min(offsetUntil, other.offsetUntil),
      max(storeFromMs, other.storeFromMs), min(storeUntilMs, other.storeUntilMs),
      max(bornFromMs, other.bornFromMs), both(tags, other.tags),
      (limit ++ other.limit).reduceOption((x, y) => math.min(x, y)))
  }

  /** Whether `queue` can hold a row that passes. */
  def keeps(queue: RocketMQQueue): Boolean =
    topics.forall(_.contains(queue.topic)) && brokers.forall(_.contains(queue.brokerName)) &&
      queueIds.forall(_.contains(queue.queueId))

  /** The lower bound of store times: the pushed one, or the born-time bound (stored after born). */
  def storeTimeFromMs: Option[Long] = (storeFromMs ++ bornFromMs).reduceOption((x, y) =>
    math.max(x, y))

  /** `[from, until)` of a queue narrowed by the offset bounds (empty when they exclude it all). */
  def narrow(range: RocketMQOffsetRange): RocketMQOffsetRange = {
    val from = offsetFrom.fold(range.from)(math.max(range.from, _))
    val until = offsetUntil.fold(range.until)(math.min(range.until, _))
    range.copy(from = from, until = math.max(from, until))
  }

  /**
   * The tag expression of the read, given the user's (`*` or `a || b`): None when no tag can pass.
   */
  def tagExpression(userExpression: String): Option[String] = tags match {
    case None => Some(userExpression)
    case Some(pushed) =>
      val user = RocketMQPushdown.tagsOf(userExpression)
      val kept = user.fold(pushed)(pushed.intersect).toSeq.sorted
      if (kept.isEmpty) None else Some(kept.mkString(" || "))
  }

  /** For EXPLAIN: what narrows the read (empty when nothing does). */
  def describe: String = Seq(
    topics.map(t => s"topic IN (${t.toSeq.sorted.mkString(", ")})"),
    brokers.map(b => s"brokerName IN (${b.toSeq.sorted.mkString(", ")})"),
    queueIds.map(q => s"queueId IN (${q.toSeq.sorted.mkString(", ")})"),
    offsetFrom.map(o => s"queueOffset >= $o"), offsetUntil.map(o => s"queueOffset < $o"),
    storeFromMs.map(t => s"storeTimestamp >= ${java.time.Instant.ofEpochMilli(t)}"),
    storeUntilMs.map(t => s"storeTimestamp < ${java.time.Instant.ofEpochMilli(t)}"),
    bornFromMs.map(t =>
      s"storeTimestamp >= ${java.time.Instant.ofEpochMilli(t)} (from bornTimestamp, less " +
        "producerClockSkewMs)"),
    tags.map(t => s"tags IN (${t.toSeq.sorted.mkString(", ")})"),
    limit.map(n => s"limit $n")).flatten.mkString(", ")
}

private[rocketmq] object RocketMQPushdown {

  /**
   * One filter Spark offers: what it narrows the read to (if anything), and whether that is exact
   * (the read returns exactly the rows that pass it: Spark need not check it again).
   */
  final case class Translated(narrowing: RocketMQPushdown, exact: Boolean)

  /** Columns no row has null: a not-null filter on them passes every row. */
  private val NeverNull =
    Set("topic", "brokerName", "queueId", "queueOffset", "bornTimestamp", "storeTimestamp")

  /**
   * Translates `filter`; `tagsPushable` is false when the read's own filter is SQL (the broker then
   * takes no tag expression beside it); a lower bound of born times narrows the read only given
   * `producerClockSkewMs`.
   */
  def translate(filter: Filter, tagsPushable: Boolean, producerClockSkewMs: Option[Long] = None)
      : Option[Translated] = filter match {
    case And(left, right) =>
      (translate(left, tagsPushable, producerClockSkewMs),
        translate(right, tagsPushable, producerClockSkewMs)) match {
        case (Some(l), Some(r)) =>
          Some(Translated(l.narrowing.and(r.narrowing), l.exact && r.exact))
        case (Some(one), None) => Some(one.copy(exact = false))
        case (None, Some(one)) => Some(one.copy(exact = false))
        case _ => None
      }
    case IsNotNull(column) if NeverNull.contains(column) =>
      Some(Translated(RocketMQPushdown(), exact = true))
    case EqualTo(column, value) => equalTo(column, Seq(value), tagsPushable, producerClockSkewMs)
    case In(column, values) =>
      equalTo(column, values.toSeq.filter(_ != null), tagsPushable, producerClockSkewMs)
    case GreaterThanOrEqual(column, value) =>
      bound(column, value, lower = true, inclusive = true, producerClockSkewMs)
    case GreaterThan(column, value) =>
      bound(column, value, lower = true, inclusive = false, producerClockSkewMs)
    case LessThanOrEqual(column, value) => bound(column, value, lower = false, inclusive = true)
    case LessThan(column, value) => bound(column, value, lower = false, inclusive = false)
    case _ => None
  }

  private def equalTo(column: String, values: Seq[Any], tagsPushable: Boolean,
      producerClockSkewMs: Option[Long])
      : Option[Translated] = {
    def exactly(narrowing: RocketMQPushdown) = Some(Translated(narrowing, exact = true))
    column match {
      case "topic" => exactly(RocketMQPushdown(topics = Some(values.map(_.toString).toSet)))
      case "brokerName" => exactly(RocketMQPushdown(brokers = Some(values.map(_.toString).toSet)))
      case "queueId" => exactly(RocketMQPushdown(queueIds = Some(values.collect { case i: Int =>
          i
        }.toSet)))
      case "queueOffset" if values.size == 1 =>
        values.head match {
          case o: Long =>
            exactly(RocketMQPushdown(offsetFrom = Some(o), offsetUntil = Some(after(o))))
          case _ => None
        }
      case "queueOffset" if values.nonEmpty =>
        val offsets = values.collect { case o: Long => o }
        Some(Translated(RocketMQPushdown(offsetFrom = Some(offsets.min),
          offsetUntil = Some(after(offsets.max))),
          exact = false))
      case "storeTimestamp" if values.size == 1 =>
        for (from <- bound(column, values.head, lower = true, inclusive = true);
          until <- bound(column, values.head, lower = false, inclusive = true))
          yield Translated(from.narrowing.and(until.narrowing), exact = true)
      case "bornTimestamp" if values.size == 1 =>
        bound(column, values.head, lower = true, inclusive = true, producerClockSkewMs)
      case "tags" if tagsPushable && values.nonEmpty && values.forall(isPushableTag) =>
        exactly(RocketMQPushdown(tags = Some(values.map(_.toString).toSet)))
      case _ => None
    }
  }

  /**
   * The offset after `o`, saturating: no queue reaches offset Long.MaxValue, so "until
   * Long.MaxValue" keeps every message, and "from Long.MaxValue" none (where `o + 1` would wrap
   * round to the smallest Long).
   */
  private def after(o: Long): Long = if (o == Long.MaxValue) o else o + 1

  /** A tag the broker's tag expression can name: not empty, no `||`, not the wildcard. */
  private def isPushableTag(value: Any): Boolean = value match {
    case s: String => s.trim.nonEmpty && s == s.trim && !s.contains("||") && s != "*"
    case _ => false
  }

  /** A lower (`from`) or upper (`until`) bound on an ordered column. */
  private def bound(column: String, value: Any, lower: Boolean, inclusive: Boolean,
      producerClockSkewMs: Option[Long] = None): Option[Translated] =
    column match {
      case "queueOffset" =>
        value match {
          case o: Long =>
            // `>= o` starts at o, `> o` at o + 1; `< o` ends before o, `<= o` before o + 1.
            val edge = if (lower == inclusive) o else after(o)
            Some(Translated(
              if (lower) RocketMQPushdown(offsetFrom = Some(edge))
              else RocketMQPushdown(offsetUntil = Some(edge)),
              exact = true))
          case _ => None
        }
      case "storeTimestamp" =>
        micros(value).map { us =>
          val edge = millisEdge(us, lower, inclusive)
          Translated(
            if (lower) RocketMQPushdown(storeFromMs = Some(edge))
            else RocketMQPushdown(storeUntilMs = Some(edge)),
            exact = true)
        }
      case "bornTimestamp" if lower =>
        for (skewMs <-
            producerClockSkewMs;
          us <- micros(value))
          yield Translated(RocketMQPushdown(bornFromMs = Some(millisEdge(us, lower, inclusive) -
              skewMs)),
            exact = false)
      case _ => None
    }

  /**
   * A bound in microseconds (Spark's timestamps) as one in the brokers' milliseconds: the first
   * millisecond in the range for a lower bound, the first one past it for an upper bound. A store
   * time `s` ms is `s * 1000` microseconds: `>= us` is `s >= ceil(us / 1000)`, `> us` is `s >=
   * floor(us / 1000) + 1`, `< us` is `s < ceil(us / 1000)`, `<= us` is `s < floor(us / 1000) + 1`.
   */
  private[rocketmq] def millisEdge(us: Long, lower: Boolean, inclusive: Boolean): Long =
    if (lower == inclusive) Math.floorDiv(us, 1000L) + (if (Math.floorMod(us, 1000L) != 0) 1 else 0)
    else Math.floorDiv(us, 1000L) + 1

  /** A timestamp value as Spark hands it to a filter, in microseconds since the epoch. */
  private def micros(value: Any): Option[Long] = value match {
    case t: java.sql.Timestamp =>
      Some(Math.multiplyExact(Math.floorDiv(t.getTime, 1000L), 1000000L) + t.getNanos / 1000)
    case i: java.time.Instant =>
      Some(Math.multiplyExact(i.getEpochSecond, 1000000L) + i.getNano / 1000)
    case _ => None
  }

  /** The tags named by a tag expression (`a || b`), None for all (`*`). */
  def tagsOf(expression: String): Option[Set[String]] = {
    val parts = expression.split("\\|\\|").map(_.trim).filter(_.nonEmpty).toSet
    if (parts.isEmpty || parts.contains("*")) None else Some(parts)
  }
}
