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

import java.util.concurrent.{ConcurrentHashMap, ConcurrentLinkedQueue}

import scala.jdk.CollectionConverters._

import org.apache.rocketmq.client.producer.LocalTransactionState
import org.apache.rocketmq.common.message.{MessageConst, MessageExt}

import org.slf4j.LoggerFactory

import org.apache.spark.sql.rocketmq.errors.RocketMQErrors
import org.apache.spark.sql.rocketmq.producer.RocketMQTransactionScope

/**
 * How a batch write waits for the half messages its driver left to the broker's check-back (a
 * commit whose answer never came, or one the broker refused): a batch job has no later run to
 * answer the broker, so it stays until each of them is in its topic. A message is done once the
 * broker's index finds it in its topic: looked up when the check-back is answered with a commit
 * (sent one way: the broker may not get it), and, for a commit whose answer never came (it may have
 * been carried out: then the broker never asks), every few seconds. What is not done by the
 * deadline fails the job with an error naming how many rows may never be delivered.
 */
private[transaction] final class RocketMQCheckBackWait(scope: RocketMQTransactionScope,
    index: RocketMQMessageIndex, settings: RocketMQCoordinatorSettings) {

  private val log = LoggerFactory.getLogger(getClass)

  /**
   * (partition, attempt, seq) of each message awaited, mapped to the message as the broker last
   * showed it (the half message, looked up by its place; then the check-back's), once known.
   */
  private val awaited = new ConcurrentHashMap[(Int, Long, Int), Option[MessageExt]]()
  private val committed = new ConcurrentLinkedQueue[(Int, Long, Int)]()
  /**
   * Where each unanswered half message is: its topic and broker group as sent, and its commit-log
   * offset.
   */
  private val places = new ConcurrentHashMap[(Int, Long, Int), (String, String, Long)]()

  def answered(origin: RocketMQHalfMessageRecorder.Origin, message: MessageExt,
      answer: LocalTransactionState): Unit =
    if (origin.run == scope.run) {
      val key = (origin.partition, origin.attempt, origin.seq)
      if (awaited.containsKey(key)) answer match {
        case LocalTransactionState.ROLLBACK_MESSAGE => awaited.remove(key) // in its topic already
        case LocalTransactionState.COMMIT_MESSAGE =>
          awaited.put(key, Some(message))
          committed.add(key)
        case _ =>
      }
    }

  /**
   * Returns once every message `left` of `epoch` is in its topic; fails after `deadlineMs` (epoch
   * millis). Those `unanswered` (a subset) are looked up without waiting for a check-back.
   */
  def await(epoch: Long, left: Seq[(RocketMQTaskHalfMessages, RocketMQHalfMessage)],
      unanswered: Seq[(RocketMQTaskHalfMessages, RocketMQHalfMessage)], deadlineMs: Long): Unit = {
    left.foreach { case (task, m) =>
      awaited.putIfAbsent((task.partition, task.attempt, m.seq), None)
    }
    unanswered.foreach { case (task, m) =>
      val (topic, broker) = task.endpoints(m.endpoint)
      places.put((task.partition, task.attempt, m.seq), (topic, broker, m.commitLogOffset))
    }
    var lastProbe = 0L
    log.warn(
      s"Epoch $epoch (a batch write): waiting until the broker has checked back about " +
        s"${awaited.size} half " +
        s"messages, at the latest until ${java.time.Instant.ofEpochMilli(deadlineMs)}")
    var lastReport = System.currentTimeMillis()
    while (!awaited.isEmpty && System.currentTimeMillis() < deadlineMs) {
      // A commit answer is done once the broker's index finds the message in its topic.
      val toVerify = Iterator.continually(committed.poll()).takeWhile(_ != null).toSeq.distinct
      toVerify.foreach { key =>
        Option(awaited.get(key)).flatten.foreach { message =>
          if (inTopic(message)) awaited.remove(key) else committed.add(key)
        }
      }
      if (System.currentTimeMillis() - lastProbe > ProbeEveryMs) {
        lastProbe = System.currentTimeMillis()
        places.asScala.toSeq.foreach { case (key, (topic, broker, offset)) =>
          if (index.committed(topic, broker, offset)) {
            awaited.remove(key)
            places.remove(key)
          }
        }
      }
      if (System.currentTimeMillis() - lastReport > 60000L) {
        log.warn(
          s"Epoch $epoch: ${awaited.size} half messages still wait for the broker's check-back")
        lastReport = System.currentTimeMillis()
      }
      if (!awaited.isEmpty) Thread.sleep(PollMs)
    }
    if (!awaited.isEmpty) {
      val keys = awaited.keySet().asScala.toSeq
      throw RocketMQErrors.transactionUnresolved(settings.topic.getOrElse("(from column topic)"),
        keys.size,
        keys.map(_._1).distinct, java.time.Instant.ofEpochMilli(deadlineMs).toString,
        scope.timeoutMs)
    }
  }

  private def inTopic(message: MessageExt): Boolean =
    index.delivered(message, settings.connection.onBroker(topicOf(message))).contains(true)

  /** The topic a half message (or the check-back's copy of it) is for. */
  private def topicOf(message: MessageExt): String =
    Option(message.getProperty(MessageConst.PROPERTY_REAL_TOPIC)).getOrElse(message.getTopic)

  private val PollMs = 500L
  private val ProbeEveryMs = 5000L
}
