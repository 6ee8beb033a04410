package org.apache.spark.sql.rocketmq

import org.apache.rocketmq.common.message.{MessageConst, MessageExt}

import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.catalyst.expressions.codegen.UnsafeRowWriter
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

/** The fixed schema of rows read from RocketMQ: one row per message. */
private[rocketmq] object RocketMQSourceSchema {
  val schema: StructType = StructType(Seq(
    StructField("topic", StringType),
    StructField("flag", IntegerType),
    StructField("body", BinaryType),
    StructField("properties", StringType),
    StructField("brokerName", StringType),
    StructField("queueId", IntegerType),
    StructField("queueOffset", LongType),
    StructField("bornTimestamp", TimestampType),
    StructField("storeTimestamp", TimestampType)
  ))

  /** Properties the pull client adds to every message for its own bookkeeping; not the message's. */
  val clientInternalProperties: Set[String] = Set(
    MessageConst.PROPERTY_MIN_OFFSET,
    MessageConst.PROPERTY_MAX_OFFSET,
    MessageConst.PROPERTY_CONSUME_START_TIMESTAMP)
}

/**
 * Turns the messages of one queue into rows of [[RocketMQSourceSchema.schema]]. One converter
 * serves one partition reader: it writes each row into the same buffer (Spark copies rows it
 * keeps), and topic and broker names, constant per queue, are encoded once.
 */
private[rocketmq] final class RocketMQMessageToRow(queue: RocketMQQueue) {
  private val writer = new UnsafeRowWriter(RocketMQSourceSchema.schema.length)
  private val topic = UTF8String.fromString(queue.topic)
  private val brokerName = UTF8String.fromString(queue.brokerName)
  private val json = new java.lang.StringBuilder(256)

  def toRow(message: MessageExt): UnsafeRow = {
    writer.reset()
    writer.zeroOutNullBytes()
    writer.write(0, topic)
    writer.write(1, message.getFlag)
    val body = message.getBody
    if (body == null) writer.setNullAt(2) else writer.write(2, body)
    writer.write(3, UTF8String.fromString(propertiesJson(message)))
    writer.write(4, brokerName)
    writer.write(5, message.getQueueId)
    writer.write(6, message.getQueueOffset)
    writer.write(7, message.getBornTimestamp * 1000L)
    writer.write(8, message.getStoreTimestamp * 1000L)
    writer.getRow
  }

  /** The message's properties as a JSON object, without the client's bookkeeping entries. */
  private def propertiesJson(message: MessageExt): String = {
    json.setLength(0)
    json.append('{')
    val properties = message.getProperties
    if (properties != null) {
      var first = true
      val it = properties.entrySet().iterator()
      while (it.hasNext) {
        val e = it.next()
        if (!RocketMQSourceSchema.clientInternalProperties.contains(e.getKey)) {
          if (!first) json.append(',')
          first = false
          appendJsonString(e.getKey)
          json.append(':')
          appendJsonString(e.getValue)
        }
      }
    }
    json.append('}').toString
  }

  private def appendJsonString(s: String): Unit = {
    if (s == null) { json.append("null"); return }
    json.append('"')
    var i = 0
    while (i < s.length) {
      val c = s.charAt(i)
      c match {
        case '"' => json.append("\\\"")
        case '\\' => json.append("\\\\")
        case '\n' => json.append("\\n")
        case '\r' => json.append("\\r")
        case '\t' => json.append("\\t")
        case _ if c < 0x20 => json.append(f"\\u${c.toInt}%04x")
        case _ => json.append(c)
      }
      i += 1
    }
    json.append('"')
  }
}
