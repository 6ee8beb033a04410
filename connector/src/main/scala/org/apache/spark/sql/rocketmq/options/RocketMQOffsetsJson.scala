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

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import com.fasterxml.jackson.databind.node.ObjectNode

import org.apache.spark.sql.rocketmq.common.RocketMQQueue
import org.apache.spark.sql.rocketmq.errors.RocketMQErrors

/**
 * Per-queue values as JSON, the format users write in `startingOffsets`/`endingOffsets` (and times
 * in `…ByTimestamp`) and the one offsets are stored in:
 * `{"topic":{"brokerName":{"queueId":value}}}`.
 */
private[rocketmq] object RocketMQOffsetsJson {
  private val mapper = new ObjectMapper()

  /**
   * What is wrong with a JSON value: a sub-condition shared by ROCKETMQ_INVALID_OFFSETS_JSON (an
   * option) and ROCKETMQ_INVALID_CHECKPOINT_OFFSET (a checkpoint), and the details it names.
   */
  final case class Malformed(condition: String, details: Seq[(String, String)])

  /** Parses JSON text. */
  def parse(json: String): Either[Malformed, Map[RocketMQQueue, Long]] =
    readTree(json).flatMap(parse)

  /** Parses JSON text, or fails with an error naming the option `key` and the value. */
  def parseOption(key: String, json: String): Map[RocketMQQueue, Long] = parse(json) match {
    case Right(values) => values
    case Left(Malformed(condition, details)) =>
      throw RocketMQErrors.invalidOffsetsJson(key, json, condition, details)
  }

  /** The tree of JSON text, or why there is none. */
  def readTree(json: String): Either[Malformed, JsonNode] =
    try Option(mapper.readTree(json)).toRight(Malformed("NOT_AN_OBJECT", Nil))
    catch {
      case NonFatal(e) =>
        Left(Malformed("NOT_JSON", Seq("parseError" -> e.getMessage.linesIterator.next())))
    }

  /** Parses a JSON tree, checking its shape level by level. */
  def parse(root: JsonNode): Either[Malformed, Map[RocketMQQueue, Long]] = {
    def fail(condition: String, details: (String, String)*): Nothing =
      throw new MalformedShape(Malformed(condition, details))
    if (!root.isObject) return Left(Malformed("NOT_AN_OBJECT", Nil))
    try {
      val entries = for {
        topicEntry <- root.properties().asScala.toSeq
        (topic, brokers) = (topicEntry.getKey, topicEntry.getValue)
        _ = if (!brokers.isObject) fail("TOPIC_NOT_AN_OBJECT", "topic" -> topic)
        brokerEntry <- brokers.properties().asScala.toSeq
        (broker, queues) = (brokerEntry.getKey, brokerEntry.getValue)
        _ = if (!queues.isObject) fail("BROKER_NOT_AN_OBJECT", "topic" -> topic, "broker" -> broker)
        queueEntry <- queues.properties().asScala.toSeq
      } yield {
        val queueId = RocketMQOptionKind.parseInt(queueEntry.getKey).getOrElse(
          fail("QUEUE_ID_NOT_AN_INTEGER", "broker" -> broker, "queueId" -> queueEntry.getKey))
        val queue = RocketMQQueue(topic, broker, queueId)
        val value = queueEntry.getValue
        if (!value.isIntegralNumber || !value.canConvertToLong) {
          fail("VALUE_NOT_AN_INTEGER", "queue" -> queue.toString, "found" -> value.toString)
        }
        queue -> value.asLong()
      }
      Right(entries.toMap)
    } catch { case m: MalformedShape => Left(m.malformed) }
  }

  /** Leaves the walk over the tree at the first problem (no stack trace: it never escapes). */
  private final class MalformedShape(val malformed: Malformed)
    extends Exception(null, null, false, false)

  /** Renders values in the same format, sorted, so equal maps give equal strings. */
  def format(values: Map[RocketMQQueue, Long]): String = {
    val root: ObjectNode = mapper.createObjectNode()
    values.toSeq.sortBy(_._1).foreach { case (q, value) =>
      val topicNode =
        Option(root.get(q.topic)).map(_.asInstanceOf[ObjectNode]).getOrElse(root.putObject(q.topic))
      val brokerNode =
        Option(topicNode.get(q.brokerName)).map(_.asInstanceOf[ObjectNode]).getOrElse(
          topicNode.putObject(q.brokerName))
      brokerNode.put(q.queueId.toString, value)
    }
    mapper.writeValueAsString(root)
  }
}
