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
import java.time.Duration

import scala.jdk.CollectionConverters._

import org.apache.kafka.clients.consumer.KafkaConsumer
import org.apache.kafka.clients.producer.{KafkaProducer, ProducerRecord}
import org.apache.kafka.common.TopicPartition
import org.apache.kafka.common.serialization.{ByteArrayDeserializer, ByteArraySerializer}
import org.apache.rocketmq.client.consumer.PullStatus
import org.apache.rocketmq.common.message.Message

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.rocketmq.{EmbeddedRocketMQ, RocketMQPlainClients}

/**
 * Batch read and write, side by side: RocketMQ through this connector and with its plain clients, Kafka
 * through Spark's Kafka connector and with its plain clients; same messages (`bodyBytes` each), same
 * queue/partition count, same Spark session. Each figure is the median of `runs` timings of the action
 * alone (messages per second), printed as one line per figure.
 *
 * Usage: ReadWriteBench <kafka-classpath file> <messages> <runs>
 */
object ReadWriteBench {
  private val Queues = 8
  private val BodyBytes = 1024

  def main(args: Array[String]): Unit = {
    val Array(kafkaClasspathFile, messagesArg, runsArg) = args
    val (messages, runs) = (messagesArg.toInt, runsArg.toInt)
    val spark = SparkSession.builder().master("local[2]").appName("rocketmq-bench")
      .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
      .config("spark.sql.shuffle.partitions", "2").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    val rocketmq = new EmbeddedRocketMQ().start() // RocketMQ's default pull and send limits
    val kafka = new KafkaProcess(KafkaProcess.classpathFrom(Paths.get(kafkaClasspathFile))).start()
    val plain = new RocketMQPlainClients(rocketmq.nameServer)
    try {
      val rows = spark.range(messages.toLong, 0, 1, Queues).selectExpr(s"repeat('x', $BodyBytes) AS body",
        "CAST(id AS STRING) AS key").cache()
      rows.count()
      def fresh(prefix: String): String = s"$prefix-${System.nanoTime()}"

      report("rocketmq connector batch write", messages, runs) { () =>
        val topic = fresh("w"); rocketmq.createTopic(topic, Queues)
        () => rows.select("body").write.format("rocketmq").option("nameServer", rocketmq.nameServer)
          .option("topic", topic).save()
      }
      report("kafka connector batch write", messages, runs) { () =>
        val topic = fresh("w"); kafka.createTopic(topic, Queues)
        () => rows.selectExpr("body AS value").write.format("kafka").option("kafka.bootstrap.servers", kafka.bootstrapServers)
          .option("topic", topic).save()
      }
      val rmqTopic = fresh("r"); rocketmq.createTopic(rmqTopic, Queues)
      rows.select("body").write.format("rocketmq").option("nameServer", rocketmq.nameServer)
        .option("topic", rmqTopic).save()
      rocketmq.awaitIndexed()
      val kafkaTopic = fresh("r"); kafka.createTopic(kafkaTopic, Queues)
      rows.selectExpr("body AS value").write.format("kafka").option("kafka.bootstrap.servers", kafka.bootstrapServers)
        .option("topic", kafkaTopic).save()

      report("rocketmq connector batch read", messages, runs) { () => () =>
        noop(spark.read.format("rocketmq").option("nameServer", rocketmq.nameServer).option("topic", rmqTopic).load())
      }
      report("kafka connector batch read", messages, runs) { () => () =>
        noop(spark.read.format("kafka").option("kafka.bootstrap.servers", kafka.bootstrapServers)
          .option("subscribe", kafkaTopic).load())
      }
      report("rocketmq plain pull loop (sync, every queue)", messages, runs) { () => () =>
        val c = plain.consumer
        c.fetchSubscribeMessageQueues(rmqTopic).asScala.foreach { mq =>
          var offset = c.minOffset(mq)
          val max = c.maxOffset(mq)
          while (offset < max) {
            val result = c.pull(mq, "*", offset, 32, 10000)
            require(result.getPullStatus == PullStatus.FOUND, s"$mq at $offset: ${result.getPullStatus}")
            offset = result.getNextBeginOffset
          }
        }
      }
      report("kafka plain consumer (every partition)", messages, runs) { () => () =>
        val consumer = new KafkaConsumer[Array[Byte], Array[Byte]](KafkaProcess.props(
          "bootstrap.servers" -> kafka.bootstrapServers, "auto.offset.reset" -> "earliest",
          "enable.auto.commit" -> "false"), new ByteArrayDeserializer, new ByteArrayDeserializer)
        try {
          consumer.assign((0 until Queues).map(new TopicPartition(kafkaTopic, _)).asJava)
          consumer.seekToBeginning(consumer.assignment())
          var read = 0
          while (read < messages) read += consumer.poll(Duration.ofSeconds(5)).count()
        } finally consumer.close()
      }
      report("rocketmq plain producer (async, one message per request)", messages, runs) { () =>
        val topic = fresh("p"); rocketmq.createTopic(topic, Queues)
        () => {
          val body = Array.fill[Byte](BodyBytes)('x')
          val done = new java.util.concurrent.CountDownLatch(messages)
          val window = new java.util.concurrent.Semaphore(1000)
          (0 until messages).foreach { _ =>
            window.acquire()
            plain.producer.send(new Message(topic, body), new org.apache.rocketmq.client.producer.SendCallback {
              def onSuccess(r: org.apache.rocketmq.client.producer.SendResult): Unit = { window.release(); done.countDown() }
              def onException(e: Throwable): Unit = throw e
            })
          }
          done.await()
        }
      }
      report("kafka plain producer", messages, runs) { () =>
        val topic = fresh("p"); kafka.createTopic(topic, Queues)
        () => {
          val producer = new KafkaProducer[Array[Byte], Array[Byte]](KafkaProcess.props(
            "bootstrap.servers" -> kafka.bootstrapServers), new ByteArraySerializer, new ByteArraySerializer)
          val body = Array.fill[Byte](BodyBytes)('x')
          try (0 until messages).foreach(_ => producer.send(new ProducerRecord(topic, body)))
          finally producer.close()
        }
      }
    } finally {
      plain.close()
      kafka.close()
      rocketmq.discard()
      spark.stop()
    }
  }

  private def noop(df: DataFrame): Unit = df.write.format("noop").mode("overwrite").save()

  /** Times `runs` actions, each made by `setup` (untimed), and prints the median rate with the spread. */
  private def report(name: String, messages: Int, runs: Int)(setup: () => () => Unit): Unit = {
    val seconds = (1 to runs).map { _ =>
      val action = setup()
      val start = System.nanoTime()
      action()
      (System.nanoTime() - start) / 1e9
    }.sorted
    val rate = (s: Double) => math.round(messages / s)
    println(f"BENCH $name%-58s ${rate(seconds(seconds.size / 2))}%8d msg/s  " +
      s"(runs ${seconds.map(rate).mkString(", ")})")
  }
}
