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

package org.apache.spark.sql.rocketmq.consumer

import org.apache.rocketmq.client.consumer.PullStatus

import org.apache.spark.sql.rocketmq.errors.RocketMQErrorKinds.DataLossReason
import org.apache.spark.sql.rocketmq.errors.RocketMQErrorKinds.DataLossReason._

/**
 * A broker's answer to one pull, as the reader needs it: its status, the offset it says to pull
 * next, and the queue's bounds. [[classify]] tells what the answer means for a reader at a given
 * place; it asks nothing of anyone (the one thing it may need, whether the queue's broker group has
 * a master now, the caller asks the name server for when the answer is
 * [[RocketMQPullAnswer.AskRoute]], and classifies again).
 */
private[consumer] final case class RocketMQPullAnswer(status: PullStatus, next: Long,
    minOffset: Long,
    maxOffset: Long) {
  import RocketMQPullAnswer._

  /**
   * What this answer means to a reader at `at`; `hasMaster`: whether the group has a master, if
   * known.
   */
  def classify(at: Position, hasMaster: Option[Boolean]): Kind = status match {
    case PullStatus.FOUND => Messages
    // A replica broker answers "pull again" this way when the message is not there yet: no offset
    // was scanned, so nothing was filtered or lost.
    case PullStatus.NO_MATCHED_MSG if next == at.offset => PullAgain
    // An open range's end: nothing new during the long poll.
    case PullStatus.NO_NEW_MSG if at.open && next == at.offset => AtEnd
    case _ =>
      hasMaster match {
        case None if needsRoute(at) => AskRoute
        case _ => byServer(at, hasMaster.getOrElse(true))
      }
  }

  /**
   * Whether the meaning of the answer depends on who gave it: a master, or a replica standing in
   * for none.
   */
  private def needsRoute(at: Position): Boolean = status match {
    case PullStatus.NO_NEW_MSG | PullStatus.OFFSET_ILLEGAL => true
    case PullStatus.NO_MATCHED_MSG => !at.filtered
    case _ => false
  }

  private def byServer(at: Position, hasMaster: Boolean): Kind = status match {
    // A replica may trail its dead master (it copies and indexes asynchronously) or lack what the
    // master stored last: only the master's word that offsets are gone is a loss.
    case PullStatus.NO_NEW_MSG | PullStatus.OFFSET_ILLEGAL if !hasMaster => ReplicaTrailing
    case PullStatus.NO_MATCHED_MSG if !at.filtered && !hasMaster => ReplicaTrailing
    // The master says the queue ends before the offset: final once it has indexed what it stored.
    case _ if !at.masterIndexed && endsBefore(at.offset) => AwaitIndexing
    case PullStatus.NO_NEW_MSG | PullStatus.OFFSET_ILLEGAL if at.open && at.offset > maxOffset =>
      WentBack(TopicRecreated(maxOffset), minOffset)
    // The filter skipped the whole window the broker scanned: nothing lost (the broker answers the
    // same of messages being removed; with a filter the two cannot be told apart).
    case PullStatus.NO_MATCHED_MSG if at.filtered => Skip(next)
    // No filter, so nothing can fail to match: the broker skipped messages it was removing.
    case PullStatus.NO_MATCHED_MSG => Lost(at.offset, math.min(next, at.until), BeingRemoved, next)
    // A compacted queue's index holds only what compaction kept: the broker points past a file of
    // it that has nothing left at the offset.
    case PullStatus.NO_NEW_MSG if at.compacted && next > at.offset => Skip(next)
    case PullStatus.NO_NEW_MSG if next > at.offset =>
      Lost(at.offset, math.min(next, at.until), ConsumeQueueGone, next)
    case PullStatus.NO_NEW_MSG => Lost(at.offset, at.until, Truncated(maxOffset), at.until)
    case PullStatus.OFFSET_ILLEGAL if at.offset < minOffset =>
      Lost(at.offset, math.min(minOffset, at.until), Expired(minOffset), minOffset)
    case _ => Lost(at.offset, at.until, TopicRecreated(maxOffset), at.until)
  }

  /**
   * Whether the answer says the queue ends at or before `offset` (not that it starts after it): a
   * truncated queue, or one whose offsets went back. True as well of a master still indexing what
   * it stored.
   */
  private def endsBefore(offset: Long): Boolean =
    offset >= minOffset &&
      (status match {
        case PullStatus.OFFSET_ILLEGAL => true
        case PullStatus.NO_NEW_MSG => next <= offset
        case _ => false
      })
}

private[consumer] object RocketMQPullAnswer {

  /**
   * Where the reader is: the offset it asked for, the end of its range, whether the range is open
   * (real-time mode) or read through a filter, whether the master has indexed what it stored since
   * the reader last moved on, and whether the topic is compacted.
   */
  final case class Position(offset: Long, until: Long, open: Boolean, filtered: Boolean,
      masterIndexed: Boolean, compacted: Boolean = false)

  /** What an answer means. */
  sealed trait Kind

  /** Messages: each checked against the offset expected next as it is returned. */
  case object Messages extends Kind

  /** "Pull the same offset again" (a replica that lacks it yet): paused, within the pull's time. */
  case object PullAgain extends Kind

  /** An open range at the queue's end: wait at it. */
  case object AtEnd extends Kind

  /**
   * The answer's meaning depends on whether the group has a master now: ask the name server,
   * classify again.
   */
  case object AskRoute extends Kind

  /** A replica standing in for no master lacks the offset: unavailable, not lost; waited for. */
  case object ReplicaTrailing extends Kind

  /**
   * The master says the queue ends before the offset: asked again once it has indexed what it
   * stored.
   */
  case object AwaitIndexing extends Kind

  /**
   * An open range's queue went back below the offset (recreated): lost, then read on from
   * `resumeAt`.
   */
  final case class WentBack(reason: DataLossReason, resumeAt: Long) extends Kind

  /** Offsets the filter skipped, up to `to`: nothing lost. */
  final case class Skip(to: Long) extends Kind

  /** Offsets `[from, until)` are lost for `reason`; reading goes on at `resumeAt`. */
  final case class Lost(from: Long, until: Long, reason: DataLossReason, resumeAt: Long)
    extends Kind
}
