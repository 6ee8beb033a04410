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

package org.apache.spark.sql.rocketmq.errors

import org.apache.spark.sql.rocketmq.common.RocketMQQueue

/**
 * The sub-conditions of the connector's errors, with the details each names: why offsets were lost,
 * why a pull or send gave up, which driver or catalog request failed. [[RocketMQErrors]] turns them
 * into exceptions.
 */
private[rocketmq] object RocketMQErrorKinds {

  /** Why offsets were lost: a sub-condition of ROCKETMQ_DATA_LOSS and the details it names. */
  sealed abstract class DataLossReason(val condition: String, val details: (String, String)*)

  object DataLossReason {
    final case class Expired(minOffset: Long)
      extends DataLossReason("EXPIRED", "minOffset" -> minOffset.toString)
    case object BeingRemoved extends DataLossReason("BEING_REMOVED")
    case object ConsumeQueueGone extends DataLossReason("CONSUME_QUEUE_GONE")
    final case class Truncated(maxOffset: Long)
      extends DataLossReason("TRUNCATED", "maxOffset" -> maxOffset.toString)
    final case class TopicRecreated(maxOffset: Long)
      extends DataLossReason("TOPIC_RECREATED", "maxOffset" -> maxOffset.toString)
    case object OffsetsWentBack extends DataLossReason("OFFSETS_WENT_BACK")
    case object SkippedByBroker extends DataLossReason("SKIPPED_BY_BROKER")
  }

  /**
   * Why a pull or send failed for good: a sub-condition of ROCKETMQ_PULL_FAILED or
   * ROCKETMQ_SEND_FAILED.
   */
  sealed abstract class GaveUp(val condition: String, val details: (String, String)*)

  object GaveUp {
    case object NotRetryable extends GaveUp("NOT_RETRYABLE")
    case object ExactlyOnce extends GaveUp("EXACTLY_ONCE")
    final case class BudgetSpent(retries: Long, elapsedMs: Long, retryTimeoutMs: Long)
      extends GaveUp("RETRIES_EXHAUSTED", "retries" -> retries.toString,
        "elapsedMs" -> elapsedMs.toString,
        "retryTimeoutMs" -> retryTimeoutMs.toString)
    final case class TopicNotFound(nameServer: String)
      extends GaveUp("TOPIC_NOT_FOUND", "nameServer" -> nameServer)
    final case class SendRetriesReached(retries: Long)
      extends GaveUp("SEND_RETRIES_REACHED", "retries" -> retries.toString)
    final case class TooLarge(sendBatchBytes: Long)
      extends GaveUp("TOO_LARGE", "sendBatchBytes" -> sendBatchBytes.toString)
  }

  /**
   * A driver request to a broker: a sub-condition of ROCKETMQ_BROKER_REQUEST_FAILED and its
   * details.
   */
  sealed abstract class BrokerRequest(val condition: String, val details: (String, String)*) {
    def topic: String
  }

  object BrokerRequest {
    final case class TopicStats(topic: String)
      extends BrokerRequest("TOPIC_STATS", "topic" -> topic)
    final case class QueueOffsets(
        queue: RocketMQQueue) extends BrokerRequest("QUEUE_OFFSETS", "queue" -> queue.toString) {
      override def topic: String = queue.topic
    }
    final case class GroupOffset(group: String, queue: RocketMQQueue)
      extends BrokerRequest("GROUP_OFFSET", "group" -> group, "queue" -> queue.toString) {
      override def topic: String = queue.topic
    }
    final case class GroupOffsetTable(group: String, topic: String)
      extends BrokerRequest("GROUP_OFFSET_TABLE", "group" -> group, "topic" -> topic)
    final case class IndexProgress(topic: String)
      extends BrokerRequest("INDEX_PROGRESS", "topic" -> topic)
    final case class SearchOffset(queue: RocketMQQueue, timestampMs: Long)
      extends BrokerRequest("SEARCH_OFFSET", "queue" -> queue.toString,
        "timestamp" -> timestampMs.toString) {
      override def topic: String = queue.topic
    }
    final case class CommitOffset(group: String, queue: RocketMQQueue, offset: Long)
      extends BrokerRequest("COMMIT_OFFSET", "group" -> group, "queue" -> queue.toString,
        "offset" -> offset.toString) {
      override def topic: String = queue.topic
    }
  }

  /**
   * A request of the catalog's topic administration: a sub-condition of
   * ROCKETMQ_ADMIN_REQUEST_FAILED and its details. `topic`: the topic it acts on, for an access
   * denial (None for the name server's lists).
   */
  sealed abstract class AdminRequest(val condition: String, val details: (String, String)*) {
    def topic: Option[String] = None
  }

  object AdminRequest {
    case object ListTopics extends AdminRequest("LIST_TOPICS")
    case object ClusterBrokers extends AdminRequest("CLUSTER_INFO")
    final case class TopicRoute(name: String) extends AdminRequest("TOPIC_ROUTE", "topic" -> name) {
      override def topic: Option[String] = Some(name)
    }
    final case class CreateTopic(name: String, queues: Int)
      extends AdminRequest("CREATE_TOPIC", "topic" -> name, "queues" -> queues.toString) {
      override def topic: Option[String] = Some(name)
    }
    final case class DeleteTopic(
        name: String) extends AdminRequest("DELETE_TOPIC", "topic" -> name) {
      override def topic: Option[String] = Some(name)
    }
    final case class DeleteRoute(
        name: String) extends AdminRequest("DELETE_ROUTE", "topic" -> name) {
      override def topic: Option[String] = Some(name)
    }
  }
}
