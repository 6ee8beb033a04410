package org.apache.spark.sql.rocketmq

import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.ObjectMapper

import org.apache.spark.sql.connector.read.streaming.Offset

/**
 * A streaming position: for each queue, the next offset to read (a queue's max offset is
 * exclusive, so a caught-up queue holds its max). Stored in the checkpoint as
 * `{"version":1,"offsets":{"topic":{"broker":{"queueId":nextOffset}}}}`; the version is checked on
 * read so that a checkpoint from a newer, incompatible connector fails clearly instead of being
 * misread.
 */
private[rocketmq] final case class RocketMQSourceOffset(queueOffsets: Map[RocketMQQueue, Long]) extends Offset {
  override def json(): String =
    s"""{"version":${RocketMQSourceOffset.Version},"offsets":${RocketMQOffsetsJson.format(queueOffsets)}}"""
}

private[rocketmq] object RocketMQSourceOffset {
  /** The format this connector writes; it reads every version up to this one. */
  val Version = 1

  private val mapper = new ObjectMapper()

  def apply(offset: Offset): RocketMQSourceOffset = offset match {
    case o: RocketMQSourceOffset => o
    case other => parse(other.json())
  }

  def parse(json: String): RocketMQSourceOffset = {
    def fail(detail: String): Nothing = throw RocketMQErrors.invalidCheckpointOffset(json, detail)
    val root =
      try mapper.readTree(json)
      catch { case NonFatal(e) => fail(s"not valid JSON: ${e.getMessage.linesIterator.next()}") }
    if (root == null || !root.isObject) fail("not a JSON object")
    val version = Option(root.get("version")).filter(_.canConvertToInt).map(_.asInt())
      .getOrElse(fail("no integer 'version' field"))
    if (version < 1 || version > Version) {
      fail(s"it was written in format version $version, and this connector reads versions 1 to $Version; " +
        "use the connector version that wrote the checkpoint, or start a new checkpoint")
    }
    val offsets = Option(root.get("offsets")).filter(_.isObject).getOrElse(fail("no 'offsets' object"))
    RocketMQSourceOffset(RocketMQOffsetsJson.parse("checkpoint offset", mapper.writeValueAsString(offsets)))
  }
}
