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

import org.apache.spark.sql.rocketmq.common.{RocketMQExpectedGroups, RocketMQQueue}
import org.apache.spark.sql.rocketmq.common.RocketMQOffsetRangeLimit
import org.apache.spark.sql.rocketmq.common.RocketMQOffsetRangeLimit.{Earliest, Latest}
import org.apache.spark.sql.rocketmq.options.RocketMQOption._
import org.apache.spark.sql.rocketmq.options.RocketMQOptionKind._

/**
 * The options of reads, and those every query has (the name server, the topic, the driver's
 * metadata requests and retries), declared before the writes' in [[RocketMQOptions]].
 */
private[options] trait RocketMQReadOptions extends RocketMQOptionRegistry {

  /** Name server address(es) of the RocketMQ cluster. */
  val NameServer: Required[String] =
    required("nameServer", RocketMQOptionKind.NameServer, Everywhere,
      "Name server address(es) of the RocketMQ cluster.")

  /** Topic(s) to read, or the topic every row is written to. */
  val Topic: Unset[Seq[String]] = unset("topic", Topics, Everywhere,
    "Topic(s) to read. When writing, the topic every row goes to; it overrides a `topic` column.",
    value = "topic name; a comma-separated list when reading",
    default = "(to read: this or topicPattern)")

  /** A pattern over the cluster's topic names, read in place of `topic`. */
  val TopicPattern: Unset[java.util.regex.Pattern] = unset("topicPattern", TopicPatternKind,
    SourceBoth,
    "Instead of `topic`: every topic of the cluster whose whole name matches this Java regular " +
      "expression (RocketMQ's retry, dead-letter and system topics never match). A batch read " +
      "lists the topics once; a stream also reads each topic that starts to match while it runs, " +
      "from its first offset, and treats one that disappears as a deleted topic.",
    value = "Java regular expression")

  /** Start of a read. */
  val StartingOffsets: DefaultPerQuery[RocketMQOffsetRangeLimit] = declare(DefaultPerQuery(
    "startingOffsets",
    Offsets, batchDefault = Earliest, streamDefault = Latest, SourceBoth,
    "Where a query starts. Queues missing from the JSON start at their earliest offset. `latest` " +
      "(or -1) is not " +
      "allowed in batch queries. `group`: where consumerGroup committed its progress on the " +
      "brokers, each queue; queues the group has not committed start at groupOffsetFallback.",
    """"earliest", "latest" (streaming only), "group", or JSON """ +
      """{"topic":{"broker":{"0":23}}} (-2 = earliest, -1 = latest)"""))

  /** Where a queue the group has not committed starts, with startingOffsets=group. */
  val GroupOffsetFallback: Defaulted[RocketMQOffsetRangeLimit] = defaulted("groupOffsetFallback",
    GroupFallbackKind,
    Latest, SourceBoth,
    "With startingOffsets=group: where a queue for which consumerGroup has committed no offset " +
      "starts (as a RocketMQ consumer of a new group starts at the latest offset by default).",
    value = """"earliest" or "latest"""")

  /** End of a batch read. */
  val EndingOffsets: Defaulted[RocketMQOffsetRangeLimit] = defaulted("endingOffsets", Offsets,
    Latest, BatchOnly,
    "Where a batch query ends (exclusive). Queues missing from the JSON end at their latest " +
      "offset. -2 (earliest) is not allowed.",
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
    "Pull requests a task keeps under way for its queue: the next pulls are issued while " +
      "the last one is turned into rows (without a filter; a filtered read pulls one at a time). " +
      "While the task still waits for answers with all of them under way, more: up to 8 times " +
      "as many with a broker nearby; across a distant network (no answer within 50 ms) as many " +
      "as the round trip needs, while that many of the largest answer fit in readAheadBytes (at " +
      "most 4096). Through a RocketMQ 5 proxy at most 3, each over a connection of the task's " +
      "own. 1: one pull at a time.")

  /** Bound on answers read ahead. */
  val ReadAheadBytes: Defaulted[Long] = defaulted("readAheadBytes", PositiveLong, 64L * 1024 * 1024,
    SourceBoth,
    "No pull is issued ahead while the answers a task holds unread carry this many message bytes " +
      "(a broker bounds one answer, by default to 256 KiB); a window widened past pullsInFlight " +
      "keeps its pulls' answers within it too.",
    value = "positive integer (bytes)")

  /** Data-loss policy. */
  val FailOnDataLoss: Defaulted[Boolean] = defaulted("failOnDataLoss", Bool, true, SourceBoth,
    "Whether to fail when data may have been lost (expired or deleted messages). Batch queries " +
      "always fail on lost data.")

  /** The broker groups that must serve the topics read. */
  val ExpectedBrokerGroups: Unset[RocketMQExpectedGroups] = unset("expectedBrokerGroups",
    ExpectedGroupsKind,
    SourceBoth,
    "Broker groups each topic read must be served by, by name or by number. The name server " +
      "forgets a group whose brokers are all down (a master without replicas), so without this a " +
      "read sees only the groups still there; with it, a topic not served by them waits " +
      "retryTimeoutMs for them, then fails naming them.")

  /** Driver metadata timeout. */
  val RequestTimeoutMs: Defaulted[Long] = defaulted("requestTimeoutMs", PositiveLong, 10000L,
    Everywhere,
    "Timeout of each metadata request (topic routes, queue offsets) to the name server and " +
      "brokers.",
    value = "positive integer (ms)")

  /** Driver metadata attempts. */
  val MetadataRetries: Defaulted[Int] = defaulted("metadataRetries", PositiveInt, 3, Everywhere,
    "Attempts of a metadata request that failed for a retryable reason (timeout, connection " +
      "refused). A broker's queue offsets, which planning waits for within retryTimeoutMs, are " +
      "asked once an attempt of that wait.")

  /** Pause between metadata attempts. */
  val MetadataRetryIntervalMs: Defaulted[Long] =
    defaulted("metadataRetryIntervalMs", NonNegativeLong, 1000L,
      Everywhere, "Pause between two attempts of a metadata request.", value = "integer >= 0 (ms)")

  /** How long tasks retry and the driver waits through a broker outage. */
  val RetryTimeoutMs: Defaulted[Long] = defaulted("retryTimeoutMs", NonNegativeLong, 60000L,
    Everywhere,
    "How long a task keeps retrying a pull or send that failed for a reason a broker restart " +
      "explains (timeout, connection refused, broker busy, broker or route missing), pausing 100 " +
      "ms to 2 s between attempts, and how long the driver waits for a broker missing from the " +
      "name server's routes; then the query fails naming the broker. A broker that keeps its " +
      "connections open and never answers is unavailable from the first request to it that times " +
      "out (requestTimeoutMs): the driver fails retryTimeoutMs later, once the request then in " +
      "progress has timed out too (70 to 80 s on the defaults); a write task's send to it fails " +
      "after sendTimeoutMs (at least 3 s for a task's first send: RocketMQ's client looks for " +
      "timed-out sends every second, from 3 s after it starts), then retryTimeoutMs and at most " +
      "one more sendTimeoutMs (63 to 70 s), and Spark runs the task again " +
      "(spark.task.maxFailures). 0: no retries.",
    value = "integer >= 0 (ms)")

  /** Start of a read by time. */
  val StartingTimestamp: Unset[Long] = unset("startingTimestamp", EpochMillis, SourceBoth,
    "Start every queue at its first message stored at or after this time (latest if none). " +
      "Excludes the other start options.")

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
      "after t minus this: a message is stored after it is born, but its born time is the " +
      "producer's clock, which may run ahead of the broker's. Unset, born-time filters do not " +
      "narrow the read (Spark applies them to every row).",
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

  /** Byte limit of a micro-batch. */
  val MaxBytesPerTrigger: Unset[Long] = unset("maxBytesPerTrigger", PositiveLong, StreamOnly,
    "Most bytes of message bodies one micro-batch reads, estimated from what an offset carried " +
      "in the batch before (the first batch: a sample of the queues' first messages); a message " +
      "larger than this goes alone. With maxOffsetsPerTrigger, the tighter of the two holds.",
    value = "positive integer (bytes)")

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
      "brokers). Excludes a subExpression other than *.",
    value = "SQL92 expression over message properties, e.g. \"a > 5\"")

  /** Progress commits. */
  val ConsumerGroup: Unset[String] = unset("consumerGroup", Group, SourceBoth,
    "Executors pull as this group, and after each micro-batch the processed offsets are " +
      "committed to the brokers for it, so RocketMQ's tools show the query's lag. The Spark " +
      "checkpoint stays the source of truth. Not set: nothing is written to the brokers.",
    value = "consumer group name")

  /** Extra columns. */
  val IncludeExtraColumns: Defaulted[Boolean] =
    defaulted("includeExtraColumns", Bool, false, SourceBoth,
      "Adds the columns tags (string), keys (array<string>) and msgId (string) after the nine " +
        "standard ones.")
}
