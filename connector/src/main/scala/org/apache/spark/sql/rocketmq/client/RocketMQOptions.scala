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

import scala.collection.mutable

import org.apache.rocketmq.client.AccessChannel

import org.apache.spark.sql.catalyst.util.CaseInsensitiveMap
import org.apache.spark.sql.rocketmq.client.RocketMQOption._
import org.apache.spark.sql.rocketmq.client.RocketMQOptionKind._
import org.apache.spark.sql.rocketmq.client.RocketMQOffsetRangeLimit.{
  Earliest, EarliestOffset, Latest, LatestOffset
}

/**
 * The options of one query, as given: keys match case-insensitively and values are trimmed. Each
 * option is read through its declaration in the companion object, which alone holds its kind and
 * default; the checks run when a query is planned (`validateFor…`), so bad input fails before any
 * broker is asked anything, with an error naming the option, the value and what is allowed.
 */
private[rocketmq] final class RocketMQOptions(rawOptions: Map[String, String])
  extends Serializable with RocketMQOptionChecks {
  import RocketMQOptions._

  private val options = CaseInsensitiveMap(rawOptions)

  /** The options as given. */
  def all: Map[String, String] = rawOptions

  /**
   * How this query's clients reach RocketMQ, credentials included (they may come from the Spark
   * configuration or the environment): resolved on the driver, where queries are planned.
   */
  lazy val connection: RocketMQConnection =
    RocketMQConnection.resolve(this, RocketMQConnection.activeSparkConf, sys.env.get)

  /**
   * The value set for `option`, trimmed; for names and expressions an empty value counts as unset.
   */
  def rawValue(option: RocketMQOption[_]): Option[String] =
    options.get(option.key).map(_.trim).filterNot(v => v.isEmpty && option.kind.emptyIsUnset)

  private[client] def parsed[T](option: RocketMQOption[T]): Option[T] =
    rawValue(option).map(option.kind.parse(option.key, _))

  def apply[T](option: Required[T]): T =
    parsed(option).getOrElse(throw RocketMQErrors.missingOption(option.key))

  def apply[T](option: Defaulted[T]): T = parsed(option).getOrElse(option.default)

  def apply[T](option: Unset[T]): Option[T] = parsed(option)

  /** The topics to read: option `topic` is required for reads. */
  def topicsToRead: Seq[String] =
    this(Topic).getOrElse(throw RocketMQErrors.missingOption(Topic.key))

  /** The topic to write to, if the option is set (it then overrides any `topic` column). */
  def topicToWrite: Option[String] =
    rawValue(Topic).map(t => RocketMQOptionKind.checkTopicName(Topic.key, t, t))

  /** Where a batch read starts: `earliest` (default), JSON or a timestamp; never `latest`. */
  def batchStartingOffsets: RocketMQOffsetRangeLimit =
    startLimit(StartingOffsets.batchDefault) match {
      case Latest =>
        throw RocketMQErrors.invalidOption(StartingOffsets.key, rawValue(StartingOffsets).get,
          "LATEST_BATCH_START")
      case limit =>
        refuseSentinel(limit, StartingOffsets, LatestOffset, "LATEST_OFFSET_BATCH_START")
    }

  /** Where a batch read ends: `latest` (default), JSON or a timestamp; never `earliest`. */
  def batchEndingOffsets: RocketMQOffsetRangeLimit =
    exclusive(EndingOffsets, EndingTimestamp, EndingOffsetsByTimestamp) match {
      case Some(EndingTimestamp) => RocketMQOffsetRangeLimit.Timestamp(this(EndingTimestamp).get)
      case Some(EndingOffsetsByTimestamp) =>
        RocketMQOffsetRangeLimit.TimestampPerQueue(this(EndingOffsetsByTimestamp).get)
      case _ => this(EndingOffsets) match {
          case Earliest =>
            throw RocketMQErrors.invalidOption(EndingOffsets.key, rawValue(EndingOffsets).get,
              "EARLIEST_END")
          case RocketMQOffsetRangeLimit.CommittedByGroup =>
            throw RocketMQErrors.invalidOption(EndingOffsets.key, rawValue(EndingOffsets).get,
              "GROUP_END")
          case limit => refuseSentinel(limit, EndingOffsets, EarliestOffset, "EARLIEST_OFFSET_END")
        }
    }

  /** Where a new streaming query starts: `latest` (default), `earliest`, JSON or a timestamp. */
  def streamStartingOffsets: RocketMQOffsetRangeLimit = startLimit(StartingOffsets.streamDefault)

  /** At most one of the options that say where a read starts. */
  private def startLimit(default: RocketMQOffsetRangeLimit): RocketMQOffsetRangeLimit =
    exclusive(StartingOffsets, StartingTimestamp, StartingOffsetsByTimestamp) match {
      case Some(StartingTimestamp) =>
        RocketMQOffsetRangeLimit.Timestamp(this(StartingTimestamp).get)
      case Some(StartingOffsetsByTimestamp) =>
        RocketMQOffsetRangeLimit.TimestampPerQueue(this(StartingOffsetsByTimestamp).get)
      case _ => parsed(StartingOffsets).getOrElse(default)
    }

  private def refuseSentinel(limit: RocketMQOffsetRangeLimit, option: RocketMQOption[_],
      sentinel: Long, sub: String)
      : RocketMQOffsetRangeLimit = limit match {
    case RocketMQOffsetRangeLimit.Specific(offsets) if offsets.values.exists(_ == sentinel) =>
      throw RocketMQErrors.invalidOption(option.key, rawValue(option).get, sub)
    case other => other
  }

  /** The one option of `choices` that is set, if any; several set is an error naming them all. */
  private def exclusive(choices: RocketMQOption[_]*): Option[RocketMQOption[_]] =
    choices.filter(rawValue(_).isDefined) match {
      case Seq() => None
      case Seq(one) => Some(one)
      case several => throw RocketMQErrors.conflictingOptions(several.map(_.key))
    }
}

/**
 * Every option of the connector, declared once (see [[RocketMQOption]]);
 * [[RocketMQOptions.registry]] lists them in the option reference's order.
 */
private[rocketmq] object RocketMQOptions {

  private val declared = mutable.ArrayBuffer.empty[RocketMQOption[_]]

  private def declare[O <: RocketMQOption[_]](option: O): O = {
    declared += option
    option
  }

  private def required[T](key: String, kind: RocketMQOptionKind[T], queryType: QueryType,
      meaning: String,
      value: String = null): Required[T] =
    declare(Required(key, kind, queryType, meaning, Option(value).getOrElse(kind.description)))

  private def defaulted[T](key: String, kind: RocketMQOptionKind[T], default: T,
      queryType: QueryType,
      meaning: String, value: String = null): Defaulted[T] =
    declare(Defaulted(key, kind, default, queryType, meaning,
      Option(value).getOrElse(kind.description)))

  private def unset[T](key: String, kind: RocketMQOptionKind[T], queryType: QueryType,
      meaning: String,
      value: String = null, default: String = "(none)"): Unset[T] =
    declare(Unset(key, kind, queryType, meaning, Option(value).getOrElse(kind.description),
      default))

  /** Name server address(es) of the RocketMQ cluster. */
  val NameServer: Required[String] =
    required("nameServer", RocketMQOptionKind.NameServer, Everywhere,
      "Name server address(es) of the RocketMQ cluster.")

  /** Topic(s) to read, or the topic every row is written to. */
  val Topic: Unset[Seq[String]] = unset("topic", Topics, Everywhere,
    "Topic(s) to read. When writing, the topic every row goes to; it overrides a `topic` column.",
    value = "topic name; a comma-separated list when reading", default = "(required to read)")

  /** Start of a read. */
  val StartingOffsets: DefaultPerQuery[RocketMQOffsetRangeLimit] = declare(DefaultPerQuery(
    "startingOffsets",
    Offsets, batchDefault = Earliest, streamDefault = Latest, SourceBoth,
    "Where a query starts. Queues missing from the JSON start at their earliest offset. `latest` " +
      "(or -1) is not " +
      "allowed in batch queries. `group`: where consumerGroup committed its progress on the " +
      "brokers, each queue; " +
      "queues the group has not committed start at groupOffsetFallback.",
    """"earliest", "latest" (streaming only), "group", or JSON """ +
      """{"topic":{"broker":{"0":23}}} (-2 = earliest, -1 = latest)"""))

  /** Where a queue the group has not committed starts, with startingOffsets=group. */
  val GroupOffsetFallback: Defaulted[RocketMQOffsetRangeLimit] = defaulted("groupOffsetFallback",
    GroupFallbackKind,
    Latest, SourceBoth,
    "With startingOffsets=group: where a queue for which consumerGroup has committed no offset " +
      "starts (as a " +
      "RocketMQ consumer of a new group starts at the latest offset by default).",
    value = """"earliest" or "latest"""")

  /** End of a batch read. */
  val EndingOffsets: Defaulted[RocketMQOffsetRangeLimit] = defaulted("endingOffsets", Offsets,
    Latest, BatchOnly,
    "Where a batch query ends (exclusive). Queues missing from the JSON end at their latest " +
      "offset. -2 (earliest) " +
      "is not allowed.",
    value = """"latest", or JSON as above (-1 = latest)""")

  /** Tag filter. */
  val SubExpression: Defaulted[String] = defaulted("subExpression", Text, "*", SourceBoth,
    "Reads only messages whose tag matches. Offsets skipped by the filter are not data loss.",
    value = """tag expression, e.g. "tagA || tagB"""")

  /** Pull timeout on executors. */
  val PullTimeoutMs: Defaulted[Long] = defaulted("pullTimeoutMs", PositiveLong, 3000L, SourceBoth,
    "Timeout of each pull request from an executor to a broker.", value = "positive integer (ms)")

  /** Messages per pull. */
  val PullBatchSize: Defaulted[Int] = defaulted("pullBatchSize", PositiveInt, 32, SourceBoth,
    "Most messages fetched by one pull request (the broker may return fewer).")

  /** Pulls of one queue under way at once. */
  val PullsInFlight: Defaulted[Int] = defaulted("pullsInFlight", PositiveInt, 16, SourceBoth,
    "Most pull requests a task keeps under way for its queue: the next pulls are issued while " +
      "the last one is " +
      "turned into rows (without a filter; a filtered read pulls one at a time). 1: one pull at " +
      "a time.")

  /** Bound on answers read ahead. */
  val ReadAheadBytes: Defaulted[Long] = defaulted("readAheadBytes", PositiveLong, 16L * 1024 * 1024,
    SourceBoth,
    "No pull is issued ahead while the answers a task holds unread carry this many message bytes " +
      "(a broker bounds " +
      "one answer, by default to 256 KiB).",
    value = "positive integer (bytes)")

  /** Data-loss policy. */
  val FailOnDataLoss: Defaulted[Boolean] = defaulted("failOnDataLoss", Bool, true, SourceBoth,
    "Whether to fail when data may have been lost (expired or deleted messages). Batch queries " +
      "always fail on " +
      "lost data.")

  /** The broker groups that must serve the topics read. */
  val ExpectedBrokerGroups: Unset[RocketMQExpectedGroups] = unset("expectedBrokerGroups",
    ExpectedGroupsKind,
    SourceBoth,
    "Broker groups each topic read must be served by, by name or by number. The name server " +
      "forgets a group " +
      "whose brokers are all down (a master without replicas), so without this a read sees only " +
      "the groups still " +
      "there; with it, a topic not served by them waits retryTimeoutMs for them, then fails " +
      "naming them.")

  /** Driver metadata timeout. */
  val RequestTimeoutMs: Defaulted[Long] = defaulted("requestTimeoutMs", PositiveLong, 10000L,
    Everywhere,
    "Timeout of each metadata request (topic routes, queue offsets) to the name server and " +
      "brokers.",
    value = "positive integer (ms)")

  /** Driver metadata attempts. */
  val MetadataRetries: Defaulted[Int] = defaulted("metadataRetries", PositiveInt, 3, Everywhere,
    "Attempts of a metadata request that failed for a retryable reason (timeout, connection " +
      "refused).")

  /** Pause between metadata attempts. */
  val MetadataRetryIntervalMs: Defaulted[Long] =
    defaulted("metadataRetryIntervalMs", NonNegativeLong, 1000L,
      Everywhere, "Pause between two attempts of a metadata request.", value = "integer >= 0 (ms)")

  /** How long tasks retry and the driver waits through a broker outage. */
  val RetryTimeoutMs: Defaulted[Long] = defaulted("retryTimeoutMs", NonNegativeLong, 60000L,
    Everywhere,
    "How long a task keeps retrying a pull or send that failed for a reason a broker restart " +
      "explains (timeout, " +
      "connection refused, broker busy, broker or route missing), pausing 100 ms to 2 s between " +
      "attempts, and how " +
      "long the driver waits for a broker missing from the name server's routes; then the query " +
      "fails naming the " +
      "broker. A broker that keeps its connections open and never answers is unavailable from " +
      "the first request " +
      "to it that times out (requestTimeoutMs): the driver fails retryTimeoutMs later, once the " +
      "request then in " +
      "progress has timed out too (70 to 80 s on the defaults). 0: no retries.",
    value = "integer >= 0 (ms)")

  /** Producer send timeout. */
  val SendTimeoutMs: Defaulted[Long] = defaulted("sendTimeoutMs", PositiveLong, 3000L, SinkOnly,
    "Timeout of one send attempt; each resend (see retryTimeoutMs) has a timeout of its own.",
    value = "positive integer (ms)")

  /** Bound on unacknowledged sends per task. */
  val MaxInFlightMessages: Defaulted[Int] = defaulted("maxInFlightMessages", PositiveInt, 10000,
    SinkOnly,
    "Most messages a write task has sent but not yet seen acknowledged (a count; " +
      "maxInFlightBytes bounds their " +
      "bytes). Each request carries up to sendBatchMessages of them, so this also bounds " +
      "requests in flight; with " +
      "one message per request a task keeps at most 32 requests unacknowledged, and under a " +
      "real-time or continuous " +
      "trigger at most 4 (rows that come meanwhile go together in the next).")

  /** Bound on unacknowledged bytes per task. */
  val MaxInFlightBytes: Defaulted[Long] = defaulted("maxInFlightBytes", PositiveLong,
    32L * 1024 * 1024, SinkOnly,
    "Most message body bytes a write task has sent but not yet seen acknowledged; a larger " +
      "message is sent alone.",
    value = "positive integer (bytes)")

  /** Messages per batch request. */
  val SendBatchMessages: Defaulted[Int] = defaulted("sendBatchMessages", PositiveInt, 128, SinkOnly,
    "Most messages a write task sends in one request (a RocketMQ message batch, per topic) when " +
      "they have no " +
      "shardingKey or delivery time and are not compressed. 1: one message per request.")

  /** Bytes per batch request. */
  val SendBatchBytes: Defaulted[Long] = defaulted("sendBatchBytes", PositiveLong, 256L * 1024,
    SinkOnly,
    "Most bytes of one batch request (bodies and properties); keep it under the broker's " +
      "maxMessageSize (4 MiB by " +
      "default), which bounds a whole batch.",
    value = "positive integer (bytes)")

  /** Start of a read by time. */
  val StartingTimestamp: Unset[Long] = unset("startingTimestamp", EpochMillis, SourceBoth,
    "Start every queue at its first message stored at or after this time (latest if none). " +
      "Excludes the other " +
      "start options.")

  /** Start of a read by time, per queue. */
  val StartingOffsetsByTimestamp: Unset[Map[RocketMQQueue, Long]] = unset(
    "startingOffsetsByTimestamp",
    QueueTimestamps, SourceBoth,
    "Like startingTimestamp, one time per queue; queues not listed start at the default.")

  /**
   * How far producers' clocks may run ahead of their brokers': lets a born-time filter narrow a
   * batch read.
   */
  val ProducerClockSkewMs: Unset[Long] = unset("producerClockSkewMs", NonNegativeLong, BatchOnly,
    "A filter bornTimestamp >= t (or > t, or = t) narrows a batch read to messages stored at or " +
      "after t minus " +
      "this: a message is stored after it is born, but its born time is the producer's clock, " +
      "which may run " +
      "ahead of the broker's. Unset, born-time filters do not narrow the read (Spark applies " +
      "them to every row).",
    value = "integer >= 0 (ms)")

  /** End of a batch read by time. */
  val EndingTimestamp: Unset[Long] = unset("endingTimestamp", EpochMillis, BatchOnly,
    "End every queue before its first message stored at or after this time. Excludes the other " +
      "end options.")

  /** End of a batch read by time, per queue. */
  val EndingOffsetsByTimestamp: Unset[Map[RocketMQQueue, Long]] = unset("endingOffsetsByTimestamp",
    QueueTimestamps, BatchOnly,
    "Like endingTimestamp, one time per queue; queues not listed end at their latest offset.",
    value = "JSON, as startingOffsetsByTimestamp")

  /** Rate limit. */
  val MaxOffsetsPerTrigger: Unset[Long] = unset("maxOffsetsPerTrigger", PositiveLong, StreamOnly,
    "Most offsets one micro-batch reads over all queues, shared out by each queue's backlog.")

  /** Batching floor. */
  val MinOffsetsPerTrigger: Unset[Long] = unset("minOffsetsPerTrigger", PositiveLong, StreamOnly,
    "Fewest new offsets a micro-batch waits for (at most maxTriggerDelay).")

  /** Wait bound for minOffsetsPerTrigger. */
  val MaxTriggerDelay: Defaulted[Long] =
    defaulted("maxTriggerDelay", Duration, 15L * 60 * 1000, StreamOnly,
      "Longest a trigger is skipped while fewer than minOffsetsPerTrigger offsets are new.")

  /** Split hint. */
  val MinPartitions: Unset[Int] = unset("minPartitions", PositiveInt, SourceBoth,
    "Fewest Spark partitions to read with: large queue ranges are split to reach it.",
    default = "(one per queue)")

  /** SQL92 property filter. */
  val SqlFilter: Unset[String] = unset("sqlFilter", Sql92, SourceBoth,
    "Reads only messages the broker's SQL92 filter matches (needs enablePropertyFilter=true on " +
      "brokers). " +
      "Excludes a subExpression other than *.",
    value = "SQL92 expression over message properties, e.g. \"a > 5\"")

  /** Progress commits. */
  val ConsumerGroup: Unset[String] = unset("consumerGroup", Group, SourceBoth,
    "Executors pull as this group, and after each micro-batch the processed offsets are " +
      "committed to the brokers " +
      "for it, so RocketMQ's tools show the query's lag. The Spark checkpoint stays the source " +
      "of truth. Not set: " +
      "nothing is written to the brokers.",
    value = "consumer group name")

  /** Extra columns. */
  val IncludeExtraColumns: Defaulted[Boolean] =
    defaulted("includeExtraColumns", Bool, false, SourceBoth,
      "Adds the columns tags (string), keys (array<string>) and msgId (string) after the nine " +
        "standard ones.")

  /** Producer group of the writers. */
  val ProducerGroup: Defaulted[String] =
    defaulted("producerGroup", Group, "spark-rocketmq-writer", SinkOnly,
      "Producer group the executors' producers join.", value = "producer group name")

  /** At-least-once or exactly-once writes. */
  val DeliveryGuaranteeOption: Defaulted[DeliveryGuarantee] = defaulted("deliveryGuarantee",
    DeliveryGuaranteeKind,
    DeliveryGuarantee.AtLeastOnce, SinkOnly,
    "exactly_once sends rows as RocketMQ transactional (half) messages and commits each " +
      "micro-batch's (or batch " +
      "job's) only when Spark commits it, so consumers see every row once, even after task " +
      "retries and driver " +
      "restarts; one request per row (sendBatchMessages does not apply). See \"Exactly-once " +
      "writes\".")

  /** How long half messages wait for the driver before the broker asks it. */
  val TransactionTimeoutOption: Defaulted[Long] = defaulted("transactionTimeout",
    TransactionTimeout,
    2L * 60 * 1000, SinkOnly,
    "With exactly_once: the driver commits a task's half messages itself within half this time " +
      "of the task's " +
      "first send; later, and after a driver crash, the broker's check-back commits them from " +
      "the decisions " +
      "kept beside the checkpoint. A write refuses a timeout under twice the brokers' " +
      "transactionCheckInterval " +
      "(60s with RocketMQ 5's defaults): a check round must fall in its second half, while the " +
      "messages are " +
      "immune, to see the driver's commits. A broker gives a half message up transactionCheckMax " +
      "check rounds " +
      "after it is sent, counting the rounds before this timeout is over: a write refuses a " +
      "timeout that " +
      "leaves fewer than 3 check-backs (above 6m with RocketMQ 5's defaults, 15 rounds of 30 s).")

  /**
   * The brokers' check-back settings as the user states them: a least-privilege user cannot ask.
   */
  val BrokerCheckInterval: Unset[Long] = unset("brokerTransactionCheckInterval", Duration, SinkOnly,
    "With exactly_once: the brokers' transactionCheckInterval, taken instead of asking each " +
      "broker group (an " +
      "admin request that least-privilege credentials may not make). Unset, it is asked; a group " +
      "that will " +
      "not say is assumed to run RocketMQ 5's default (30s), with a warning and " +
      "brokerChecks=assumed in the " +
      "sink's progress.", default = "(asked of the brokers)")

  val BrokerCheckMax: Unset[Int] = unset("brokerTransactionCheckMax", PositiveInt, SinkOnly,
    "With exactly_once: the brokers' transactionCheckMax (check rounds before a half message is " +
      "given up), " +
      "taken instead of asking, as brokerTransactionCheckInterval. Unset, it is asked, else " +
      "RocketMQ 5's " +
      "default (15) is assumed, with a warning.", default = "(asked of the brokers)")

  /** A cap on resends of one message. */
  val SendRetries: Unset[Int] = unset("sendRetries", NonNegativeInt, SinkOnly,
    "Most resends of one message whose send failed for a retryable reason; then the task fails. " +
      "Unset, resends go " +
      "on while retryTimeoutMs lasts.", default = "(as many as retryTimeoutMs allows)")

  /** Compression threshold. */
  val CompressionThreshold: Defaulted[Int] = defaulted("compressionThreshold", PositiveInt, 4096,
    SinkOnly,
    "Bodies larger than this are compressed by the producer (consumers decompress them " +
      "transparently).",
    value = "positive integer (bytes)")

  /** Delayed delivery. */
  val DeliveryDelayMs: Unset[Long] = unset("deliveryDelayMs", PositiveLong, SinkOnly,
    "Delivers every message this long after it is sent (RocketMQ 5 timer messages); a " +
      "deliverTime column wins.",
    value = "positive integer (ms)")

  /** ACL access key. */
  val AccessKey: Unset[String] = unset("accessKey", Text, Everywhere,
    "Access key of RocketMQ ACL credentials (4.x/5.x plain ACL and RocketMQ 5 authentication); " +
      "every request is " +
      "signed with it and secretKey. Credentials are taken whole from the first place that sets " +
      "any: these " +
      "options, else the Spark configuration (spark.rocketmq.accessKey, " +
      "spark.rocketmq.secretKey, " +
      "spark.rocketmq.securityToken), else the environment (ROCKETMQ_ACCESS_KEY, " +
      "ROCKETMQ_SECRET_KEY, " +
      "ROCKETMQ_SECURITY_TOKEN).",
    value = "access key", default = "(none: no credentials)")

  /** ACL secret. */
  val SecretKey: Unset[String] = unset("secretKey", Text, Everywhere,
    "Secret of the access key (see accessKey for where else it may come from). Never shown in " +
      "logs, plans, " +
      "progress or errors.",
    value = "secret key")

  /** Temporary credentials. */
  val SecurityToken: Unset[String] = unset("securityToken", Text, Everywhere,
    "Security token of temporary credentials, with accessKey and secretKey. Never shown.",
    value = "token")

  /** Namespace of topics and groups. */
  val Namespace: Unset[String] = unset("namespace", NamespaceName, Everywhere,
    "Namespace of the topics and groups: a topic t is read and written as namespace%t on the " +
      "brokers, as " +
      "RocketMQ's clients do; the topic column holds the plain name.")

  /** TLS. */
  val UseTLS: Defaulted[Boolean] = defaulted("useTLS", Bool, false, Everywhere,
    "Connects to the name servers and brokers over TLS (for clusters that require it).")

  /** Access channel. */
  val AccessChannelOption: Defaulted[AccessChannel] = defaulted("accessChannel", AccessChannelKind,
    AccessChannel.LOCAL, Everywhere,
    "RocketMQ's access channel: CLOUD for managed services that ask for it.")

  /** Whether the catalog may delete topics. */
  val AllowDropTable: Defaulted[Boolean] = defaulted("allowDropTable", Bool, false, CatalogOnly,
    "Of the RocketMQ catalog (`spark.sql.catalog.<name>.allowDropTable`): whether DROP TABLE " +
      "deletes the topic, " +
      "and every message in it, from the brokers and the name servers. false: DROP TABLE fails, " +
      "saying how to " +
      "allow it. Any other option of this table set on the catalog applies to all its tables: " +
      "the connection's " +
      "(nameServer, credentials, namespace, useTLS …) and the defaults of its queries.")

  /** Every option, in declaration order (the option reference's). */
  lazy val registry: Seq[RocketMQOption[_]] = declared.toList
}
