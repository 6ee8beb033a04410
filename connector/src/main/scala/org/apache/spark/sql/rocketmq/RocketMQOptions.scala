package org.apache.spark.sql.rocketmq

import java.util.Locale

import scala.collection.mutable

import org.apache.spark.sql.catalyst.util.CaseInsensitiveMap

/**
 * Every option of the connector: its key, its default, how it is parsed and validated. Keys are
 * matched case-insensitively; each accessor throws an error naming the option, the value given and
 * what is allowed. The README's option tables are generated from [[RocketMQOptions.all]].
 */
private[rocketmq] final class RocketMQOptions(rawOptions: Map[String, String]) extends Serializable {
  import RocketMQOptions._

  private val options = CaseInsensitiveMap(rawOptions)

  def get(key: String): Option[String] = options.get(key).map(_.trim)

  /** Name server list `host:port[;host:port]`. */
  def nameServer: String = {
    val value = get(NameServer).filter(_.nonEmpty).getOrElse(
      throw RocketMQErrors.missingOption(NameServer, "the RocketMQ name server address as host:port"))
    val valid = value.split(';').forall { address =>
      val idx = address.lastIndexOf(':')
      idx > 0 && address.substring(idx + 1).toIntOption.exists(p => p > 0 && p < 65536)
    }
    if (!valid) {
      throw RocketMQErrors.invalidOption(NameServer, value, "must be host:port, or several separated by ';'")
    }
    value
  }

  /** The topics to read: the `topic` option, a comma-separated list. */
  def topicsToRead: Seq[String] = {
    val value = get(Topic).filter(_.nonEmpty).getOrElse(
      throw RocketMQErrors.missingOption(Topic, "the topic to read (or several, comma-separated)"))
    val topics = value.split(',').map(_.trim).toSeq
    topics.foreach(t => validateTopicName(Topic, value, t))
    topics.distinct
  }

  /** The topic to write to, if the option is set (it then overrides any `topic` column). */
  def topicToWrite: Option[String] = get(Topic).filter(_.nonEmpty).map { t =>
    validateTopicName(Topic, t, t)
    t
  }

  def subExpression: String = get(SubExpression).filter(_.nonEmpty).getOrElse("*")

  def pullTimeoutMs: Long = positiveLong(PullTimeoutMs, 3000L)

  def pullBatchSize: Int = positiveInt(PullBatchSize, 32)

  def failOnDataLoss: Boolean = boolean(FailOnDataLoss, default = true)

  def requestTimeoutMs: Long = positiveLong(RequestTimeoutMs, 10000L)

  def metadataRetries: Int = positiveInt(MetadataRetries, 3)

  def metadataRetryIntervalMs: Long = nonNegativeLong(MetadataRetryIntervalMs, 1000L)

  def sendTimeoutMs: Long = positiveLong(SendTimeoutMs, 3000L)

  def maxInFlightMessages: Int = positiveInt(MaxInFlightMessages, 1000)

  /** Where a batch read starts: `earliest` (default), JSON or a timestamp; never `latest`. */
  def batchStartingOffsets: RocketMQOffsetRangeLimit = batchLimit(
    startLimit(RocketMQOffsetRangeLimit.Earliest), StartingOffsets,
    forbidden = RocketMQOffsetRangeLimit.Latest, forbiddenOffset = RocketMQOffsetRangeLimit.LatestOffset,
    keywordReason = "batch queries start at 'earliest' or at JSON offsets; 'latest' would read nothing",
    offsetReason = "-1 (latest) is not allowed as a starting offset of a batch query")

  /** Where a batch read ends: `latest` (default), JSON or a timestamp; never `earliest`. */
  def batchEndingOffsets: RocketMQOffsetRangeLimit = batchLimit(
    endLimit, EndingOffsets,
    forbidden = RocketMQOffsetRangeLimit.Earliest, forbiddenOffset = RocketMQOffsetRangeLimit.EarliestOffset,
    keywordReason = "endingOffsets must be 'latest' or JSON offsets; 'earliest' would read nothing",
    offsetReason = "-2 (earliest) is not allowed as an ending offset")

  /** Where a new streaming query starts: `latest` (default), `earliest`, JSON or a timestamp. */
  def streamStartingOffsets: RocketMQOffsetRangeLimit = startLimit(RocketMQOffsetRangeLimit.Latest)

  /** At most one of the options that say where a read starts. */
  private def startLimit(default: RocketMQOffsetRangeLimit): RocketMQOffsetRangeLimit =
    exclusive(StartingOffsets, StartingTimestamp, StartingOffsetsByTimestamp) match {
      case Some(StartingTimestamp) => RocketMQOffsetRangeLimit.Timestamp(timestamp(StartingTimestamp))
      case Some(StartingOffsetsByTimestamp) =>
        RocketMQOffsetRangeLimit.TimestampPerQueue(timestampJson(StartingOffsetsByTimestamp))
      case _ => offsetLimit(StartingOffsets, default)
    }

  private def endLimit: RocketMQOffsetRangeLimit =
    exclusive(EndingOffsets, EndingTimestamp, EndingOffsetsByTimestamp) match {
      case Some(EndingTimestamp) => RocketMQOffsetRangeLimit.Timestamp(timestamp(EndingTimestamp))
      case Some(EndingOffsetsByTimestamp) =>
        RocketMQOffsetRangeLimit.TimestampPerQueue(timestampJson(EndingOffsetsByTimestamp))
      case _ => offsetLimit(EndingOffsets, RocketMQOffsetRangeLimit.Latest)
    }

  /** The one option of `keys` that is set, if any; several set is an error naming them all. */
  private def exclusive(keys: String*): Option[String] = keys.filter(k => get(k).isDefined) match {
    case Seq() => None
    case Seq(one) => Some(one)
    case several => throw RocketMQErrors.conflictingOptions(several)
  }

  private def timestamp(key: String): Long = {
    val v = get(key).get
    v.toLongOption.filter(_ >= 0).getOrElse(
      throw RocketMQErrors.invalidOption(key, v, "must be a time in milliseconds since the epoch (an integer >= 0)"))
  }

  private def timestampJson(key: String): Map[RocketMQQueue, Long] = {
    val times = RocketMQOffsetsJson.parse(key, get(key).get)
    times.collectFirst { case (q, t) if t < 0 => (q, t) }.foreach { case (q, t) =>
      throw RocketMQErrors.invalidOption(key, get(key).get, s"time $t of queue $q is negative; use epoch milliseconds")
    }
    times
  }

  /** Most offsets one micro-batch reads, over all queues. */
  def maxOffsetsPerTrigger: Option[Long] = get(MaxOffsetsPerTrigger).map(_ => positiveLong(MaxOffsetsPerTrigger, 0L))

  /** Fewest offsets a micro-batch waits for, until `maxTriggerDelay` has passed. */
  def minOffsetsPerTrigger: Option[Long] = get(MinOffsetsPerTrigger).map(_ => positiveLong(MinOffsetsPerTrigger, 0L))

  /** How long a query waits for `minOffsetsPerTrigger` before it reads what there is. */
  def maxTriggerDelayMs: Long = get(MaxTriggerDelay) match {
    case None => 15L * 60 * 1000
    case Some(v) => RocketMQOptions.parseDuration(v).getOrElse(
      throw RocketMQErrors.invalidOption(MaxTriggerDelay, v,
        "must be a duration such as '30s', '15m', '1h' or '500ms' (a number alone means milliseconds)"))
  }

  /** Fewest Spark partitions a read is split into. */
  def minPartitions: Option[Int] = get(MinPartitions).map(_ => positiveInt(MinPartitions, 0))

  /** The consumer group pulls name and, when the option is set, progress is committed to. */
  def consumerGroup: Option[String] = get(ConsumerGroup).filter(_.nonEmpty).map { g =>
    if (!RocketMQOptions.GroupName.matches(g)) {
      throw RocketMQErrors.invalidOption(ConsumerGroup, g,
        "must be a RocketMQ consumer group name: 1-120 characters of [%|a-zA-Z0-9_-]")
    }
    g
  }

  /** An SQL92 filter over message properties. */
  def sqlFilter: Option[String] = get(SqlFilter).filter(_.nonEmpty)

  /** Whether rows carry the extra columns tags, keys and msgId. */
  def includeExtraColumns: Boolean = boolean(IncludeExtraColumns, default = false)

  /** Checks everything a streaming read needs; end options and batch-only options are refused. */
  def validateForStream(): Unit = {
    nameServer
    topicsToRead
    Seq(EndingOffsets, EndingTimestamp, EndingOffsetsByTimestamp).filter(k => get(k).isDefined).foreach { k =>
      throw RocketMQErrors.optionNotAllowed(k, "streaming",
        "a stream has no end; stop the query, or use Trigger.AvailableNow to read what exists and stop")
    }
    checkTopicsNamed(streamStartingOffsets, StartingOffsets, StartingOffsetsByTimestamp)
    (minOffsetsPerTrigger, maxOffsetsPerTrigger) match {
      case (Some(min), Some(max)) if min > max =>
        throw RocketMQErrors.invalidOption(MinOffsetsPerTrigger, min.toString,
          s"must not exceed maxOffsetsPerTrigger ($max)")
      case _ =>
    }
    maxTriggerDelayMs
    validateReadCommon()
  }

  private def batchLimit(
      limit: RocketMQOffsetRangeLimit,
      key: String,
      forbidden: RocketMQOffsetRangeLimit,
      forbiddenOffset: Long,
      keywordReason: String,
      offsetReason: String): RocketMQOffsetRangeLimit = limit match {
    case `forbidden` => throw RocketMQErrors.invalidOption(key, get(key).get, keywordReason)
    case RocketMQOffsetRangeLimit.Specific(offsets) if offsets.values.exists(_ == forbiddenOffset) =>
      throw RocketMQErrors.invalidOption(key, get(key).get, offsetReason)
    case other => other
  }

  /** Checks everything a batch read needs, so that bad input fails before any job runs. */
  def validateForBatchRead(): Unit = {
    nameServer
    topicsToRead
    Seq(MaxOffsetsPerTrigger, MinOffsetsPerTrigger, MaxTriggerDelay).filter(k => get(k).isDefined).foreach { k =>
      throw RocketMQErrors.optionNotAllowed(k, "batch",
        "it limits micro-batches of a streaming query; a batch query reads its whole range at once")
    }
    checkTopicsNamed(batchStartingOffsets, StartingOffsets, StartingOffsetsByTimestamp)
    checkTopicsNamed(batchEndingOffsets, EndingOffsets, EndingOffsetsByTimestamp)
    validateReadCommon()
  }

  /** Per-queue JSON may only name subscribed topics; errors name the option the JSON came from. */
  private def checkTopicsNamed(limit: RocketMQOffsetRangeLimit, offsetsKey: String, timesKey: String): Unit =
    limit match {
      case RocketMQOffsetRangeLimit.Specific(offsets) => checkTopicsNamed(offsetsKey, offsets.keys)
      case RocketMQOffsetRangeLimit.TimestampPerQueue(times) => checkTopicsNamed(timesKey, times.keys)
      case _ =>
    }

  private def checkTopicsNamed(option: String, queues: Iterable[RocketMQQueue]): Unit = {
    val topics = topicsToRead
    queues.map(_.topic).find(t => !topics.contains(t)).foreach { t =>
      throw RocketMQErrors.invalidOption(
        option, get(option).get, s"it names topic '$t', which is not in option 'topic' (${topics.mkString(",")})")
    }
  }

  private def validateReadCommon(): Unit = {
    subExpression
    if (sqlFilter.isDefined && subExpression != "*") {
      throw RocketMQErrors.conflictingOptions(Seq(SubExpression, SqlFilter))
    }
    pullTimeoutMs
    pullBatchSize
    failOnDataLoss
    minPartitions
    consumerGroup
    includeExtraColumns
    validateCommon()
  }

  /** Checks everything a write needs. */
  def validateForWrite(): Unit = {
    nameServer
    topicToWrite
    sendTimeoutMs
    maxInFlightMessages
    validateCommon()
  }

  private def validateCommon(): Unit = {
    requestTimeoutMs
    metadataRetries
    metadataRetryIntervalMs
  }

  private def offsetLimit(key: String, default: RocketMQOffsetRangeLimit): RocketMQOffsetRangeLimit =
    get(key) match {
      case None => default
      case Some(v) if v.toLowerCase(Locale.ROOT) == "earliest" => RocketMQOffsetRangeLimit.Earliest
      case Some(v) if v.toLowerCase(Locale.ROOT) == "latest" => RocketMQOffsetRangeLimit.Latest
      case Some(v) if v.startsWith("{") =>
        val offsets = RocketMQOffsetsJson.parse(key, v)
        offsets.collectFirst { case (q, o) if o < RocketMQOffsetRangeLimit.EarliestOffset => (q, o) }.foreach {
          case (q, o) =>
            throw RocketMQErrors.invalidOption(
              key, v, s"offset $o of queue $q is negative; use an offset >= 0, -2 (earliest) or -1 (latest)")
        }
        RocketMQOffsetRangeLimit.Specific(offsets)
      case Some(v) =>
        throw RocketMQErrors.invalidOption(key, v, "must be 'earliest', 'latest' or a JSON object of offsets")
    }

  private def positiveLong(key: String, default: Long): Long = get(key) match {
    case None => default
    case Some(v) => v.toLongOption.filter(_ > 0).getOrElse(
      throw RocketMQErrors.invalidOption(key, v, "must be a positive integer"))
  }

  private def nonNegativeLong(key: String, default: Long): Long = get(key) match {
    case None => default
    case Some(v) => v.toLongOption.filter(_ >= 0).getOrElse(
      throw RocketMQErrors.invalidOption(key, v, "must be an integer >= 0"))
  }

  private def positiveInt(key: String, default: Int): Int = get(key) match {
    case None => default
    case Some(v) => v.toIntOption.filter(_ > 0).getOrElse(
      throw RocketMQErrors.invalidOption(key, v, s"must be a positive integer (at most ${Int.MaxValue})"))
  }

  private def boolean(key: String, default: Boolean): Boolean = get(key) match {
    case None => default
    case Some(v) => v.toLowerCase(Locale.ROOT) match {
      case "true" => true
      case "false" => false
      case _ => throw RocketMQErrors.invalidOption(key, v, "must be 'true' or 'false'")
    }
  }
}

private[rocketmq] object RocketMQOptions {

  /** Which queries an option applies to, as the README's "Query type" column says it. */
  sealed abstract class QueryType(val text: String)
  case object SourceBoth extends QueryType("streaming and batch")
  case object BatchOnly extends QueryType("batch query")
  case object StreamOnly extends QueryType("streaming query")
  case object SinkOnly extends QueryType("sink (batch and streaming)")
  case object Everywhere extends QueryType("source and sink")

  /** One documented option: what the README's table says of it. */
  final case class OptionDoc(key: String, value: String, default: String, queryType: QueryType, meaning: String)

  private val registry = mutable.ArrayBuffer.empty[OptionDoc]

  private def define(key: String, value: String, default: String, queryType: QueryType, meaning: String): String = {
    registry += OptionDoc(key, value, default, queryType, meaning)
    key
  }

  /** Name server address(es) of the RocketMQ cluster. */
  val NameServer: String = define("nameServer", "host:port[;host:port…]", "(required)", Everywhere,
    "Name server address(es) of the RocketMQ cluster.")

  /** Topic(s) to read, or the topic every row is written to. */
  val Topic: String = define("topic", "topic name; a comma-separated list when reading", "(required to read)",
    Everywhere, "Topic(s) to read. When writing, the topic every row goes to; it overrides a `topic` column.")

  /** Start of a read. */
  val StartingOffsets: String = define("startingOffsets",
    """"earliest", or JSON {"topic":{"broker":{"0":23}}} (-2 = earliest)""", """"earliest"""", SourceBoth,
    "Where a query starts. Queues missing from the JSON start at their earliest offset. `latest` (or -1) is not " +
      "allowed in batch queries.")

  /** End of a batch read. */
  val EndingOffsets: String = define("endingOffsets", """"latest", or JSON as above (-1 = latest)""",
    """"latest"""", BatchOnly,
    "Where a batch query ends (exclusive). Queues missing from the JSON end at their latest offset. -2 (earliest) " +
      "is not allowed.")

  /** Tag filter. */
  val SubExpression: String = define("subExpression", """tag expression, e.g. "tagA || tagB"""", """"*"""",
    SourceBoth, "Reads only messages whose tag matches. Offsets skipped by the filter are not data loss.")

  /** Pull timeout on executors. */
  val PullTimeoutMs: String = define("pullTimeoutMs", "positive integer (ms)", "3000", SourceBoth,
    "Timeout of each pull request from an executor to a broker.")

  /** Messages per pull. */
  val PullBatchSize: String = define("pullBatchSize", "positive integer", "32", SourceBoth,
    "Most messages fetched by one pull request (the broker may return fewer).")

  /** Data-loss policy. */
  val FailOnDataLoss: String = define("failOnDataLoss", "true or false", "true", SourceBoth,
    "Whether to fail when data may have been lost (expired or deleted messages). Batch queries always fail on " +
      "lost data.")

  /** Driver metadata timeout. */
  val RequestTimeoutMs: String = define("requestTimeoutMs", "positive integer (ms)", "10000", Everywhere,
    "Timeout of each metadata request (topic routes, queue offsets) to the name server and brokers.")

  /** Driver metadata attempts. */
  val MetadataRetries: String = define("metadataRetries", "positive integer", "3", Everywhere,
    "Attempts of a metadata request that failed for a retryable reason (timeout, connection refused).")

  /** Pause between metadata attempts. */
  val MetadataRetryIntervalMs: String = define("metadataRetryIntervalMs", "integer >= 0 (ms)", "1000", Everywhere,
    "Pause between two attempts of a metadata request.")

  /** Producer send timeout. */
  val SendTimeoutMs: String = define("sendTimeoutMs", "positive integer (ms)", "3000", SinkOnly,
    "Timeout of one send, retries included.")

  /** Bound on unacknowledged sends per task. */
  val MaxInFlightMessages: String = define("maxInFlightMessages", "positive integer", "1000", SinkOnly,
    "Most messages a write task has sent but not yet seen acknowledged; bounds the writer's memory.")

  /** Start of a read by time. */
  val StartingTimestamp: String = define("startingTimestamp", "epoch milliseconds", "(none)", SourceBoth,
    "Start every queue at its first message stored at or after this time (latest if none). Excludes the other " +
      "start options.")

  /** Start of a read by time, per queue. */
  val StartingOffsetsByTimestamp: String = define("startingOffsetsByTimestamp",
    """JSON {"topic":{"broker":{"0":1700000000000}}}""", "(none)", SourceBoth,
    "Like startingTimestamp, one time per queue; queues not listed start at the default.")

  /** End of a batch read by time. */
  val EndingTimestamp: String = define("endingTimestamp", "epoch milliseconds", "(none)", BatchOnly,
    "End every queue before its first message stored at or after this time. Excludes the other end options.")

  /** End of a batch read by time, per queue. */
  val EndingOffsetsByTimestamp: String = define("endingOffsetsByTimestamp", "JSON, as startingOffsetsByTimestamp",
    "(none)", BatchOnly, "Like endingTimestamp, one time per queue; queues not listed end at their latest offset.")

  /** Rate limit. */
  val MaxOffsetsPerTrigger: String = define("maxOffsetsPerTrigger", "positive integer", "(none)", StreamOnly,
    "Most offsets one micro-batch reads over all queues, shared out by each queue's backlog.")

  /** Batching floor. */
  val MinOffsetsPerTrigger: String = define("minOffsetsPerTrigger", "positive integer", "(none)", StreamOnly,
    "Fewest new offsets a micro-batch waits for (at most maxTriggerDelay).")

  /** Wait bound for minOffsetsPerTrigger. */
  val MaxTriggerDelay: String = define("maxTriggerDelay", "duration, e.g. 30s, 15m", "15m", StreamOnly,
    "Longest a trigger is skipped while fewer than minOffsetsPerTrigger offsets are new.")

  /** Split hint. */
  val MinPartitions: String = define("minPartitions", "positive integer", "(one per queue)", SourceBoth,
    "Fewest Spark partitions to read with: large queue ranges are split to reach it.")

  /** SQL92 property filter. */
  val SqlFilter: String = define("sqlFilter", "SQL92 expression over message properties, e.g. \"a > 5\"", "(none)",
    SourceBoth, "Reads only messages the broker's SQL92 filter matches (needs enablePropertyFilter=true on " +
      "brokers). Excludes a subExpression other than *.")

  /** Progress commits. */
  val ConsumerGroup: String = define("consumerGroup", "consumer group name", "(none)", SourceBoth,
    "Executors pull as this group, and after each micro-batch the processed offsets are committed to the brokers " +
      "for it, so RocketMQ's tools show the query's lag. The Spark checkpoint stays the source of truth. Not set: " +
      "nothing is written to the brokers.")

  /** Extra columns. */
  val IncludeExtraColumns: String = define("includeExtraColumns", "true or false", "false", SourceBoth,
    "Adds the columns tags (string), keys (array<string>) and msgId (string) after the nine standard ones.")

  /** Every option, in definition order. */
  lazy val all: Seq[OptionDoc] = registry.toList

  private val TopicName = "^[%|a-zA-Z0-9_-]{1,127}$".r

  private[rocketmq] val GroupName = "^[%|a-zA-Z0-9_-]{1,120}$".r

  private val Duration = "^(\\d+)\\s*(ms|s|m|min|h|d)?$".r

  /** Milliseconds of a duration such as "500ms", "30s", "15m", "1h", "2d"; a bare number is ms. */
  def parseDuration(text: String): Option[Long] = text.trim.toLowerCase(Locale.ROOT) match {
    case Duration(n, unit) =>
      n.toLongOption.map(_ * (unit match {
        case null | "ms" => 1L
        case "s" => 1000L
        case "m" | "min" => 60000L
        case "h" => 3600000L
        case "d" => 86400000L
      }))
    case _ => None
  }

  private def validateTopicName(option: String, value: String, topic: String): Unit = {
    if (TopicName.findFirstIn(topic).isEmpty) {
      throw RocketMQErrors.invalidOption(
        option, value, s"topic '$topic' is not a valid RocketMQ topic name (1-127 characters of [%|a-zA-Z0-9_-])")
    }
  }
}
