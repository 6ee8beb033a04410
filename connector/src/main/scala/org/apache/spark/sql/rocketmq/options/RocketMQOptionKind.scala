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

import scala.util.control.NonFatal

import org.apache.rocketmq.client.AccessChannel
import org.apache.rocketmq.common.filter.ExpressionType
import org.apache.rocketmq.filter.FilterFactory

import org.apache.spark.sql.rocketmq.common.{
  RocketMQExpectedGroups, RocketMQOffsetRangeLimit, RocketMQQueue
}
import org.apache.spark.sql.rocketmq.errors.RocketMQErrors

/**
 * The kind of value an option takes: how its text is parsed and checked, how the option reference
 * describes it, and how a default is written there (`render` gives text that parses back to the
 * same value). `name` is what the Python package's keyword table gives as the kind of each keyword.
 */
private[rocketmq] sealed abstract class RocketMQOptionKind[T](val name: String,
    val description: String) {

  /** Parses a value given for `key` (already trimmed); a bad one is an error naming both. */
  def parse(key: String, value: String): T

  def render(value: T): String = value.toString

  /** Names and expressions: an empty value counts as not set. Anything else: empty is invalid. */
  def emptyIsUnset: Boolean = false

  protected def invalid(key: String, value: String, sub: String, details: (String, String)*)
      : Nothing =
    throw RocketMQErrors.invalidOption(key, value, sub, details: _*)
}

private[rocketmq] object RocketMQOptionKind {

  /**
   * A whole decimal integer, or None (what Scala 2.13's `toIntOption` does; the 2.12 build has
   * none).
   */
  def parseInt(text: String): Option[Int] =
    try Some(Integer.parseInt(text))
    catch { case _: NumberFormatException => None }

  /** A whole decimal long, or None. */
  def parseLong(text: String): Option[Long] =
    try Some(java.lang.Long.parseLong(text))
    catch { case _: NumberFormatException => None }

  /** Free text such as a tag or SQL92 expression; the broker checks it. */
  case object Text extends RocketMQOptionKind[String]("text", "text") {
    override def parse(key: String, value: String): String = value
    override def render(value: String): String = s""""$value""""
    override def emptyIsUnset: Boolean = true
  }

  /**
   * An SQL92 expression over message properties, compiled here with RocketMQ's own compiler: a
   * broker that cannot compile one does not fail the pull, it matches every message (checked in
   * RocketMQ 5.5: its filter data is then null, and a null filter matches), so a typo would return
   * unfiltered data.
   */
  case object Sql92 extends RocketMQOptionKind[String]("sql92", "SQL92 expression") {
    override def parse(key: String, value: String): String = {
      try FilterFactory.INSTANCE.get(ExpressionType.SQL92).compile(value)
      catch {
        case NonFatal(e) =>
          // The compiler's own first line (e.g. where it stopped), without what it expected
          // instead.
          val innermost = Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).toSeq.last
          val reason =
            Option(innermost.getMessage).flatMap(_.linesIterator.map(_.trim).find(_.nonEmpty))
          invalid(key, value, "SQL92",
            "parseError" -> reason.getOrElse(innermost.getClass.getSimpleName))
      }
      value
    }
    override def emptyIsUnset: Boolean = true
  }

  /** `host:port`, or several separated by `;`. */
  case object NameServer
    extends RocketMQOptionKind[String]("name server", "host:port[;host:port…]") {
    override def parse(key: String, value: String): String = {
      val valid = value.split(';').forall { address =>
        val idx = address.lastIndexOf(':')
        idx > 0 && parseInt(address.substring(idx + 1)).exists(p => p > 0 && p < 65536)
      }
      if (!valid) invalid(key, value, "NAME_SERVER")
      value
    }
    override def emptyIsUnset: Boolean = true
  }

  private val TopicName = "^[%|a-zA-Z0-9_-]{1,127}$".r

  /** Checks one topic name; `value` is the option's whole value, for the message. */
  def checkTopicName(key: String, value: String, topic: String): String = {
    if (TopicName.findFirstIn(topic).isEmpty) {
      throw RocketMQErrors.invalidOption(key, value, "TOPIC_NAME", "topic" -> topic)
    }
    topic
  }

  /** One topic name. */
  case object OneTopic extends RocketMQOptionKind[String]("topic", "topic name") {
    override def parse(key: String, value: String): String = checkTopicName(key, value, value)
    override def emptyIsUnset: Boolean = true
  }

  /** One topic name, or several separated by `,` (distinct, in the order given). */
  case object Topics
    extends RocketMQOptionKind[Seq[String]]("topics", "topic name[,topic name…]") {
    override def parse(key: String, value: String): Seq[String] =
      value.split(',').map(_.trim).toSeq.map(checkTopicName(key, value, _)).distinct
    override def render(value: Seq[String]): String = value.mkString(",")
    override def emptyIsUnset: Boolean = true
  }

  /** A Java regular expression over topic names, compiled here so that a typo fails at once. */
  case object TopicPatternKind
    extends RocketMQOptionKind[java.util.regex.Pattern]("topic pattern",
      "Java regular expression") {
    override def parse(key: String, value: String): java.util.regex.Pattern =
      try java.util.regex.Pattern.compile(value)
      catch {
        case e: java.util.regex.PatternSyntaxException =>
          invalid(key, value, "TOPIC_PATTERN", "reason" -> e.getDescription)
      }
    override def render(value: java.util.regex.Pattern): String = value.pattern
    override def emptyIsUnset: Boolean = true
  }

  /** A name the whole of which must match `pattern`; `sub` is the error's sub-condition. */
  sealed abstract class Name(name: String, description: String, pattern: String, sub: String)
    extends RocketMQOptionKind[String](name, description) {
    private val whole = pattern.r
    override def parse(key: String, value: String): String = {
      if (whole.findFirstIn(value).isEmpty) invalid(key, value, sub)
      value
    }
    override def emptyIsUnset: Boolean = true
  }

  /** A consumer or producer group name. */
  case object Group
    extends Name("group name", "group name", "^[%|a-zA-Z0-9_-]{1,120}$", "GROUP_NAME")

  /** A namespace: what RocketMQ puts before `%` in the names of topics and groups. */
  case object NamespaceName
    extends Name("namespace", "namespace name", "^[a-zA-Z0-9_-]{1,64}$", "NAMESPACE")

  /** The broker groups a topic must be served by: at least a number of them, or these by name. */
  case object ExpectedGroupsKind extends RocketMQOptionKind[RocketMQExpectedGroups]("broker groups",
      "number >= 1, or broker group name[,broker group name…]") {
    private val groupName = "^[a-zA-Z0-9_%|.-]{1,127}$".r
    override def parse(key: String, value: String): RocketMQExpectedGroups = parseInt(value) match {
      case Some(n) if n >= 1 => RocketMQExpectedGroups.AtLeast(n)
      case Some(_) => invalid(key, value, "BROKER_GROUPS")
      case None =>
        val names = value.split(',').map(_.trim).toSeq
        if (names.exists(n => groupName.findFirstIn(n).isEmpty))
          invalid(key, value, "BROKER_GROUPS")
        RocketMQExpectedGroups.Named(names.distinct)
    }
    override def render(value: RocketMQExpectedGroups): String = value.render
    override def emptyIsUnset: Boolean = true
  }

  /** RocketMQ's access channel, LOCAL or CLOUD (case-insensitive). */
  case object AccessChannelKind
    extends RocketMQOptionKind[AccessChannel]("access channel", "LOCAL or CLOUD") {
    override def parse(key: String, value: String): AccessChannel =
      AccessChannel.values().find(_.name.equalsIgnoreCase(value)).getOrElse(invalid(key, value,
        "ACCESS_CHANNEL"))
  }

  /**
   * How long half messages of a transactional write wait for the driver: at least 2 seconds, as the
   * broker counts it in whole seconds and the driver commits within half of it. The brokers' check
   * interval sets the real floor (`RocketMQBrokerCheckSettings.requireCheckBacks`), once the write
   * knows it.
   */
  case object TransactionTimeout
    extends RocketMQOptionKind[Long]("transaction timeout", "duration >= 2s, e.g. 10min") {
    override def parse(key: String, value: String): Long = {
      val ms = Duration.parse(key, value)
      if (ms < 2000L) invalid(key, value, "TRANSACTION_TIMEOUT") else ms
    }
    override def render(ms: Long): String = Duration.render(ms)
  }

  /** Where a queue without a group offset starts: earliest or latest. */
  case object GroupFallbackKind
    extends RocketMQOptionKind[RocketMQOffsetRangeLimit]("group fallback",
      "earliest or latest") {
    override def parse(key: String, value: String): RocketMQOffsetRangeLimit =
      value.toLowerCase(Locale.ROOT) match {
        case "earliest" => RocketMQOffsetRangeLimit.Earliest
        case "latest" => RocketMQOffsetRangeLimit.Latest
        case _ => invalid(key, value, "GROUP_FALLBACK")
      }

    override def render(value: RocketMQOffsetRangeLimit): String = value match {
      case RocketMQOffsetRangeLimit.Earliest => "earliest"
      case _ => "latest"
    }
  }

  /**
   * What a write promises: `at_least_once` (the default) or `exactly_once` (RocketMQ transactions).
   */
  case object DeliveryGuaranteeKind
    extends RocketMQOptionKind[DeliveryGuarantee]("delivery guarantee",
      "at_least_once or exactly_once") {
    override def parse(key: String, value: String): DeliveryGuarantee =
      DeliveryGuarantee.all.find(_.name.equalsIgnoreCase(value)).getOrElse(invalid(key, value,
        "DELIVERY_GUARANTEE"))
  }

  /** An integer in `[min, max]`; `min` is 0 or 1. */
  sealed abstract class Integral[T](name: String, min: Long, max: Long, fromLong: Long => T)
    extends RocketMQOptionKind[T](name, if (min > 0) "positive integer" else "integer >= 0") {
    override def parse(key: String, value: String): T =
      parseLong(value).filter(v => v >= min && v <= max).map(fromLong).getOrElse(
        invalid(key, value, if (min > 0) "POSITIVE_INTEGER" else "NON_NEGATIVE_INTEGER",
          "max" -> max.toString))
  }

  case object PositiveInt extends Integral[Int]("positive int", 1, Int.MaxValue, _.toInt)
  case object NonNegativeInt extends Integral[Int]("non-negative int", 0, Int.MaxValue, _.toInt)
  case object PositiveLong extends Integral[Long]("positive long", 1, Long.MaxValue, identity)
  case object NonNegativeLong
    extends Integral[Long]("non-negative long", 0, Long.MaxValue, identity)

  case object Bool extends RocketMQOptionKind[Boolean]("boolean", "true or false") {
    override def parse(key: String, value: String): Boolean = value.toLowerCase(Locale.ROOT) match {
      case "true" => true
      case "false" => false
      case _ => invalid(key, value, "BOOLEAN")
    }
  }

  private val DurationText = "^(\\d+)\\s*(ms|s|m|min|h|d)?$".r
  private val DurationUnits =
    Seq("d" -> 86400000L, "h" -> 3600000L, "m" -> 60000L, "s" -> 1000L, "ms" -> 1L)

  /**
   * A duration such as `500ms`, `30s`, `15m`, `1h`, `2d`; a bare number is milliseconds. Parsed to
   * ms.
   */
  case object Duration extends RocketMQOptionKind[Long]("duration", "duration, e.g. 30s, 15m") {
    override def parse(key: String, value: String): Long = value.toLowerCase(Locale.ROOT) match {
      case DurationText(n, unit) =>
        val perUnit =
          if (unit == null) 1L else if (unit == "min") 60000L else DurationUnits.toMap.apply(unit)
        parseLong(n).filter(_ <= Long.MaxValue / perUnit).map(_ * perUnit).getOrElse(invalid(key,
          value, "DURATION"))
      case _ => invalid(key, value, "DURATION")
    }
    /** In the largest unit that divides it. */
    override def render(ms: Long): String =
      DurationUnits.collectFirst {
        case (unit, size) if ms != 0 && ms % size == 0 => s"${ms / size}$unit"
      }
        .getOrElse(s"${ms}ms")
  }

  /** A time as milliseconds since the epoch. */
  case object EpochMillis extends RocketMQOptionKind[Long]("epoch millis", "epoch milliseconds") {
    override def parse(key: String, value: String): Long =
      parseLong(value).filter(_ >= 0).getOrElse(invalid(key, value, "EPOCH_MILLIS"))
  }

  /** `earliest`, `latest` or per-queue JSON offsets with the -2/-1 sentinels; not yet resolved. */
  case object Offsets extends RocketMQOptionKind[RocketMQOffsetRangeLimit]("offsets",
      """"earliest", "latest", or JSON {"topic":{"broker":{"0":23}}}""") {
    import RocketMQOffsetRangeLimit._

    override def parse(key: String, value: String): RocketMQOffsetRangeLimit =
      value.toLowerCase(Locale.ROOT) match {
        case "earliest" => Earliest
        case "latest" => Latest
        case "group" => CommittedByGroup
        case _ if value.startsWith("{") =>
          val offsets = RocketMQOffsetsJson.parseOption(key, value)
          offsets.toSeq.sorted.collectFirst {
            case (q, o) if o < EarliestOffset => (q, o)
          }.foreach { case (q, o) =>
            invalid(key, value, "NEGATIVE_OFFSET", "offset" -> o.toString, "queue" -> q.toString)
          }
          Specific(offsets)
        case _ => invalid(key, value, "OFFSET_KEYWORD")
      }

    override def render(value: RocketMQOffsetRangeLimit): String = value match {
      case Earliest => "\"earliest\""
      case Latest => "\"latest\""
      case CommittedByGroup => "\"group\""
      case Specific(offsets) => RocketMQOffsetsJson.format(offsets)
      case other => other.toString
    }
  }

  /** Per-queue JSON of epoch milliseconds. */
  case object QueueTimestamps
    extends RocketMQOptionKind[Map[RocketMQQueue, Long]]("per-queue timestamps",
      """JSON {"topic":{"broker":{"0":1700000000000}}}""") {
    override def parse(key: String, value: String): Map[RocketMQQueue, Long] = {
      val times = RocketMQOffsetsJson.parseOption(key, value)
      times.toSeq.sorted.collectFirst { case (q, t) if t < 0 => (q, t) }.foreach { case (q, t) =>
        invalid(key, value, "NEGATIVE_TIMESTAMP", "timestamp" -> t.toString, "queue" -> q.toString)
      }
      times
    }
    override def render(value: Map[RocketMQQueue, Long]): String = RocketMQOffsetsJson.format(value)
  }
}

/**
 * The two delivery guarantees of a write (see the option deliveryGuarantee). Serializable: write
 * settings carry one to the executors (Scala 2.12 needs the parent to be, too).
 */
private[rocketmq] sealed abstract class DeliveryGuarantee(val name: String) extends Serializable {
  override def toString: String = name
}

private[rocketmq] object DeliveryGuarantee {
  case object AtLeastOnce extends DeliveryGuarantee("at_least_once")
  case object ExactlyOnce extends DeliveryGuarantee("exactly_once")
  val all: Seq[DeliveryGuarantee] = Seq(AtLeastOnce, ExactlyOnce)
}
