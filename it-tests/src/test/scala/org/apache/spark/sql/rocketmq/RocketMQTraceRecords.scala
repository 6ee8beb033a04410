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

import java.nio.charset.StandardCharsets.UTF_8

import scala.jdk.CollectionConverters._

import org.apache.rocketmq.client.trace.{TraceContext, TraceDataEncoder, TraceType}

/** What a trace topic of the embedded broker holds, read as RocketMQ's own tools read it. */
object RocketMQTraceRecords {

  /** The Pub records in `traceTopic`, decoded by RocketMQ's trace decoder. */
  def pubRecords(rocketmq: EmbeddedRocketMQ, traceTopic: String): Seq[TraceContext] =
    rocketmq.readAll(traceTopic).flatMap(m => decode(m.getBody)).filter(
      _.getTraceType == TraceType.Pub)

  /** The ids of the messages `traceTopic` has a Pub record of. */
  def tracedIds(rocketmq: EmbeddedRocketMQ, traceTopic: String): Set[String] =
    pubRecords(rocketmq, traceTopic).map(_.getTraceBeans.get(0).getMsgId).toSet

  /** The records of one trace message's body. */
  def decode(body: Array[Byte]): Seq[TraceContext] =
    TraceDataEncoder.decoderFromTraceDataString(new String(body, UTF_8)).asScala.toSeq
}
