package org.apache.spark.sql.rocketmq

import scala.collection.mutable

/**
 * Every option key of the connector, each with what the README's option table says of it (the
 * table is generated from [[RocketMQOptionKeys.all]]). Parsing and validation live in [[RocketMQOptions]].
 */
private[rocketmq] object RocketMQOptionKeys {

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
    """"earliest", "latest" (streaming only), or JSON {"topic":{"broker":{"0":23}}} (-2 = earliest, -1 = latest)""",
    """"latest" for streaming, "earliest" for batch""", SourceBoth,
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

  /** Producer group of the writers. */
  val ProducerGroup: String = define("producerGroup", "producer group name", "spark-rocketmq-writer", SinkOnly,
    "Producer group the executors' producers join.")

  /** Send attempts after the first. */
  val SendRetries: String = define("sendRetries", "integer >= 0", "2", SinkOnly,
    "Resends of a message whose send failed for a retryable reason (timeout, connection, broker busy); then " +
      "the task fails. Messages with a shardingKey are never resent out of order: their first failure fails the task.")

  /** Compression threshold. */
  val CompressionThreshold: String = define("compressionThreshold", "positive integer (bytes)", "4096", SinkOnly,
    "Bodies larger than this are compressed by the producer (consumers decompress them transparently).")

  /** Delayed delivery. */
  val DeliveryDelayMs: String = define("deliveryDelayMs", "positive integer (ms)", "(none)", SinkOnly,
    "Delivers every message this long after it is sent (RocketMQ 5 timer messages); a deliverTime column wins.")

  /** Every option, in definition order. */
  lazy val all: Seq[OptionDoc] = registry.toList
}
