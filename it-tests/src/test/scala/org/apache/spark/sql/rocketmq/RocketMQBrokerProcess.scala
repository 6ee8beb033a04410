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

import java.io.{BufferedReader, IOException, InputStreamReader, PrintWriter}
import java.lang.management.ManagementFactory
import java.net.{InetSocketAddress, ServerSocket}
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path, Paths, StandardOpenOption}
import java.util.UUID
import java.util.concurrent.{LinkedBlockingQueue, TimeUnit}

import scala.jdk.CollectionConverters._
import scala.util.Random

import org.apache.rocketmq.client.consumer.{DefaultMQPullConsumer, PullStatus}
import org.apache.rocketmq.client.producer.{DefaultMQProducer, SendStatus}
import org.apache.rocketmq.common.MQVersion
import org.apache.rocketmq.common.message.{Message, MessageExt}
import org.apache.rocketmq.common.namesrv.NamesrvConfig
import org.apache.rocketmq.namesrv.NamesrvController
import org.apache.rocketmq.remoting.netty.NettyServerConfig
import org.apache.rocketmq.remoting.protocol.RemotingCommand

import org.apache.spark.sql.rocketmq.EmbeddedRocketMQ.awaitCondition

/**
 * A RocketMQ name server in this JVM and one broker in a JVM of its own ([[RocketMQBrokerProcessMain]]),
 * so that tests can kill the broker with SIGKILL and bring it back on the same store directory and the
 * same ports. The broker's ports are chosen once, below the kernel's ephemeral range (a client socket
 * could otherwise take one while the broker is down), with `port - 2` (RocketMQ's second server) and the
 * HA port `port + 1` free too. The broker logs into `logs/` under [[storeDirectory]]; [[close]] (or
 * JVM exit) kills it and deletes the store (kept with `-Drocketmq.it.keepBrokerStore=true`).
 */
final class RocketMQBrokerProcess(val commitLogFileSize: Int = 16 * 1024 * 1024) extends AutoCloseable {
  import RocketMQBrokerProcess._

  val brokerName = "broker-p"
  val clusterName = "spark-it-process"
  val storeDirectory: Path = Files.createTempDirectory("rocketmq-spark-broker-process-")
  private val logDir = Files.createDirectories(storeDirectory.resolve("logs"))

  private var namesrv: NamesrvController = _
  private var namesrvPort = -1
  private var port = -1
  private var child: Process = _
  private var childIn: PrintWriter = _
  private var replies: LinkedBlockingQueue[String] = _
  private var producer: DefaultMQProducer = _
  private var consumer: DefaultMQPullConsumer = _
  private val topics = new java.util.concurrent.ConcurrentHashMap[String, Integer]()
  private val exitHook = new Thread(() => discard())

  /**
   * What the last [[kill]] took until the name server dropped the broker, and the last start until the
   * ports were free, until the broker JVM was listening, and until it was registered with its routes
   * (each from the start), in ms, for reports.
   */
  @volatile var lastDropMillis: Long = -1
  @volatile var lastPortWaitMillis: Long = -1
  @volatile var lastReadyMillis: Long = -1
  @volatile var lastStartMillis: Long = -1

  def nameServer: String = s"127.0.0.1:$namesrvPort"
  def brokerPort: Int = port
  def haPort: Int = port + 1
  def brokerAddress: String = s"127.0.0.1:$port"
  def isRunning: Boolean = synchronized(child != null && child.isAlive)

  /** Starts the name server and the broker JVM; returns once the broker is registered. */
  def start(): this.type = synchronized {
    require(namesrv == null, "already started")
    System.setProperty(RemotingCommand.REMOTING_VERSION_KEY, Integer.toString(MQVersion.CURRENT_VERSION))
    val config = new NamesrvConfig()
    config.setKvConfigPath(storeDirectory.resolve("namesrv/kvConfig.json").toString)
    config.setConfigStorePath(storeDirectory.resolve("namesrv/namesrv.properties").toString)
    val netty = new NettyServerConfig()
    netty.setListenPort(0)
    namesrv = new NamesrvController(config, netty)
    require(namesrv.initialize(), "the name server did not initialize")
    namesrv.start()
    namesrvPort = netty.getListenPort
    Runtime.getRuntime.addShutdownHook(exitHook)
    port = choosePort()
    launch()
    this
  }

  /** SIGKILLs the broker JVM and waits until the name server has dropped it (it sees the channel close). */
  def kill(): Unit = synchronized {
    require(child != null && child.isAlive, "the broker is not running")
    val begin = System.nanoTime()
    child.destroyForcibly()
    require(child.waitFor(30, TimeUnit.SECONDS), "the killed broker JVM did not exit")
    child = null
    awaitCondition("the name server to drop the killed broker", 60000)(!registered)
    lastDropMillis = (System.nanoTime() - begin) / 1000000
  }

  /** Starts the broker again on the same store and ports; returns once it and every topic route are back. */
  def restart(): Unit = synchronized {
    require(child == null, "the broker is still running")
    launch()
  }

  /** Creates (or resizes) `topic` with `queues` read and write queues; waits for its route. */
  def createTopic(topic: String, queues: Int = 4): Unit = synchronized {
    command(s"createTopic $topic $queues")
    topics.put(topic, queues)
    awaitRoute(topic, queues)
  }

  /** Waits until the broker has indexed every message it stored (it acknowledges a send before that). */
  def awaitIndexed(): Unit = synchronized(command("indexed"))

  /** Sends `count` messages, bodies `body(0 until count)`, in synchronous batches of `batchSize`. */
  def produce(topic: String, count: Int, body: Int => String = _.toString, batchSize: Int = 100): Unit = {
    val p = clientProducer
    (0 until count).grouped(batchSize).foreach { ids =>
      val batch = ids.map(i => new Message(topic, body(i).getBytes(StandardCharsets.UTF_8))).asJava
      val result = p.send(batch)
      require(result.getSendStatus == SendStatus.SEND_OK, s"batch send to $topic failed: $result")
    }
  }

  /** The next offset to be written per queue of `topic`, as the broker answers (indexed messages only). */
  def maxOffsets(topic: String): Map[Int, Long] = {
    val c = clientConsumer
    c.fetchSubscribeMessageQueues(topic).asScala.map(mq => mq.getQueueId -> c.maxOffset(mq)).toMap
  }

  /** Every stored message of `topic`, read with the plain pull consumer once the broker indexed all. */
  def readAll(topic: String): Seq[MessageExt] = {
    awaitIndexed()
    val c = clientConsumer
    c.fetchSubscribeMessageQueues(topic).asScala.toSeq.sortBy(_.getQueueId).flatMap { mq =>
      val max = c.maxOffset(mq)
      var offset = c.minOffset(mq)
      val out = Seq.newBuilder[MessageExt]
      while (offset < max) {
        val result = c.pull(mq, "*", offset, 1000, 10000)
        require(result.getPullStatus == PullStatus.FOUND, s"pull of $mq at $offset: ${result.getPullStatus}")
        out ++= result.getMsgFoundList.asScala
        offset = result.getNextBeginOffset
      }
      out.result()
    }
  }

  def readBodies(topic: String): Seq[String] = readAll(topic).map(m => new String(m.getBody, StandardCharsets.UTF_8))

  /** Kills the broker, stops the clients and the name server, deletes the store. */
  override def close(): Unit = {
    synchronized {
      if (producer != null) { producer.shutdown(); producer = null }
      if (consumer != null) { consumer.shutdown(); consumer = null }
    }
    discard()
    synchronized { if (namesrv != null) { namesrv.shutdown(); namesrv = null } }
    try Runtime.getRuntime.removeShutdownHook(exitHook)
    catch { case _: IllegalStateException => } // the JVM is exiting already
  }

  private def discard(): Unit = {
    val running = synchronized { val c = child; child = null; c }
    if (running != null) { running.destroyForcibly(); running.waitFor(30, TimeUnit.SECONDS) }
    if (!java.lang.Boolean.getBoolean("rocketmq.it.keepBrokerStore")) {
      EmbeddedRocketMQ.deleteRecursively(storeDirectory.toFile)
    }
  }

  private def registered: Boolean =
    Option(namesrv.getRouteInfoManager.getAllClusterInfo.getBrokerAddrTable.get(brokerName))
      .exists(_.getBrokerAddrs.containsValue(brokerAddress))

  private def awaitRoute(topic: String, queues: Int): Unit =
    awaitCondition(s"the route of topic $topic", 60000) {
      val route = namesrv.getRouteInfoManager.pickupTopicRouteData(topic)
      route != null && route.getQueueDatas.asScala.exists(_.getReadQueueNums == queues)
    }

  /** Starts the broker JVM; returns once it is registered and every topic it had is routed again. */
  private def launch(): Unit = {
    val begin = System.nanoTime()
    // A killed broker's listening sockets close with it; its accepted connections may linger in
    // TIME_WAIT, which SO_REUSEADDR (RocketMQ's servers set it) allows to bind over.
    awaitCondition(s"ports ${port - 2}, $port and ${port + 1} to be free", 60000) {
      Seq(port - 2, port, port + 1).forall(bindable)
    }
    lastPortWaitMillis = (System.nanoTime() - begin) / 1000000
    val logback = logDir.resolve("rmq.logback.xml")
    Files.write(logback, logbackConfig(logDir.resolve("broker.log")).getBytes(StandardCharsets.UTF_8))
    val jvmFlags = ManagementFactory.getRuntimeMXBean.getInputArguments.asScala.filter { a =>
      a.startsWith("--add-") || a == "-XX:+IgnoreUnrecognizedVMOptions" || a.startsWith("-Djdk.reflect.") ||
      a.startsWith("-Dio.netty.")
    }
    val cmd = Seq(Paths.get(System.getProperty("java.home"), "bin", "java").toString, "-Xmx512m",
      "-XX:+UseSerialGC") ++ jvmFlags ++ Seq(
      s"-Duser.home=${System.getProperty("user.home")}",
      s"-Drocketmq.log.root=$logDir",
      s"-Drmq.logback.configurationFile=$logback",
      "-Drocketmq.broker.diskSpaceWarningLevelRatio=0.99",
      "-Dtls.server.mode=disabled", // else building a self-signed TLS context takes seconds at each start
      "-cp",
      System.getProperty("java.class.path"),
      RocketMQBrokerProcessMain.getClass.getName.stripSuffix("$"),
      nameServer,
      storeDirectory.toString,
      port.toString,
      haPort.toString,
      brokerName,
      clusterName,
      commitLogFileSize.toString)
    val process = new ProcessBuilder(cmd: _*)
      .redirectError(ProcessBuilder.Redirect.appendTo(logDir.resolve("broker-stderr.log").toFile))
      .start()
    child = process
    childIn = new PrintWriter(process.getOutputStream, true, StandardCharsets.UTF_8)
    val queue = new LinkedBlockingQueue[String]()
    replies = queue
    val reader = new Thread(() => {
        val in = new BufferedReader(new InputStreamReader(process.getInputStream, StandardCharsets.UTF_8))
        val other = logDir.resolve("broker-stdout.log")
        var line = try in.readLine()
        catch { case _: IOException => null }
        while (line != null) {
          if (line.startsWith(RocketMQBrokerProcessMain.Prefix)) {
            queue.put(line.stripPrefix(RocketMQBrokerProcessMain.Prefix))
          } else {
            Files.write(other, (line + "\n").getBytes(StandardCharsets.UTF_8), StandardOpenOption.CREATE,
              StandardOpenOption.APPEND)
          }
          line = try in.readLine()
          catch { case _: IOException => null }
        }
      }, s"broker-process-stdout-$port")
    reader.setDaemon(true)
    reader.start()

    val ready = awaitReply(120000)
    require(ready == RocketMQBrokerProcessMain.Ready, s"unexpected first line from the broker: $ready")
    lastReadyMillis = (System.nanoTime() - begin) / 1000000
    // Its first periodic registration comes 10 s after start: ask for one until the name server has it.
    var lastAttempt = 0L
    awaitCondition("the broker to register with the name server", 60000) {
      if (System.nanoTime() - lastAttempt > 1000L * 1000 * 1000) {
        lastAttempt = System.nanoTime()
        command("register")
      }
      registered
    }
    topics.asScala.foreach { case (topic, queues) => awaitRoute(topic, queues) }
    lastStartMillis = (System.nanoTime() - begin) / 1000000
  }

  /** Sends one command line to the broker JVM and returns its `OK` answer's rest. */
  private def command(line: String): String = {
    require(child != null && child.isAlive, s"the broker is not running (command: $line)")
    childIn.println(line)
    val answer = awaitReply(120000)
    if (!answer.startsWith("OK")) throw new IllegalStateException(s"broker command '$line' failed: $answer")
    answer.stripPrefix("OK").trim
  }

  private def awaitReply(timeoutMs: Long): String = {
    val deadline = System.nanoTime() + timeoutMs * 1000000L
    var answer: String = null
    while (answer == null) {
      answer = replies.poll(100, TimeUnit.MILLISECONDS)
      if (answer == null && (!child.isAlive || System.nanoTime() > deadline)) {
        val state = if (child.isAlive) s"no answer within $timeoutMs ms" else s"it exited (${child.exitValue()})"
        throw new IllegalStateException(s"broker JVM on port $port: $state; stderr ends with:\n${stderrTail()}")
      }
    }
    answer
  }

  private def stderrTail(): String = {
    val file = logDir.resolve("broker-stderr.log")
    if (!Files.exists(file)) "" else Files.readAllLines(file).asScala.takeRight(20).mkString("\n")
  }

  private def clientProducer: DefaultMQProducer = synchronized {
    if (producer == null) {
      producer = new DefaultMQProducer("broker-process-test-producer")
      producer.setNamesrvAddr(nameServer)
      producer.setInstanceName(s"broker-process-producer-${UUID.randomUUID()}")
      producer.setSendMsgTimeout(10000)
      producer.start()
    }
    producer
  }

  private def clientConsumer: DefaultMQPullConsumer = synchronized {
    if (consumer == null) {
      consumer = new DefaultMQPullConsumer("broker-process-test-reader")
      consumer.setNamesrvAddr(nameServer)
      consumer.setInstanceName(s"broker-process-reader-${UUID.randomUUID()}")
      consumer.setEnableRebalance(false)
      consumer.start()
    }
    consumer
  }
}

object RocketMQBrokerProcess {

  /** Whether a server socket (SO_REUSEADDR, as RocketMQ's servers) could bind `port` on every address. */
  def bindable(port: Int): Boolean = {
    val socket = new ServerSocket()
    try {
      socket.setReuseAddress(true)
      socket.bind(new InetSocketAddress(port))
      true
    } catch { case _: IOException => false }
    finally socket.close()
  }

  /** A broker port `p` below the ephemeral range with `p - 2`, `p` and `p + 1` free. */
  private def choosePort(): Int = {
    val rangeFile = Paths.get("/proc/sys/net/ipv4/ip_local_port_range")
    val ephemeralLow =
      if (Files.exists(rangeFile)) Files.readAllLines(rangeFile).get(0).trim.split("\\s+")(0).toInt else 32768
    val low = 12000
    require(ephemeralLow > low + 1000, s"the ephemeral port range starts at $ephemeralLow")
    Iterator.continually(low + 2 + Random.nextInt(ephemeralLow - low - 10)).take(200)
      .find(p => Seq(p - 2, p, p + 1).forall(bindable))
      .getOrElse(throw new IllegalStateException("no free broker port found"))
  }

  private def logbackConfig(file: Path): String =
    s"""<configuration>
       |  <appender name="FILE" class="ch.qos.logback.core.FileAppender">
       |    <file>$file</file>
       |    <encoder><pattern>%d{HH:mm:ss.SSS} %-5level [%thread] %logger{20} - %msg%n</pattern></encoder>
       |  </appender>
       |  <root level="INFO"><appender-ref ref="FILE"/></root>
       |</configuration>
       |""".stripMargin
}
