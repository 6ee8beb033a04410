package org.apache.spark.sql.rocketmq

import java.util.Locale


import org.apache.spark.sql.catalyst.util.CaseInsensitiveMap

/**
 * Every option of the connector: its key, its default, how it is parsed and validated. Keys are
 * matched case-insensitively; each accessor throws an error naming the option, the value given and
 * what is allowed. Keys and their documentation are in [[RocketMQOptionKeys]].
 */
private[rocketmq] final class RocketMQOptions(rawOptions: Map[String, String]) extends Serializable {
  import RocketMQOptionKeys._
  import RocketMQOptions._

  private val options = CaseInsensitiveMap(rawOptions)

  def get(key: String): Option[String] = options.get(key).map(_.trim)

  /** The options as given. */
  def all: Map[String, String] = rawOptions

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
  def consumerGroup: Option[String] = groupName(ConsumerGroup)

  /** An SQL92 filter over message properties. */
  def sqlFilter: Option[String] = get(SqlFilter).filter(_.nonEmpty)

  /** Whether rows carry the extra columns tags, keys and msgId. */
  def includeExtraColumns: Boolean = boolean(IncludeExtraColumns, default = false)

  /** Checks everything a streaming read needs; end options and batch-only options are refused. */
  def validateForStream(): Unit = {
    nameServer
    topicsToRead
    refuse(Seq(EndingOffsets, EndingTimestamp, EndingOffsetsByTimestamp), "streaming",
      "a stream has no end; stop the query, or use Trigger.AvailableNow to read what exists and stop")
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
    refuse(Seq(MaxOffsetsPerTrigger, MinOffsetsPerTrigger, MaxTriggerDelay), "batch",
      "it limits micro-batches of a streaming query; a batch query reads its whole range at once")
    checkTopicsNamed(batchStartingOffsets, StartingOffsets, StartingOffsetsByTimestamp)
    checkTopicsNamed(batchEndingOffsets, EndingOffsets, EndingOffsetsByTimestamp)
    validateReadCommon()
  }

  /** Fails on the first of `keys` that is set: it does not apply to `queryType` queries. */
  private def refuse(keys: Seq[String], queryType: String, reason: String): Unit =
    keys.find(k => get(k).isDefined).foreach(k => throw RocketMQErrors.optionNotAllowed(k, queryType, reason))

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

  def producerGroup: String = groupName(ProducerGroup).getOrElse(RocketMQClients.WriterGroup)

  private def groupName(key: String): Option[String] = get(key).filter(_.nonEmpty).map { g =>
    if (!RocketMQOptions.GroupName.matches(g)) {
      throw RocketMQErrors.invalidOption(key, g, "must be a RocketMQ group name: 1-120 characters of [%|a-zA-Z0-9_-]")
    }
    g
  }

  def sendRetries: Int = get(SendRetries) match {
    case None => 2
    case Some(v) => v.toIntOption.filter(_ >= 0).getOrElse(
      throw RocketMQErrors.invalidOption(SendRetries, v, "must be an integer >= 0"))
  }

  def compressionThreshold: Int = positiveInt(CompressionThreshold, 4096)

  def deliveryDelayMs: Option[Long] = get(DeliveryDelayMs).map(_ => positiveLong(DeliveryDelayMs, 0L))

  /** Checks everything a write needs. */
  def validateForWrite(): Unit = {
    nameServer
    topicToWrite
    sendTimeoutMs
    maxInFlightMessages
    producerGroup
    sendRetries
    compressionThreshold
    deliveryDelayMs
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
