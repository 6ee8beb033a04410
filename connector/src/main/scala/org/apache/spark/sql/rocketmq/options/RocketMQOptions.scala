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

import org.apache.rocketmq.client.AccessChannel
import org.apache.rocketmq.common.topic.TopicValidator

import org.apache.spark.sql.catalyst.util.CaseInsensitiveMap
import org.apache.spark.sql.rocketmq.common.{
  RocketMQConnection, RocketMQRateCap, RocketMQTopicSelection
}
import org.apache.spark.sql.rocketmq.common.RocketMQOffsetRangeLimit
import org.apache.spark.sql.rocketmq.common.RocketMQOffsetRangeLimit.{
  Earliest, EarliestOffset, Latest, LatestOffset
}
import org.apache.spark.sql.rocketmq.errors.RocketMQErrors
import org.apache.spark.sql.rocketmq.options.RocketMQOption._
import org.apache.spark.sql.rocketmq.options.RocketMQOptionKind._

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
    RocketMQConnectionOptions.resolve(this, RocketMQConnectionOptions.activeSparkConf,
      sys.env.get)

  /**
   * The value set for `option`, trimmed; for names and expressions an empty value counts as unset.
   */
  def rawValue(option: RocketMQOption[_]): Option[String] =
    options.get(option.key).map(_.trim).filterNot(v => v.isEmpty && option.kind.emptyIsUnset)

  private[options] def parsed[T](option: RocketMQOption[T]): Option[T] =
    rawValue(option).map(option.kind.parse(option.key, _))

  def apply[T](option: Required[T]): T =
    parsed(option).getOrElse(throw RocketMQErrors.missingOption(option.key))

  def apply[T](option: Defaulted[T]): T = parsed(option).getOrElse(option.default)

  def apply[T](option: Unset[T]): Option[T] = parsed(option)

  /** The cap on the whole read's or write's rate (maxMessagesPerSecond, maxBytesPerSecond). */
  def rateCap: RocketMQRateCap =
    RocketMQRateCap(this(MaxMessagesPerSecond), this(MaxBytesPerSecond))

  /** What a read subscribes to: option `topic`, or `topicPattern` (one of them, not both). */
  def topicSelection: RocketMQTopicSelection = (this(Topic), this(TopicPattern)) match {
    case (Some(_), Some(_)) => throw RocketMQErrors.conflictingOptions(Seq(Topic.key,
        TopicPattern.key))
    case (Some(topics), None) => RocketMQTopicSelection.Named(topics)
    case (None, Some(pattern)) => RocketMQTopicSelection.Matching(pattern)
    case (None, None) => throw RocketMQErrors.missingOption(Topic.key)
  }

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
private[rocketmq] object RocketMQOptions extends RocketMQOptionRegistry with RocketMQReadOptions {

  /** Producer send timeout. */
  val SendTimeoutMs: Defaulted[Long] = defaulted("sendTimeoutMs", PositiveLong, 3000L, SinkOnly,
    "Timeout of one send attempt; each resend (see retryTimeoutMs) has a timeout of its own.",
    value = "positive integer (ms)")

  /** Bound on unacknowledged sends per task. */
  val MaxInFlightMessages: Defaulted[Int] = defaulted("maxInFlightMessages", PositiveInt, 10000,
    SinkOnly,
    "Most messages a write task has sent but not yet seen acknowledged (a count; " +
      "maxInFlightBytes bounds their bytes). Each request carries up to sendBatchMessages of " +
      "them, so this also bounds requests in flight; with one message per request a task keeps " +
      "at most 32 requests unacknowledged, and under a real-time or continuous trigger at most 4 " +
      "(rows that come meanwhile go together in the next).")

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
      "maxMessageSize (4 MiB by default), which bounds a whole batch.",
    value = "positive integer (bytes)")

  /** Producer group of the writers. */
  val ProducerGroup: Defaulted[String] =
    defaulted("producerGroup", Group, "spark-rocketmq-writer", SinkOnly,
      "Producer group the executors' producers join.", value = "producer group name")

  /** At-least-once or exactly-once writes. */
  val DeliveryGuaranteeOption: Defaulted[DeliveryGuarantee] = defaulted("deliveryGuarantee",
    DeliveryGuaranteeKind,
    DeliveryGuarantee.AtLeastOnce, SinkOnly,
    "exactly_once sends rows as RocketMQ transactional (half) messages and commits each " +
      "micro-batch's (or batch job's) only when Spark commits it, so consumers see every row " +
      "once, even after task retries and driver restarts; one request per row (sendBatchMessages " +
      "does not apply). See \"Exactly-once writes\".")

  /** How long half messages wait for the driver before the broker asks it. */
  val TransactionTimeoutOption: Defaulted[Long] = defaulted("transactionTimeout",
    TransactionTimeout,
    2L * 60 * 1000, SinkOnly,
    "With exactly_once: the driver commits a task's half messages itself within half this time " +
      "of the task's first send; later, and after a driver crash, the broker's check-back " +
      "commits them from the decisions kept beside the checkpoint. A write refuses a timeout " +
      "under twice the brokers' transactionCheckInterval (60s with RocketMQ 5's defaults): a " +
      "check round must fall in its second half, while the messages are immune, to see the " +
      "driver's commits. A broker gives a half message up transactionCheckMax check rounds after " +
      "it is sent, counting the rounds before this timeout is over: a write refuses a timeout " +
      "that leaves fewer than 3 check-backs (above 6m with RocketMQ 5's defaults, 15 rounds of " +
      "30 s).")

  /**
   * The brokers' check-back settings as the user states them: a least-privilege user cannot ask.
   */
  val BrokerCheckInterval: Unset[Long] = unset("brokerTransactionCheckInterval", Duration, SinkOnly,
    "With exactly_once: the brokers' transactionCheckInterval, taken instead of asking each " +
      "broker group (an admin request that least-privilege credentials may not make). Unset, it " +
      "is asked; a group that will not say is assumed to run RocketMQ 5's default (30s), with a " +
      "warning and brokerChecks=assumed in the sink's progress.",
    default = "(asked of the brokers)")

  val BrokerCheckMax: Unset[Int] = unset("brokerTransactionCheckMax", PositiveInt, SinkOnly,
    "With exactly_once: the brokers' transactionCheckMax (check rounds before a half message is " +
      "given up), taken instead of asking, as brokerTransactionCheckInterval. Unset, it is " +
      "asked, else RocketMQ 5's default (15) is assumed, with a warning.",
    default = "(asked of the brokers)")

  /** A cap on resends of one message. */
  val SendRetries: Unset[Int] = unset("sendRetries", NonNegativeInt, SinkOnly,
    "Most resends of one message whose send failed for a retryable reason; then the task fails. " +
      "Unset, resends go on while retryTimeoutMs lasts.",
    default = "(as many as retryTimeoutMs allows)")

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

  /** Whether writes record RocketMQ message traces. */
  val TraceEnabled: Defaulted[Boolean] = defaulted("traceEnabled", Bool, false, SinkOnly,
    "Records each message written in RocketMQ's message trace (a Pub record in traceTopic, as " +
      "RocketMQ's own producers write with trace on), for consoles to show where it went. Reads " +
      "are not traced. See \"Message traces\".")

  /** Where trace records go. */
  val TraceTopic: Defaulted[String] = defaulted("traceTopic", OneTopic,
    TopicValidator.RMQ_SYS_TRACE_TOPIC, SinkOnly,
    "The topic trace records go to, with traceEnabled (with accessChannel CLOUD, the service's " +
      "own trace topic instead). It must exist (brokers with traceTopicEnable=true create " +
      "RMQ_SYS_TRACE_TOPIC), unless the brokers create topics on first use.")

  /** A cap on a read's or write's messages a second, shared by its tasks. */
  val MaxMessagesPerSecond: Unset[Long] = unset("maxMessagesPerSecond", PositiveLong, Everywhere,
    "The most messages a second the whole read or write moves, shared out over the tasks that " +
      "run at once (a managed service's TPS quota, say): its tasks slow down to hold it.",
    value = "positive integer")

  /** A cap on a read's or write's bytes (of message bodies) a second, shared by its tasks. */
  val MaxBytesPerSecond: Unset[Long] = unset("maxBytesPerSecond", PositiveLong, Everywhere,
    "The most bytes of message bodies a second the whole read or write moves, shared out over " +
      "the tasks that run at once; with maxMessagesPerSecond, the tighter of the two holds.",
    value = "positive integer (bytes)")

  /** ACL access key. */
  val AccessKey: Unset[String] = unset("accessKey", Text, Everywhere,
    "Access key of RocketMQ ACL credentials (4.x/5.x plain ACL and RocketMQ 5 authentication); " +
      "every request is signed with it and secretKey. Credentials are taken whole from the first " +
      "place that sets any: these options, else the Spark configuration " +
      "(spark.rocketmq.accessKey, spark.rocketmq.secretKey, spark.rocketmq.securityToken), else " +
      "the environment (ROCKETMQ_ACCESS_KEY, ROCKETMQ_SECRET_KEY, ROCKETMQ_SECURITY_TOKEN).",
    value = "access key", default = "(none: no credentials)")

  /** ACL secret. */
  val SecretKey: Unset[String] = unset("secretKey", Text, Everywhere,
    "Secret of the access key (see accessKey for where else it may come from). Never shown in " +
      "logs, plans, progress or errors.",
    value = "secret key")

  /** Temporary credentials. */
  val SecurityToken: Unset[String] = unset("securityToken", Text, Everywhere,
    "Security token of temporary credentials, with accessKey and secretKey. Never shown.",
    value = "token")

  /** Namespace of topics and groups. */
  val Namespace: Unset[String] = unset("namespace", NamespaceName, Everywhere,
    "Namespace of the topics and groups: a topic t is read and written as namespace%t on the " +
      "brokers, as RocketMQ's clients do; the topic column holds the plain name.")

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
      "deletes the topic, and every message in it, from the brokers and the name servers. false: " +
      "DROP TABLE fails, saying how to allow it. Any other option of this table set on the " +
      "catalog applies to all its tables: the connection's (nameServer, credentials, namespace, " +
      "useTLS …) and the defaults of its queries.")

}
