package org.apache.spark.sql.rocketmq

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import com.fasterxml.jackson.databind.node.ObjectNode

/**
 * Per-queue offsets as JSON, the format users write in `startingOffsets`/`endingOffsets` and the
 * one offsets are stored in: `{"topic":{"brokerName":{"queueId":offset}}}`.
 */
private[rocketmq] object RocketMQOffsetsJson {
  private val mapper = new ObjectMapper()

  private val expected =
    """a JSON object such as {"topicA":{"broker-a":{"0":23,"1":-2}}} (topic -> broker -> queue id -> offset)"""

  /** Parses `json`; errors name `option` and the offending value. */
  def parse(option: String, json: String): Map[RocketMQQueue, Long] = {
    def fail(detail: String): Nothing =
      throw RocketMQErrors.invalidOption(option, json, s"$detail; expected $expected")

    val root: JsonNode =
      try mapper.readTree(json)
      catch { case NonFatal(e) => fail(s"not valid JSON (${e.getMessage.linesIterator.next()})") }
    if (root == null || !root.isObject) fail("not a JSON object")

    val entries = for {
      topicEntry <- root.properties().asScala.toSeq
      (topic, brokers) = (topicEntry.getKey, topicEntry.getValue)
      _ = if (!brokers.isObject) fail(s"topic '$topic' must map to an object of brokers")
      brokerEntry <- brokers.properties().asScala.toSeq
      (broker, queues) = (brokerEntry.getKey, brokerEntry.getValue)
      _ = if (!queues.isObject) fail(s"broker '$broker' of topic '$topic' must map to an object of queue ids")
      queueEntry <- queues.properties().asScala.toSeq
    } yield {
      val queueId =
        try queueEntry.getKey.toInt
        catch { case _: NumberFormatException => fail(s"queue id '${queueEntry.getKey}' is not an integer") }
      val value = queueEntry.getValue
      if (!value.isIntegralNumber || !value.canConvertToLong) {
        fail(s"offset of queue $topic/$broker/$queueId must be an integer, not ${value.toString}")
      }
      RocketMQQueue(topic, broker, queueId) -> value.asLong()
    }
    entries.toMap
  }

  /** Renders offsets in the same format, sorted, so equal maps give equal strings. */
  def format(offsets: Map[RocketMQQueue, Long]): String = {
    val root: ObjectNode = mapper.createObjectNode()
    offsets.toSeq.sortBy(_._1).foreach { case (q, offset) =>
      val topicNode = Option(root.get(q.topic)).map(_.asInstanceOf[ObjectNode]).getOrElse(root.putObject(q.topic))
      val brokerNode =
        Option(topicNode.get(q.brokerName)).map(_.asInstanceOf[ObjectNode]).getOrElse(topicNode.putObject(q.brokerName))
      brokerNode.put(q.queueId.toString, offset)
    }
    mapper.writeValueAsString(root)
  }
}
