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

import java.nio.file.Path

import scala.util.control.NonFatal

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.functions.col
import org.apache.spark.sql.rocketmq.{RocketMQPlainClients, RocketMQProxyProcess}

/**
 * The connector through a RocketMQ 5 proxy (Apache's, cluster mode, in front of the bench's broker;
 * what managed RocketMQ 5 services serve) beside the same broker asked directly, in the same run: a
 * batch read of the filled topic, a batch write, and the planning of a read of 8 and of 1024 queues
 * (through a proxy each queue's offsets are two requests, where a direct cluster answers one per
 * broker group); beside the reads, RocketMQ's own pull consumer over the same endpoints, and the
 * same reads from a PySpark program ([[PythonReads]], on `python`). Each
 * figure's first run is reported on its own (cold: the connection's first plan, the proxy's first
 * routes), beside the median of the runs after it.
 */
final class ProxyBench(spark: SparkSession, results: BenchResults, messages: Int, bodyBytes: Int,
    queues: Int,
    runs: Int, planningRounds: Int, python: => Path) {

  def measure(broker: RocketMQSystem, filledTopic: String, plain: PlainClientThroughput): Unit = {
    val proxy =
      new RocketMQProxyProcess(broker.broker.nameServer, broker.broker.clusterName).start()
    try {
      val endpoints = Seq("direct" -> broker.broker.nameServer, "through a proxy" -> proxy.endpoint)
      endpoints.foreach { case (how, endpoint) =>
        coldAndWarm("read", s"batch read, $how", "msg/s", runs)(_ =>
          messages / seconds {
            spark.read.format("rocketmq").option("nameServer", endpoint).option("topic",
              filledTopic).load()
              .write.format("noop").mode("overwrite").save()
          })
        // RocketMQ's own pull consumer over the same endpoint, what the connector is held to.
        Seq(true, false).foreach { synchronous =>
          val clients = new RocketMQPlainClients(endpoint)
          try plain.rocketmqRead(broker, clients, filledTopic, synchronous, s", $how")
          catch {
            case NonFatal(e) => println(s"BENCH proxy: RocketMQ's pull consumer, $how, failed: $e")
          } finally clients.close()
        }
      }
      // The same reads from a PySpark program, as most users run them.
      val fromPython = new PythonReads(python)
      try endpoints.foreach { case (how, endpoint) =>
          coldAndWarm("read", s"batch read from Python, $how", "msg/s", runs)(_ =>
            messages / fromPython.read(endpoint, filledTopic, messages.toLong * bodyBytes))
        }
      finally fromPython.close()
      val rows = spark.range(0, messages.toLong, 1, queues).selectExpr(
        s"repeat('x', $bodyBytes) AS body").cache()
      require(rows.count() == messages)
      endpoints.foreach { case (how, endpoint) =>
        coldAndWarm("write", s"batch write, $how", "msg/s", runs) { run =>
          val topic = s"bench-proxy-w-${System.nanoTime()}-$run"
          broker.createTopic(topic, queues)
          messages / seconds {
            rows.select(col("body")).write.format("rocketmq").option("nameServer", endpoint).option(
              "topic", topic)
              .save()
          }
        }
      }
      rows.unpersist()
      val planned = Seq(8, 1024).map { n =>
        val topic = s"bench-proxy-plan-$n-${System.nanoTime()}"
        broker.createTopic(topic, n)
        n -> topic
      }
      endpoints.foreach { case (how, endpoint) =>
        planned.foreach { case (n, topic) =>
          coldAndWarm("planning", s"plan a read of $n queues, $how", "ms", planningRounds)(_ =>
            1000 * seconds {
              spark.read.format("rocketmq").option("nameServer", endpoint).option("topic",
                topic).load()
                .queryExecution.toRdd.getNumPartitions
            })
        }
      }
    } finally proxy.stop()
  }

  /**
   * The first of `1 + runs` runs as a figure of its own ("first run"), and the median of the
   * others.
   */
  private def coldAndWarm(section: String, name: String, unit: String, runs: Int)(
      run: Int => Double): Unit = {
    val values = (0 to runs).map(run)
    results.add(Figure(section, s"$name, first run", "rocketmq", unit, values.take(1)))
    results.add(Figure(section, name, "rocketmq", unit, values.drop(1)))
  }

  private def seconds(body: => Unit): Double = {
    val start = System.nanoTime()
    body
    (System.nanoTime() - start) / 1e9
  }
}
