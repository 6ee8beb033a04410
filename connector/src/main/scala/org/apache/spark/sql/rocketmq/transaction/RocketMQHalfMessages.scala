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

package org.apache.spark.sql.rocketmq.transaction

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, DataInputStream, DataOutputStream}

import org.apache.rocketmq.client.producer.SendResult
import org.apache.rocketmq.common.message.{Message, MessageAccessor, MessageConst, MessageDecoder}

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.connector.write.WriterCommitMessage
import org.apache.spark.sql.execution.streaming.sources.PackedRowCommitMessage
import org.apache.spark.sql.rocketmq.producer.{RocketMQHalfMessageLog, RocketMQTransactionScope}

/**
 * Where one half message is: enough for an END_TRANSACTION request. `seq` is its place among the
 * task's rows (as its [[RocketMQHalfMessageRecorder.TransactionProperty]] names it); `keyed` says
 * it had a sharding key: then its commit must reach its queue in that order.
 */
private[rocketmq] final case class RocketMQHalfMessage(
    endpoint: Int, queueId: Int, queueOffset: Long, commitLogOffset: Long, seq: Int, keyed: Boolean)

/**
 * The half messages of one task attempt, as its commit message carries them to the driver:
 * `endpoints` are the (topic, broker name) pairs they went to, and `firstSendMs` when the first was
 * sent (the broker stops taking the driver's own commit `timeoutMs` after a message was born).
 */
private[rocketmq] final case class RocketMQTaskHalfMessages(
    run: String, epoch: Long, partition: Int, attempt: Long, firstSendMs: Long,
    endpoints: IndexedSeq[(String, String)], messages: IndexedSeq[RocketMQHalfMessage])

private[rocketmq] object RocketMQTaskHalfMessages {

  /**
   * A task's half messages travel in a commit message of Spark's own (one row holding one binary
   * value): the driver reads task results with Spark's class loader, which cannot see the connector
   * when a Spark Connect session added it as an artifact.
   */
  def toCommitMessage(bytes: Array[Byte]): WriterCommitMessage =
    PackedRowCommitMessage(Array[InternalRow](new GenericInternalRow(Array[Any](bytes))))

  /**
   * The half messages a commit message carries; None for one that carries none (a null, or another
   * kind).
   */
  def fromCommitMessage(message: WriterCommitMessage): Option[RocketMQTaskHalfMessages] =
    message match {
      case packed: PackedRowCommitMessage if packed.rows.length == 1 =>
        Some(decode(packed.rows(0).getBinary(0)))
      case _ => None
    }

  def decode(bytes: Array[Byte]): RocketMQTaskHalfMessages = {
    val in = new DataInputStream(new ByteArrayInputStream(bytes))
    val (run, epoch, partition, attempt, firstSendMs) =
      (in.readUTF(), in.readLong(), in.readInt(), in.readLong(), in.readLong())
    val endpoints = IndexedSeq.fill(in.readInt())((in.readUTF(), in.readUTF()))
    val messages = IndexedSeq.fill(in.readInt())(
      RocketMQHalfMessage(in.readInt(), in.readInt(), in.readLong(), in.readLong(), in.readInt(),
        in.readBoolean()))
    RocketMQTaskHalfMessages(run, epoch, partition, attempt, firstSendMs, endpoints, messages)
  }
}

/**
 * Turns the messages of one task attempt into half messages and records where the broker stored
 * each (29 bytes a message, until the task commits). Each carries the user property
 * [[RocketMQHalfMessageRecorder.TransactionProperty]], `<run>/<epoch>/<partition>/<attempt>/<seq>`,
 * from which the driver answers the broker's check-back.
 */
private[rocketmq] final class RocketMQHalfMessageRecorder(
    scope: RocketMQTransactionScope, epoch: Long, partition: Int, attempt: Long)
  extends RocketMQHalfMessageLog {

  private val endpoints = new java.util.ArrayList[(String, String)]()
  private val endpointIndex = new java.util.HashMap[(String, String), Integer]()
  private val recorded = new ByteArrayOutputStream()
  private val out = new DataOutputStream(recorded)
  private var count = 0
  private var nextSeq = 0L
  private var firstSendMs = -1L
  private val immunitySeconds = (scope.timeoutMs / 1000).toString
  private val prefix = s"${scope.run}/$epoch/$partition/$attempt/"

  /** Makes `message` a half message of this attempt (called before it is sent). */
  def prepare(message: Message): Unit = {
    if (firstSendMs < 0) firstSendMs = System.currentTimeMillis()
    MessageAccessor.putProperty(message, MessageConst.PROPERTY_TRANSACTION_PREPARED, "true")
    MessageAccessor.putProperty(message, MessageConst.PROPERTY_PRODUCER_GROUP, scope.group)
    MessageAccessor.putProperty(message, MessageConst.PROPERTY_CHECK_IMMUNITY_TIME_IN_SECONDS,
      immunitySeconds)
    MessageAccessor.putProperty(message, RocketMQHalfMessageRecorder.TransactionProperty,
      prefix + nextSeq)
    nextSeq += 1
  }

  /** The place of the message [[prepare]] made last among this attempt's rows. */
  override def lastPrepared: Int = (nextSeq - 1).toInt

  /**
   * Records an acknowledged half message (called from send callbacks, on any thread): `seq` is its
   * [[lastPrepared]] place, `keyed` whether its commit must keep that place in its queue (a
   * sharding key).
   */
  override def record(result: SendResult, seq: Int, keyed: Boolean): Unit = synchronized {
    val queue = result.getMessageQueue
    val key = (queue.getTopic, queue.getBrokerName)
    var index = endpointIndex.get(key)
    if (index == null) {
      index = endpoints.size
      endpoints.add(key)
      endpointIndex.put(key, index)
    }
    out.writeInt(index)
    out.writeInt(queue.getQueueId)
    out.writeLong(result.getQueueOffset)
    out.writeLong(MessageDecoder.decodeMessageId(result.getOffsetMsgId).getOffset)
    out.writeInt(seq)
    out.writeBoolean(keyed)
    count += 1
  }

  /** Everything recorded, as the driver decodes it (see [[RocketMQTaskHalfMessages.decode]]). */
  def encode(): Array[Byte] = synchronized {
    val whole = new ByteArrayOutputStream(recorded.size + 256)
    val header = new DataOutputStream(whole)
    header.writeUTF(scope.run)
    header.writeLong(epoch)
    header.writeInt(partition)
    header.writeLong(attempt)
    header.writeLong(firstSendMs)
    header.writeInt(endpoints.size)
    endpoints.forEach { case (topic, broker) => header.writeUTF(topic); header.writeUTF(broker) }
    header.writeInt(count)
    header.flush()
    recorded.writeTo(whole)
    whole.toByteArray
  }

  def decoded: RocketMQTaskHalfMessages = RocketMQTaskHalfMessages.decode(encode())
}

private[rocketmq] object RocketMQHalfMessageRecorder {

  /**
   * The user property naming a half message's run, epoch, partition, task attempt and sequence
   * number.
   */
  val TransactionProperty = "spark.rocketmq.txn"

  /** The parts of a [[TransactionProperty]] value, or None for one that is not ours. */
  final case class Origin(run: String, epoch: Long, partition: Int, attempt: Long, seq: Int)

  def origin(value: String): Option[Origin] =
    Option(value).map(_.split('/')).filter(_.length == 5).flatMap { parts =>
      try Some(Origin(parts(0), parts(1).toLong, parts(2).toInt, parts(3).toLong, parts(4).toInt))
      catch { case _: NumberFormatException => None }
    }
}
