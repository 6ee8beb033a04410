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

import java.net.{InetSocketAddress, ServerSocket, Socket}
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path, Paths}
import java.util.Properties

import scala.jdk.CollectionConverters._

import org.apache.kafka.clients.admin.{Admin, AdminClientConfig, NewTopic, OffsetSpec}
import org.apache.kafka.clients.producer.KafkaProducer
import org.apache.kafka.common.{TopicPartition, Uuid}
import org.apache.kafka.common.serialization.ByteArraySerializer

import org.apache.spark.sql.rocketmq.EmbeddedRocketMQ

/**
 * A single-node Kafka (KRaft: broker and controller in one JVM) in a process of its own, on
 * loopback ephemeral ports with a temporary log directory: the peer the bench measures the
 * connector against. Its classpath is `kafkaClasspath` (the broker's own jars, apart from Spark's);
 * `jvmOptions` set its heap; its output goes to `logFile`, which outlives it. A broker whose
 * `advertisedHost` is another loopback address listens on 127.0.0.1 and tells clients that address
 * and its port: a fault proxy there then stands between them and the broker.
 */
final class KafkaProcess(kafkaClasspath: String, jvmOptions: Seq[String], logFile: Path,
    advertisedHost: String = "127.0.0.1")
  extends AutoCloseable {
  private val dir: Path = Files.createTempDirectory("bench-kafka-")
  // Both sockets open while the ports are chosen: two in turn can get the same port.
  private val (brokerPort, controllerPort) = {
    val (broker, controller) = (new ServerSocket(0), new ServerSocket(0))
    try (broker.getLocalPort, controller.getLocalPort)
    finally { broker.close(); controller.close() }
  }
  private var process: Process = _

  def bootstrapServers: String = s"127.0.0.1:$brokerPort"

  /** The port the broker listens on (127.0.0.1) and tells clients (at `advertisedHost`). */
  def port: Int = brokerPort

  def start(timeoutMs: Long = 120000): this.type = {
    val config = dir.resolve("server.properties")
    Files.write(config,
      Seq(
        "process.roles=broker,controller",
        "node.id=1",
        s"controller.quorum.bootstrap.servers=127.0.0.1:$controllerPort",
        s"listeners=PLAINTEXT://127.0.0.1:$brokerPort,CONTROLLER://127.0.0.1:$controllerPort",
        s"advertised.listeners=PLAINTEXT://$advertisedHost:$brokerPort",
        "controller.listener.names=CONTROLLER",
        "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        s"log.dirs=${dir.resolve("logs")}",
        "offsets.topic.replication.factor=1",
        "transaction.state.log.replication.factor=1",
        "transaction.state.log.min.isr=1",
        "group.initial.rebalance.delay.ms=0"
      ).mkString("\n").getBytes(StandardCharsets.UTF_8))
    // A cluster id starting with '-' reads as an option to the storage tool.
    val clusterId = Iterator.continually(Uuid.randomUuid().toString).find(!_.startsWith("-")).get
    run(Seq("kafka.tools.StorageTool", "format", "-t", clusterId, "-c", config.toString,
      "--standalone"))
      .waitFor()
    process = run(Seq("kafka.Kafka", config.toString))
    val deadline = System.nanoTime() + timeoutMs * 1000000L
    while (!accepts(brokerPort)) {
      require(process.isAlive, s"Kafka exited with ${process.exitValue()} (see $logFile)")
      require(System.nanoTime() < deadline, s"Kafka did not listen within $timeoutMs ms")
      Thread.sleep(100) // polling the port, bounded by the deadline
    }
    this
  }

  /** The operating system's id of the broker's JVM (the bench reads its CPU time). */
  def pid: Long = process.pid()

  /**
   * Creates `topic` with `partitions`, on the broker's defaults but for `configs` (topic configs).
   */
  def createTopic(topic: String, partitions: Int, configs: Map[String, String] = Map.empty)
      : Unit = {
    val admin = Admin.create(Map[String, AnyRef](
      AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG -> bootstrapServers).asJava)
    try admin.createTopics(Seq(new NewTopic(topic, partitions, 1.toShort).configs(
        configs.asJava)).asJava).all().get()
    finally admin.close()
  }

  /** How many records `topic` holds: the sum of its partitions' end offsets. */
  def endOffsets(topic: String): Long = {
    val admin = Admin.create(Map[String, AnyRef](
      AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG -> bootstrapServers).asJava)
    try {
      val partitions = admin.describeTopics(Seq(topic).asJava).allTopicNames().get().get(
        topic).partitions().asScala
      val latest =
        partitions.map(p => new TopicPartition(topic, p.partition()) -> OffsetSpec.latest()).toMap
      admin.listOffsets(latest.asJava).all().get().values().asScala.map(_.offset()).sum
    } finally admin.close()
  }

  override def close(): Unit = {
    if (process != null) { process.destroyForcibly().waitFor(); process = null }
    EmbeddedRocketMQ.deleteRecursively(dir.toFile)
  }

  private def run(mainAndArgs: Seq[String]): Process = {
    val java = Paths.get(System.getProperty("java.home"), "bin", "java").toString
    new ProcessBuilder(
      (Seq(java) ++ jvmOptions ++ Seq("-cp", kafkaClasspath) ++ mainAndArgs).asJava)
      .redirectErrorStream(true)
      .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile))
      .start()
  }

  private def accepts(port: Int): Boolean =
    try {
      val s = new Socket(); s.connect(new InetSocketAddress("127.0.0.1", port), 200); s.close();
      true
    } catch { case _: java.io.IOException => false }
}

object KafkaProcess {
  /** Reads the classpath written by `build/sbt bench/exportBenchClasspath`. */
  def classpathFrom(file: Path): String =
    new String(Files.readAllBytes(file), StandardCharsets.UTF_8).trim

  /**
   * Kafka's producer with its default settings but idempotence, bytes in and out. An idempotent
   * producer sending 500,000 records from one thread as fast as it can stalled here on its second
   * or third run: the broker kept refusing batches of one partition with
   * OutOfOrderSequenceException (sequence 0 again) until they expired after 120 s, with brokers
   * 3.9.2 and 4.3.1 alike.
   */
  def producer(bootstrapServers: String): KafkaProducer[Array[Byte], Array[Byte]] =
    new KafkaProducer(
      props("bootstrap.servers" -> bootstrapServers, "enable.idempotence" -> "false"),
      new ByteArraySerializer,
      new ByteArraySerializer)

  def props(entries: (String, AnyRef)*): Properties = {
    val p = new Properties()
    entries.foreach { case (k, v) => p.put(k, v) }
    p
  }
}
