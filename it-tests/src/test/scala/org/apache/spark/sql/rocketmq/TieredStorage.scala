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

import java.nio.file.Path

import org.apache.rocketmq.common.message.MessageQueue
import org.apache.rocketmq.tieredstore.TieredMessageStore
import org.apache.rocketmq.tieredstore.core.MessageStoreDispatcher

import org.apache.spark.sql.rocketmq.EmbeddedRocketMQ.awaitCondition

/**
 * RocketMQ 5's tiered storage on an [[EmbeddedRocketMQ]]: the broker's settings for the
 * file-system backend, and the offload of a topic followed by the deletion of its local files, as a
 * broker does over days.
 */
private[rocketmq] object TieredStorage {

  /** A broker's store plug-in settings: tiered storage on the file system under `dir`. */
  def plugIn(dir: Path): Map[String, String] = Map(
    "messageStorePlugIn" -> classOf[TieredMessageStore].getName,
    "tieredBackendServiceProvider" -> "org.apache.rocketmq.tieredstore.provider.PosixFileSegment",
    "tieredStoreFilePath" -> dir.toString)

  def store(rocketmq: EmbeddedRocketMQ): TieredMessageStore =
    rocketmq.brokerController.getMessageStore.asInstanceOf[TieredMessageStore]

  /**
   * Has the broker upload every message of `topic` to the tier (its dispatcher does on a 20 s
   * round; woken here), then deletes the local commit-log files but the newest, and the queues'
   * index entries into them.
   */
  def offloadAndDeleteLocally(rocketmq: EmbeddedRocketMQ, topic: String, queues: Int): Unit = {
    val tiered = store(rocketmq)
    val local = rocketmq.localStore
    val dispatcher = {
      val field = classOf[TieredMessageStore].getDeclaredField("dispatcher")
      field.setAccessible(true)
      field.get(tiered).asInstanceOf[MessageStoreDispatcher]
    }
    val all = (0 until queues).map(new MessageQueue(topic, rocketmq.brokerName, _))
    awaitCondition(s"the tier to hold every message of $topic", 120000) {
      all.forall { mq =>
        val file = tiered.getFlatFileStore.getFlatFile(mq)
        if (file != null) dispatcher.doScheduleDispatch(file, true).join()
        file != null &&
        file.getConsumeQueueCommitOffset >=
          local.getMaxOffsetInQueue(topic, mq.getQueueId)
      }
    }
    all.foreach(mq => rocketmq.expireOldFiles(topic, mq.getQueueId))
  }
}
