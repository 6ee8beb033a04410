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

package org.apache.spark.sql.rocketmq.bench

import java.util.concurrent.{Executors, TimeUnit}
import java.util.concurrent.atomic.AtomicLong

/**
 * Sends `rate` messages a second at a steady pace: one every 1/`rate` s up to 1,000 a second, above that
 * `rate` / 1000 every millisecond. `send(n)` sends the `n`-th message (from 0) without waiting for the broker.
 */
object SteadyProducer {

  /** Sends for `warmupSeconds` (not counted) and `seconds`: how many were sent, and from when they count. */
  def run(rate: Int, warmupSeconds: Int, seconds: Int)(send: Long => Unit): (Long, Long) = {
    val perTick = math.max(1, rate / 1000)
    val tickMicros = 1000000L * perTick / rate
    val sent = new AtomicLong()
    val ticker = Executors.newSingleThreadScheduledExecutor()
    try {
      val start = System.currentTimeMillis()
      val tick: Runnable = () => (1 to perTick).foreach { _ => send(sent.get()); sent.incrementAndGet() }
      ticker.scheduleAtFixedRate(tick, 0, tickMicros, TimeUnit.MICROSECONDS)
      Thread.sleep((warmupSeconds + seconds) * 1000L) // the production window itself
      ticker.shutdown()
      require(ticker.awaitTermination(10, TimeUnit.SECONDS), "the producer did not stop")
      (sent.get(), start + warmupSeconds * 1000L)
    } finally ticker.shutdownNow()
  }
}
