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

package org.apache.spark.sql.rocketmq

import org.apache.spark.sql.connector.read.streaming.Offset
import org.apache.spark.sql.rocketmq.common.RocketMQQueue
import org.apache.spark.sql.rocketmq.errors.RocketMQErrors
import org.apache.spark.sql.rocketmq.options.RocketMQOffsetsJson

/**
 * A streaming position: for each queue, the next offset to read (a queue's max offset is
 * exclusive, so a caught-up queue holds its max). Stored in the checkpoint as
 * `{"version":1,"offsets":{"topic":{"broker":{"queueId":nextOffset}}}}`; the version is checked on
 * read so that a checkpoint from a newer, incompatible connector fails clearly instead of being
 * misread.
 */
private[rocketmq] final case class RocketMQSourceOffset(
    queueOffsets: Map[RocketMQQueue, Long]) extends Offset {
  override def json(): String =
    s"""{"version":${RocketMQSourceOffset.Version},"offsets":${RocketMQOffsetsJson.format(
        queueOffsets)}}"""
}

private[rocketmq] object RocketMQSourceOffset {
  /** The format this connector writes; it reads every version up to this one. */
  val Version = 1

  def apply(offset: Offset): RocketMQSourceOffset = offset match {
    case o: RocketMQSourceOffset => o
    case other => parse(other.json())
  }

  def parse(json: String): RocketMQSourceOffset = {
    def fail(sub: String, details: (String, String)*): Nothing =
      throw RocketMQErrors.invalidCheckpointOffset(json, sub, details)
    val root =
      RocketMQOffsetsJson.readTree(json).fold(m => fail(m.condition, m.details: _*), identity)
    if (!root.isObject) fail("NOT_AN_OBJECT")
    val version = Option(root.get("version")).filter(_.canConvertToInt).map(_.asInt()).getOrElse(
      fail("NO_VERSION"))
    if (version < 1 || version > Version) {
      fail("UNSUPPORTED_VERSION", "version" -> version.toString, "maxVersion" -> Version.toString)
    }
    val offsets = Option(root.get("offsets")).filter(_.isObject).getOrElse(fail("NO_OFFSETS"))
    RocketMQSourceOffset(
      RocketMQOffsetsJson.parse(offsets).fold(m => fail(m.condition, m.details: _*), identity))
  }

}
