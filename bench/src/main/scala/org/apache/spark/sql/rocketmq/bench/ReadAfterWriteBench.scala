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

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.rocketmq.RocketMQPlainClients
import org.apache.spark.sql.rocketmq.client.RocketMQOffsetReader

/**
 * A batch read planned the moment a batch write returns, on a broker another writer keeps busy: the
 * case of a short count (485,565 of 500,000) seen once on a loaded machine. Each round writes
 * `messages` rows through the connector into a fresh topic while a plain producer sends to another
 * topic of the same broker, then at once
 * - counts what the topic's queues hold by their offsets (the index's end): the rows the broker had
 *   acknowledged but not yet indexed show up here as missing;
 * - counts the topic through the connector, whose planning first waits until the broker has indexed
 *   what it stored (timed from the reader's hook, which runs at each look while the broker is
 *   behind);
 * - counts the queues again once the broker says it indexed everything: had rows been lost, they
 *   would be missing here too.
 */
final class ReadAfterWriteBench(
    spark: SparkSession,
    results: BenchResults,
    system: RocketMQSystem,
    plain: RocketMQPlainClients,
    messages: Int,
    bodyBytes: Int,
    queues: Int,
    rounds: Int) {

  def measure(): Unit = {
    val rows = spark.range(0, messages.toLong, 1, queues).selectExpr(
      s"repeat('x', $bodyBytes) AS body").cache()
    require(rows.count() == messages)
    val load = topic("load")
    val loadBody = "y" * bodyBytes
    @volatile var loading = true
    val loader = new Thread(
      () => while (loading) plain.produce(load, 1000, _ => loadBody), "bench-load-writer")
    loader.setDaemon(true)
    loader.start()
    val outcomes = try (1 to rounds).map { round =>
        val target = topic("raw")
        rows.write.format(system.format).options(system.sinkOptions(target)).save()
        val atOnce = stored(target)
        val waitedBefore = RocketMQOffsetReader.indexingWaitMs.get()
        val counted =
          spark.read.format(system.format).options(system.sourceOptions(target)).load().count()
        val waitedMs = (RocketMQOffsetReader.indexingWaitMs.get() - waitedBefore).toDouble
        system.awaitReadable()
        val inTheEnd = stored(target)
        println(
          s"BENCH read after write, round $round: the index lacked ${messages - atOnce} rows " +
            f"when the write returned; the read counted $counted after waiting $waitedMs%.0f ms; " +
            s"$inTheEnd stored in the end")
        require(counted == messages,
          s"a read planned after the write counted $counted of $messages rows")
        (messages - atOnce, messages - counted, waitedMs, messages - inTheEnd)
      }
    finally {
      loading = false
      loader.join()
      rows.unpersist()
    }
    def add(name: String, unit: String, values: Seq[Double]): Unit =
      results.add(Figure("read after write", name, system.name, unit, values))
    add("rows not yet indexed when the write returned", "rows", outcomes.map(_._1.toDouble))
    add("rows a read planned at once missed", "rows", outcomes.map(_._2.toDouble))
    add("the read's wait for indexing", "ms", outcomes.map(_._3))
    add("rows missing once the broker indexed everything", "rows", outcomes.map(_._4.toDouble))
  }

  private def topic(prefix: String): String = {
    val topic = s"bench-$prefix-${System.nanoTime()}"
    system.createTopic(topic, queues)
    topic
  }

  private def stored(topic: String): Long = plain.maxOffsets(topic).values.sum
}
