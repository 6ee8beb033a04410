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

import java.nio.file.Paths

import org.apache.rocketmq.client.producer.DefaultMQProducer

import org.apache.spark.sql.rocketmq.RocketMQBrokerProcess

/**
 * The bench's `realtime` section: real-time queries topic to topic from pyspark 4.3, and beside
 * them each system's own clients relaying topic to topic with no Spark ([[RealTimeBench]]), at each
 * of its rates on both systems, or the runs `--realtime-runs` names.
 */
object RealTimeSection {
  /**
   * The realtime section's rates (messages a second), and the shuffle partitions of its stateful
   * query.
   */
  val Rates: Seq[Int] = Seq(200, 20000)
  /**
   * The untimed run each system makes before the measured ones (see RealTimeBench): its first 40 s
   * settled it.
   */
  private val WarmUpRunSeconds = 50
  val ShufflePartitions = 2
  /**
   * Its batches: long enough for a batch end to hold up under 1% of the messages (see
   * docs/real-time.md).
   */
  val Batch = "30 seconds"

  /**
   * Runs the section: `batch` and `seconds` are each query's batch duration and measured time;
   * `namedRuns`, the value of `--realtime-runs` if given.
   */
  def run(results: BenchResults, rocketmq: RocketMQSystem, kafka: KafkaSystem,
      rocketmqBroker: RocketMQBrokerProcess, kafkaBroker: KafkaProcess, queues: Int,
      quick: Boolean, batch: String, seconds: Int, namedRuns: Option[String]): Unit = {
    val version = sys.props.getOrElse("bench.realTimeSparkVersion",
      sys.error(
        "no -Dbench.realTimeSparkVersion: run build/sbt bench/exportBenchClasspath " +
          "(dev/bench does)"))
    val realTime = new RealTimeBench(results,
      PythonLatencyBench.venvPython(Paths.get(""), s".venv-spark-$version"),
      Paths.get("bench/python_real_time.py"),
      sys.props("bench.realTimeKafkaJars").split(",").toSeq, queues,
      ShufflePartitions, keys = 1000, batch,
      warmupSeconds = if (quick) 2 else 10,
      seconds, warmUpRunSeconds = if (quick) 0 else WarmUpRunSeconds)
    val producer = KafkaProcess.producer(kafkaBroker.bootstrapServers)
    // RocketMQ's producer batching its async sends (autoBatch, a 1 ms hold), as Kafka's does on
    // its defaults (clients 3.9: linger.ms 0, the records that come while a request is under
    // way go together in the next): one message per request could not keep 20,000 a second
    // acknowledged here (about 10,000 got through, thousands timed out). Its born time is
    // stamped when a batch goes: up to 1 ms of hold is not counted, where Kafka's CreateTime is
    // stamped as a record is handed to its producer.
    val steadyRocketMQ = new DefaultMQProducer("bench-steady-producer")
    steadyRocketMQ.setNamesrvAddr(rocketmqBroker.nameServer)
    steadyRocketMQ.setAutoBatch(true)
    steadyRocketMQ.batchMaxDelayMs(1)
    steadyRocketMQ.start()
    try {
      val runs = for {
        rate <- Rates
        system <- Seq(rocketmq, kafka)
        query <- Seq("stateless", "stateful", "relay")
      } yield realTime.Run(system, query, rate)
      // --realtime-runs rocketmq/stateless/20000,...: only those runs, in that order (to look
      // into one, or to see what the order does: the first run of the session pays the JVM's
      // warm-up), at any rate. Named only: a query reading one system and writing the other
      // (rocketmq-to-kafka/stateful/20000), which tells whether a difference between the two
      // comes from the source or from the sink.
      val systems = Seq(rocketmq, kafka).map(s => s.name -> s).toMap
      def named(name: String): realTime.Run = {
        def refuse(why: String) = throw new IllegalArgumentException(
          s"--realtime-runs: '$name' $why; a run is <system>/<query>/<rate> or " +
            "<source>-to-<sink>/<query>/<rate>, " +
            s"a system one of ${systems.keys.toSeq.sorted.mkString(", ")}, a query one of " +
            "stateless, stateful, " +
            "relay (one system only), a rate a positive number of messages a second")
        name.split("/") match {
          case Array(which, query, rate) =>
            val (source, sink) = which.split("-to-") match {
              case Array(one) => (one, None)
              case Array(from, to) if from != to => (from, Some(to))
              case _ => refuse("names no system or two")
            }
            val system = (s: String) => systems.getOrElse(s, refuse(s"names no system '$s'"))
            if (!Set("stateless", "stateful", "relay")(query) ||
              (sink.nonEmpty && query == "relay")) {
              refuse(s"names no query '$query'")
            }
            val perSecond =
              rate.toIntOption.filter(_ > 0).getOrElse(refuse(s"names no rate '$rate'"))
            realTime.Run(system(source), query, perSecond, sink.map(system))
          case _ => refuse("is not one")
        }
      }
      val chosen = namedRuns.map(_.split(",").toSeq.map(named)).getOrElse(runs)
      realTime.measure(chosen,
        {
          case `rocketmq` => Map("nameServer" -> rocketmqBroker.nameServer)
          case _ => Map("bootstrapServers" -> kafkaBroker.bootstrapServers)
        }) {
        case `rocketmq` => SteadyProducer.toRocketMQ(steadyRocketMQ)
        case _ => SteadyProducer.toKafka(producer)
      }
    } finally {
      steadyRocketMQ.shutdown()
      producer.close()
    }
  }
}
