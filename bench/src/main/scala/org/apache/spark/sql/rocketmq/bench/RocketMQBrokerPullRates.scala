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

import java.util.UUID
import java.util.concurrent.{ConcurrentLinkedQueue, Executors, TimeUnit}

import scala.jdk.CollectionConverters._

import org.apache.rocketmq.tools.admin.DefaultMQAdminExt

/**
 * The pulls a RocketMQ broker served while a run sent: its own counters (the runtime stats `mqadmin
 * brokerStatus` prints), read every 10 s, each reading its rates over the last 10 s. `found`: pulls
 * a second that returned messages; `foundNone`: pulls a second that found nothing at first (a long
 * poll at a queue's end counts here once when the broker holds it, and under `found` when it
 * answers it with the messages that came); `messages`: messages a second those pulls carried. What
 * the reader's pulls cost the broker goes by requests more than by messages.
 */
final class RocketMQBrokerPullRates(nameServer: String, brokerAddress: String)
  extends AutoCloseable {
  private val admin = new DefaultMQAdminExt()
  admin.setNamesrvAddr(nameServer)
  admin.setInstanceName(s"bench-pull-rates-${UUID.randomUUID()}")
  admin.start()
  private val readings = new ConcurrentLinkedQueue[(Double, Double, Double)]()
  private val timer = Executors.newSingleThreadScheduledExecutor { task =>
    val thread = new Thread(task, "bench-pull-rates")
    thread.setDaemon(true)
    thread
  }
  timer.scheduleAtFixedRate(() => read(), 10, 10, TimeUnit.SECONDS)

  private def read(): Unit =
    try {
      val stats = admin.fetchBrokerRuntimeStats(brokerAddress).getTable.asScala
      def lastWindow(key: String): Double = stats(key).trim.split("\\s+").head.toDouble
      readings.add((lastWindow("getFoundTps"), lastWindow("getMissTps"),
        lastWindow("getTransferredTps")))
    } catch {
      case e: Exception =>
        System.err.println(s"BENCH realtime: the broker's runtime stats were not read: $e")
    }

  /**
   * Stops reading; the median of the readings as a line for the log (`None` before the first
   * reading). Readings from before the reader caught up, or after the producer stopped, are among
   * them: the median is the steady rate.
   */
  def summary(): Option[String] = {
    close()
    val all = readings.asScala.toSeq
    if (all.isEmpty) None
    else {
      def median(values: Seq[Double]): Double = values.sorted.apply(values.size / 2)
      val (found, none, messages) =
        (median(all.map(_._1)), median(all.map(_._2)), median(all.map(_._3)))
      Some(
        f"$found%.0f found messages ($messages%.0f messages a second, " +
          f"${messages / math.max(found, 1)}%.1f a pull), $none%.0f found none at first " +
          s"(medians of ${all.size} readings of 10 s)")
    }
  }

  override def close(): Unit = { timer.shutdownNow(); admin.shutdown() }
}
