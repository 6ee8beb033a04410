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

package org.apache.spark.sql.rocketmq.producer

import java.util.concurrent.{CompletableFuture, ConcurrentHashMap}

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.rocketmq.client.producer.DefaultMQProducer
import org.apache.rocketmq.common.MixAll

import org.apache.spark.sql.rocketmq.client.RocketMQKeyLookup
import org.apache.spark.sql.rocketmq.client.RocketMQKeyLookup.{Found, Refused, Unanswered}
import org.apache.spark.sql.rocketmq.common.RocketMQRetry

/**
 * Asks the brokers whether a send whose answer was lost (a timeout, a connection reset) was stored,
 * before it is sent again: each request's first message has a unique key the brokers index. A key
 * not found is never believed at once: a broker may still be storing a request it took in before
 * the look-up (after a pause, say), so it is looked up again a while later. Not found twice counts
 * only where the same broker group's index was seen to find a key it acknowledged to the producer
 * (a broker may keep no index); what the producer learnt of that is `indexes`, shared by the tasks
 * that borrow it, as a task whose every request is in doubt has no acknowledgement of its own.
 */
private[rocketmq] final class RocketMQStoredCheck(producer: DefaultMQProducer, timeoutMs: Long,
    indexes: RocketMQStoredCheck.Indexes) {
  import RocketMQStoredCheck._

  /** A broker given as long as a send to store what it took in, and at least a second. */
  private val secondLookMs = math.max(SecondLookMs, timeoutMs)

  private def client = producer.getDefaultMQProducerImpl.getMqClientFactory

  /** Broker group `brokerName` stored the request keyed `key` to `topic`, sent at `sentMs`. */
  def acknowledged(brokerName: String, topic: String, key: String, sentMs: Long): Unit =
    if (key != null && !indexes.controls.containsKey(brokerName))
      indexes.controls.putIfAbsent(brokerName, Control(topic, key, sentMs))

  /**
   * Whether the request keyed `key`, sent to `topic` (as the broker names it) at `sentMs`, is
   * stored: asked of the master of `brokerName`, or of every master of the topic where the producer
   * picked the queue.
   */
  def stored(topic: String, key: String, sentMs: Long, brokerName: Option[String])
      : CompletableFuture[Verdict] =
    lookUpOnce(topic, key, sentMs, brokerName, judged = false).thenCompose[Verdict] {
      case NotFound =>
        val again = new CompletableFuture[Verdict]()
        RocketMQRetry.schedule(secondLookMs) {
          lookUpOnce(topic, key, sentMs, brokerName, judged = true).whenComplete {
            (verdict, error) =>
              if (error != null) again.completeExceptionally(error) else again.complete(verdict)
          }
        }
        again
      case other => done(other)
    }

  /** One round of look-ups; a key not found is [[NotFound]] unless `judged` (the second look). */
  private def lookUpOnce(topic: String, key: String, sentMs: Long, brokerName: Option[String],
      judged: Boolean): CompletableFuture[Verdict] = {
    val masters = try mastersOf(topic, brokerName)
    catch { case NonFatal(_) => Nil }
    if (masters.isEmpty) return CompletableFuture.completedFuture(NotAnswered)
    val asked = masters.map { case (name, address) =>
      lookUp(address, topic, key, sentMs).thenCompose[Verdict] {
        case Found(messages) if messages.nonEmpty => done(Stored)
        case Found(_) => if (judged) indexFinds(name, address) else done(NotFound)
        case Refused(_) => done(CannotTell)
        case Unanswered(_) => done(NotAnswered)
      }
    }
    CompletableFuture.allOf(asked: _*).thenApply[Verdict] { _ =>
      val verdicts = asked.map(_.join())
      Seq(Stored, NotAnswered, NotFound, CannotTell).find(verdicts.contains).getOrElse(NotStored)
    }
  }

  /**
   * NotStored where `name`'s index finds its control key, else why a key not found tells nothing.
   */
  private def indexFinds(name: String, address: String): CompletableFuture[Verdict] =
    if (indexes.indexing.contains(name)) done(NotStored)
    else {
      val control = indexes.controls.get(name)
      if (control == null) done(CannotTell)
      else lookUp(address, control.topic, control.key, control.sentMs).thenApply[Verdict] {
        case Found(messages) if messages.nonEmpty => indexes.indexing.add(name); NotStored
        case Unanswered(_) => NotAnswered
        case _ => CannotTell
      }
    }

  /** (broker group, master address) of `brokerName`, or of every group of `topic`'s route. */
  private def mastersOf(topic: String, brokerName: Option[String]): Seq[(String, String)] =
    brokerName match {
      case Some(name) => Option(client.findBrokerAddressInPublish(name)).map(name -> _).toSeq
      case None =>
        Option(client.getTopicRouteTable.get(topic)).toSeq.flatMap(_.getBrokerDatas.asScala)
          .flatMap(data =>
            Option(data.getBrokerAddrs.get(MixAll.MASTER_ID)).map(data.getBrokerName -> _))
    }

  private def lookUp(address: String, topic: String, key: String, sinceMs: Long)
      : CompletableFuture[RocketMQKeyLookup.Answer] = {
    val request = RocketMQKeyLookup.request(topic, key, sinceMs)
    val response =
      try client.getMQClientAPIImpl.getRemotingClient.invoke(address, request, timeoutMs)
      catch { case NonFatal(e) => failed(e) }
    response.handle[RocketMQKeyLookup.Answer] { (answer, error) =>
      if (error != null) Unanswered(error.toString)
      else RocketMQKeyLookup.answer(answer, topic, key)
    }
  }
}

private[rocketmq] object RocketMQStoredCheck {

  /**
   * What a producer learnt of its brokers' key indexes: per broker group, the first message it
   * acknowledged (the control), and the groups whose index was seen to find theirs.
   */
  final class Indexes {
    private[producer] val controls = new ConcurrentHashMap[String, Control]()
    private[producer] val indexing = ConcurrentHashMap.newKeySet[String]()
  }

  /** A message a broker group acknowledged: its topic (as the broker names it), key, send time. */
  private[producer] final case class Control(topic: String, key: String, sentMs: Long)

  /** What the brokers say of a send whose answer was lost. */
  sealed trait Verdict
  /** Stored: not to be sent again. */
  case object Stored extends Verdict
  /** Not stored where it could have been: to be sent again. */
  case object NotStored extends Verdict
  /** A broker that could have stored it did not answer now: ask again later. */
  case object NotAnswered extends Verdict
  /** No broker can say (no index, or the look-up refused): sending again may store it twice. */
  case object CannotTell extends Verdict
  /** Not found by a first look, which is never believed: only between the two looks. */
  private[producer] case object NotFound extends Verdict

  /** The least wait before a key not found is looked up again, to be believed. */
  private val SecondLookMs = 1000L

  private def done(verdict: Verdict): CompletableFuture[Verdict] =
    CompletableFuture.completedFuture(verdict)

  private def failed[T](e: Throwable): CompletableFuture[T] = {
    val future = new CompletableFuture[T]()
    future.completeExceptionally(e)
    future
  }
}
