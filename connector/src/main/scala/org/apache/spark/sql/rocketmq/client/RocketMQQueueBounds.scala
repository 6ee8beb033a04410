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

package org.apache.spark.sql.rocketmq.client

import java.util.concurrent.{Callable, TimeUnit}

import org.apache.rocketmq.client.impl.MQClientAPIImpl
import org.apache.rocketmq.common.message.MessageQueue

import org.apache.spark.sql.rocketmq.common.RocketMQQueueRange

/**
 * Queue offsets asked queue by queue, with the two requests that every RocketMQ endpoint forwards
 * to the queue's broker (GET_MIN_OFFSET and GET_MAX_OFFSET, each carrying the broker group's name):
 * the way to plan where the broker's one-request-per-group topic stats, an admin request, is
 * refused. A RocketMQ 5 proxy (what managed RocketMQ 5 services serve) refuses every admin request,
 * and so do brokers to credentials without admin rights.
 */
private[rocketmq] object RocketMQQueueBounds {

  /**
   * [min, max) of each of `queues` (all on the broker group at `address`), by queue id. Each
   * request is retried as `retry` says; the first request that fails for good fails the whole call
   * with its error.
   */
  def ask(api: MQClientAPIImpl, address: String, queues: Seq[MessageQueue], timeoutMs: Long)(
      retry: (MessageQueue, => RocketMQQueueRange) => RocketMQQueueRange)
      : Map[Int, RocketMQQueueRange] = {
    def one(queue: MessageQueue): RocketMQQueueRange = retry(queue,
      RocketMQQueueRange(
        api.getMinOffset(address, queue, timeoutMs), api.getMaxOffset(address, queue, timeoutMs)))
    if (queues.size <= 2) queues.map(q => q.getQueueId -> one(q)).toMap
    else {
      val futures = queues.map(q =>
        q.getQueueId -> RocketMQMetadataClient.requests.submit(new Callable[RocketMQQueueRange] {
          override def call(): RocketMQQueueRange = one(q)
        }))
      try futures.map { case (id, f) => id -> f.get(timeoutMs * 64, TimeUnit.MILLISECONDS) }.toMap
      catch {
        case e: java.util.concurrent.ExecutionException => throw e.getCause
      } finally futures.foreach(_._2.cancel(true))
    }
  }
}
