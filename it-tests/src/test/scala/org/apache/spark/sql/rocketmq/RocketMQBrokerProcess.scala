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

import java.io.IOException
import java.net.{InetSocketAddress, ServerSocket}
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Path, Paths}
import java.util.concurrent.TimeUnit

import scala.jdk.CollectionConverters._
import scala.util.Random

import org.apache.rocketmq.common.message.MessageExt
import org.apache.rocketmq.namesrv.NamesrvController

import org.apache.spark.sql.rocketmq.EmbeddedRocketMQ.awaitCondition

/**
 * A RocketMQ name server in this JVM and one broker in a JVM of its own
 * ([[RocketMQBrokerProcessMain]]), so that tests can kill the broker with SIGKILL and bring it back
 * on the same store directory and the same ports. The broker's ports are chosen once, below the
 * kernel's ephemeral range (a client socket could otherwise take one while the broker is down),
 * with `port - 2` (RocketMQ's second server) and the HA port `port + 1` free too. A stand-by JVM
 * boots while the broker runs, so a restart only loads the store. Logs go to `logs/` under
 * [[storeDirectory]]; [[close]] (or JVM exit) kills both JVMs and deletes the store (kept when the
 * environment has ROCKETMQ_IT_KEEP_BROKER_STORE=true). `brokerJvmOptions` are the broker JVM's heap
 * and collector flags (the bench gives it what Kafka gets); `brokerSettings`, `key=value` settings
 * of the broker, its store or its server (`brokerIP1`, the address it tells clients, and
 * `bindAddress`, the one it listens on, put it behind a proxy).
 */
final class RocketMQBrokerProcess(
    val commitLogFileSize: Int = 16 * 1024 * 1024,
    brokerJvmOptions: Seq[String] = Seq("-Xmx512m", "-XX:+UseSerialGC"),
    brokerSettings: Seq[String] = Nil)
  extends AutoCloseable {
  import RocketMQBrokerProcess._

  val brokerName = "broker-p"
  val clusterName = "spark-it-process"
  val storeDirectory: Path = Files.createTempDirectory("rocketmq-spark-broker-process-")
  private val logDir = Files.createDirectories(storeDirectory.resolve("logs"))

  private var namesrv: NamesrvController = _
  private var namesrvPort = -1
  private var port = -1
  @volatile private var broker: BrokerJvm = _ // the running broker
  @volatile private var standby: BrokerJvm = _ // the next one, booted
  private lazy val clients = new RocketMQPlainClients(nameServer)
  private val topics = new java.util.concurrent.ConcurrentHashMap[String, Integer]()
  private val exitHook = new Thread(() => discard())

  /**
   * For reports, in ms: how long after the last [[kill]] the name server had dropped the broker;
   * how long after the last (re)start the ports were free, the broker listened, and it was
   * registered with its routes.
   */
  @volatile var lastDropMillis: Long = -1
  @volatile var lastPortWaitMillis: Long = -1
  @volatile var lastReadyMillis: Long = -1
  @volatile var lastStartMillis: Long = -1

  def nameServer: String = s"127.0.0.1:$namesrvPort"
  def brokerPort: Int = port
  def haPort: Int = port + 1
  /** The address the broker tells clients (`brokerIP1` among `brokerSettings`, else 127.0.0.1). */
  def brokerAddress: String = s"$advertisedHost:$port"
  private val advertisedHost = brokerSettings.collectFirst {
    case setting if setting.startsWith("brokerIP1=") => setting.stripPrefix("brokerIP1=")
  }.getOrElse("127.0.0.1")
  def isRunning: Boolean = synchronized(broker != null && broker.process.isAlive)

  /** Starts the name server and the broker JVM; returns once the broker is registered. */
  def start(): this.type = synchronized {
    require(namesrv == null, "already started")
    namesrv = TestBrokerConfig.startNameServer(storeDirectory)
    namesrvPort = namesrv.getNettyServerConfig.getListenPort
    Runtime.getRuntime.addShutdownHook(exitHook)
    port = choosePort()
    Files.write(logDir.resolve("rmq.logback.xml"),
      logbackConfig(logDir.resolve("broker.log")).getBytes(UTF_8))
    launch()
    this
  }

  /** Runs `hook` around every request the name server takes in, until [[clearNameServerHooks]]. */
  def addNameServerHook(hook: org.apache.rocketmq.remoting.RPCHook): Unit =
    namesrv.getRemotingServer.registerRPCHook(hook)

  def clearNameServerHooks(): Unit = namesrv.getRemotingServer.clearRPCHook()

  /**
   * SIGKILLs the broker JVM and waits until the name server has dropped it (it sees the channel
   * close).
   */
  def kill(): Unit = synchronized {
    require(isRunning, "the broker is not running")
    val begin = System.nanoTime()
    broker.kill()
    broker = null
    awaitCondition("the name server to drop the killed broker", 60000)(!registered)
    lastDropMillis = (System.nanoTime() - begin) / 1000000
  }

  /**
   * Starts the broker again on the same store and ports; returns once it and every topic route are
   * back.
   */
  def restart(): Unit = synchronized {
    require(broker == null, "the broker is still running")
    launch()
  }

  /** Creates (or resizes) `topic` with `queues` read and write queues; waits for its route. */
  def createTopic(topic: String, queues: Int = 4): Unit = synchronized {
    command(s"createTopic $topic $queues")
    topics.put(topic, queues)
    awaitRoute(topic, queues)
  }

  /**
   * Waits until the broker has indexed every message it stored (it acknowledges a send before
   * that).
   */
  def awaitIndexed(): Unit = synchronized(command("indexed"))

  /**
   * Sends `count` messages, bodies `body(0 until count)`, in synchronous batches of `batchSize`.
   */
  def produce(topic: String, count: Int, body: Int => String = _.toString, batchSize: Int = 100)
      : Unit =
    clients.produce(topic, count, body, batchSize)

  /**
   * The next offset to be written per queue of `topic`, as the broker answers (indexed messages
   * only).
   */
  def maxOffsets(topic: String): Map[Int, Long] = clients.maxOffsets(topic)

  /**
   * Every stored message of `topic`, read with a plain pull consumer once the broker indexed all.
   */
  def readAll(topic: String): Seq[MessageExt] = {
    awaitIndexed()
    clients.readAll(topic)
  }

  def readBodies(topic: String): Seq[String] = readAll(topic).map(m => new String(m.getBody, UTF_8))

  /** Kills the broker JVMs, stops the clients and the name server, deletes the store. */
  override def close(): Unit = {
    clients.close()
    discard()
    synchronized { if (namesrv != null) { namesrv.shutdown(); namesrv = null } }
    try Runtime.getRuntime.removeShutdownHook(exitHook)
    catch { case _: IllegalStateException => } // the JVM is exiting already
  }

  private def discard(): Unit = {
    // No lock: the exit hook runs this while a test thread may be waiting in a synchronized method.
    val jvms = Seq(broker, standby)
    broker = null
    standby = null
    jvms.filter(_ != null).map(_.process).foreach { p =>
      p.destroyForcibly(); p.waitFor(30, TimeUnit.SECONDS)
    }
    if (!sys.env.get("ROCKETMQ_IT_KEEP_BROKER_STORE").contains("true")) {
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

  /**
   * Starts the broker in the stand-by JVM; returns once it is registered and every topic is routed
   * again.
   */
  private def launch(): Unit = {
    val begin = System.nanoTime()
    val jvm = if (standby != null && standby.process.isAlive) standby else newJvm()
    standby = null
    // A killed broker's listening sockets close with it; connections it had accepted may linger in
    // TIME_WAIT, which SO_REUSEADDR (RocketMQ's servers set it) allows to bind over.
    awaitCondition(s"ports ${port - 2}, $port and ${port + 1} to be free", 60000) {
      Seq(port - 2, port, port + 1).forall(bindable)
    }
    lastPortWaitMillis = (System.nanoTime() - begin) / 1000000
    jvm.awaitReply(RocketMQBrokerProcessMain.Standby)
    broker = jvm
    jvm.send("start")
    jvm.awaitReply(RocketMQBrokerProcessMain.Ready)
    lastReadyMillis = (System.nanoTime() - begin) / 1000000
    // Its first periodic registration comes 10 s after start: ask for one until the name server has
    // it.
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
    standby = newJvm()
  }

  /** The operating system's id of the running broker's JVM (the bench reads its CPU time). */
  def brokerPid: Long = {
    require(isRunning, "the broker is not running")
    broker.process.pid()
  }

  /** Sends one command line to the running broker and returns its `OK` answer's rest. */
  private def command(line: String): String = {
    require(isRunning, s"the broker is not running (command: $line)")
    broker.send(line)
    broker.awaitReply("OK").stripPrefix("OK").trim
  }

  private def newJvm(): BrokerJvm = new BrokerJvm(logDir, brokerJvmOptions,
    Seq(nameServer, storeDirectory.toString, port.toString, haPort.toString, brokerName,
      clusterName,
      commitLogFileSize.toString) ++ brokerSettings)
}

object RocketMQBrokerProcess {

  /**
   * Whether a server socket (SO_REUSEADDR, as RocketMQ's servers) could bind `port` on every
   * address.
   */
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
  def choosePort(): Int = {
    val rangeFile = Paths.get("/proc/sys/net/ipv4/ip_local_port_range")
    val ephemeralLow =
      if (Files.exists(rangeFile)) Files.readAllLines(rangeFile).get(0).trim.split("\\s+")(0).toInt
      else 32768
    val low = 12000
    require(ephemeralLow > low + 1000, s"the ephemeral port range starts at $ephemeralLow")
    Iterator.continually(low + 2 + Random.nextInt(ephemeralLow - low - 10)).take(200)
      .find(p => Seq(p - 2, p, p + 1).forall(bindable))
      .getOrElse(throw new IllegalStateException("no free broker port found"))
  }

  def logbackConfig(file: Path): String =
    s"""<configuration>
       |  <appender name="FILE" class="ch.qos.logback.core.FileAppender">
       |    <file>$file</file>
       |    <encoder>
       |      <pattern>%d{HH:mm:ss.SSS} %-5level [%thread] %logger{20} - %msg%n</pattern>
       |    </encoder>
       |  </appender>
       |  <root level="INFO"><appender-ref ref="FILE"/></root>
       |</configuration>
       |""".stripMargin
}
