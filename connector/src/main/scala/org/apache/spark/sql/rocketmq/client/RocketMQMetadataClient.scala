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

import java.io.Closeable
import java.util.concurrent.{ExecutorService, Executors}

import org.apache.rocketmq.client.impl.MQClientAPIImpl

import org.apache.spark.sql.rocketmq.common.RocketMQConnection
import org.apache.spark.sql.rocketmq.options.RocketMQOptions

/**
 * A driver-side user of the connection's shared metadata client ([[RocketMQOffsetReader.clients]]):
 * the client is borrowed at the first request, replaced (once no one holds it) between retries, and
 * given back on close. The connection and the request and retry settings come from `options`.
 */
private[rocketmq] abstract class RocketMQMetadataClient(
    options: RocketMQOptions) extends Closeable {
  protected val connection: RocketMQConnection = options.connection
  protected val nameServer: String = connection.nameServer
  protected val timeoutMs: Long = options(RocketMQOptions.RequestTimeoutMs)
  protected val attempts: Int = options(RocketMQOptions.MetadataRetries)
  protected val intervalMs: Long = options(RocketMQOptions.MetadataRetryIntervalMs)
  protected val retryTimeoutMs: Long = options(RocketMQOptions.RetryTimeoutMs)

  private var lease: RocketMQOffsetReader.clients.Lease = _

  protected def api: MQClientAPIImpl = {
    if (lease == null) lease = RocketMQOffsetReader.clients.borrow(connection)
    lease.client.getMQClientAPIImpl
  }

  /**
   * Between retries: the shared client is replaced (once no one holds it) and a fresh one borrowed.
   */
  protected def rebuildClient(): Unit = {
    if (lease != null) lease.markBroken()
    close()
  }

  override def close(): Unit = {
    if (lease != null) {
      lease.release()
      lease = null
    }
  }
}

private[rocketmq] object RocketMQMetadataClient {

  /**
   * Requests sent at once: a 1024-queue topic's bounds are 2048 requests, which one thread would
   * send one after the other.
   */
  private val Parallelism = 16

  /**
   * Threads of the driver's metadata requests sent side by side (queue bounds, early indexing
   * probes); each request ends within its timeout.
   */
  lazy val requests: ExecutorService = Executors.newFixedThreadPool(Parallelism,
    (r: Runnable) => {
      val thread = new Thread(r, "rocketmq-spark-metadata")
      thread.setDaemon(true)
      thread
    })
}
