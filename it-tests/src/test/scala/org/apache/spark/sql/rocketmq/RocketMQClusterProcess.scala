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

import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Path}

import scala.concurrent.{Await, Future}
import scala.concurrent.ExecutionContext.Implicits.global
import scala.concurrent.duration._
import scala.jdk.CollectionConverters._

import org.apache.rocketmq.common.MixAll
import org.apache.rocketmq.common.message.MessageExt
import org.apache.rocketmq.namesrv.NamesrvController

import org.apache.spark.sql.rocketmq.EmbeddedRocketMQ.awaitCondition
import org.apache.spark.sql.rocketmq.common.RocketMQQueue

/**
 * A RocketMQ cluster on one machine, from the Maven Central jars: a name server (and, for the
 * controller-mode group, RocketMQ's controller) in this JVM, and every broker in a JVM of its own
 * ([[RocketMQBrokerProcessMain]]) on ports of its own with a store of its own, so that tests can
 * SIGKILL any broker and start it again on the same store and ports. The broker groups (broker
 * names), each hosting the topics [[createTopic]] makes:
 * - [[GroupA]]: a master (`a-master`, brokerId 0, ASYNC_MASTER) and a replica (`a-replica`,
 *   brokerId 1, SLAVE, `slaveReadEnable=true`), RocketMQ's classic master/slave pair;
 *   - [[GroupB]]: a master alone (`b-master`);
 * - [[GroupC]] (with `controllerMode`): two brokers in controller mode (`c-1`, `c-2`); the
 *   controller elects one master, and elects the other when the master dies. Everything else is
 *   RocketMQ's default broker configuration (as [[TestBrokerConfig]] sets it for every test
 *   broker). Logs go to `logs/` under [[storeDirectory]]; [[close]] kills every JVM and deletes the
 *   store.
 */
final class RocketMQClusterProcess(controllerMode: Boolean = true) extends AutoCloseable {
  import RocketMQClusterProcess._

  val clusterName = "spark-it-cluster"
  val storeDirectory: Path = Files.createTempDirectory("rocketmq-spark-cluster-")
  private val logDir = Files.createDirectories(storeDirectory.resolve("logs"))
  private var namesrv: NamesrvController = _
  private var namesrvPort = -1
  private val controller = new RocketMQClusterController(storeDirectory.resolve("controller"))
  private lazy val clients = new RocketMQPlainClients(nameServer)
  private val topics = new java.util.concurrent.ConcurrentHashMap[String, Integer]()
  private val exitHook = new Thread(() => discard())

  /**
   * One broker: its group, its name in tests, its ports and store, its settings beyond the
   * defaults.
   */
  final class Broker(val group: String, val label: String, val settings: Seq[String]) {
    val port: Int = choosePort()
    val store: Path = storeDirectory.resolve(label)
    @volatile private[RocketMQClusterProcess] var jvm: BrokerJvm = _
    def address: String = s"127.0.0.1:$port"
    def isRunning: Boolean = jvm != null && jvm.process.isAlive
    def pid: Long = jvm.process.pid()
    private[RocketMQClusterProcess] def arguments: Seq[String] =
      Seq(nameServer, store.toString, port.toString, (port + 1).toString, group, clusterName,
        (16 * 1024 * 1024).toString) ++ settings
    override def toString: String = s"$label ($group at $address)"
  }

  private val chosenPorts = scala.collection.mutable.Set.empty[Int]
  private def choosePort(): Int = synchronized {
    val port = Iterator.continually(RocketMQBrokerProcess.choosePort())
      .find(p => !(p - 3 to p + 3).exists(chosenPorts.contains)).get
    chosenPorts += port
    port
  }

  lazy val brokers: Seq[Broker] = {
    val classic = Seq(
      new Broker(GroupA, "a-master", Seq("brokerId=0", "brokerRole=ASYNC_MASTER")),
      new Broker(GroupA, "a-replica",
        Seq("brokerId=1", "brokerRole=SLAVE", "slaveReadEnable=true")),
      new Broker(GroupB, "b-master", Seq("brokerId=0", "brokerRole=ASYNC_MASTER")))
    val inControllerMode = if (!controllerMode) Nil
    else Seq("c-1", "c-2").map { label =>
      new Broker(GroupC, label,
        Seq("enableControllerMode=true", s"controllerAddr=${controller.address}") ++
          RocketMQClusterController.BrokerSettings)
    }
    classic ++ inControllerMode
  }

  def broker(label: String): Broker = brokers.find(_.label == label).getOrElse(
    throw new IllegalArgumentException(
      s"no broker $label; there are ${brokers.map(_.label).mkString(", ")}"))

  def groups: Seq[String] = brokers.map(_.group).distinct

  def nameServer: String = s"127.0.0.1:$namesrvPort"

  /**
   * Starts the name server, the controller and every broker; returns once every group has a master.
   */
  def start(): this.type = synchronized {
    require(namesrv == null, "already started")
    namesrv = TestBrokerConfig.startNameServer(storeDirectory)
    namesrvPort = namesrv.getNettyServerConfig.getListenPort
    Runtime.getRuntime.addShutdownHook(exitHook)
    Files.write(logDir.resolve("rmq.logback.xml"),
      RocketMQBrokerProcess.logbackConfig(logDir.resolve("brokers.log")).getBytes(UTF_8))
    if (controllerMode) controller.start()
    // Masters first: a replica learns its master's address when it registers, from the name server.
    val (replicas, others) = brokers.partition(_.settings.contains("brokerRole=SLAVE"))
    Await.result(Future.sequence(others.map(b => Future(launch(b)))), 5.minutes)
    replicas.foreach(launch)
    groups.foreach(awaitMaster)
    this
  }

  /**
   * SIGKILLs `label`'s JVM; returns once the name server has dropped it (its connection closed).
   */
  def kill(label: String): Unit = synchronized {
    val b = broker(label)
    require(b.isRunning, s"$b is not running")
    b.jvm.kill()
    b.jvm = null
    awaitCondition(s"the name server to drop $b", 60000)(!registered(b))
  }

  /**
   * Starts `label` again on its store and ports; returns once it is registered and its topics
   * routed.
   */
  def restart(label: String): Unit = synchronized {
    val b = broker(label)
    require(!b.isRunning, s"$b is still running")
    launch(b)
  }

  /** The broker that is the master of `group` now, if any (in controller mode, the elected one). */
  def masterOf(group: String): Option[Broker] =
    Option(namesrv.getRouteInfoManager.getAllClusterInfo.getBrokerAddrTable.get(group))
      .flatMap(data => Option(data.getBrokerAddrs.get(MixAll.MASTER_ID)))
      .flatMap(address => brokers.find(b => b.group == group && b.address == address))

  /**
   * Waits until `group` has a master registered with the name server (a new one after an election).
   */
  def awaitMaster(group: String): Broker = {
    awaitCondition(s"a master of broker group $group", 120000)(masterOf(group).exists(_.isRunning))
    masterOf(group).get
  }

  /**
   * Creates (or resizes) `topic` with `queues` queues on each of `groups` (all by default): on the
   * master, as `mqadmin updateTopic` does, and on the running replicas, which would otherwise copy
   * it from their master seconds later. Waits for its route.
   */
  def createTopic(topic: String, queues: Int = 4, groups: Seq[String] = groups): Unit =
    synchronized {
      groups.foreach { group =>
        brokers.filter(b => b.group == group && b.isRunning).foreach(
          _.jvm.command(s"createTopic $topic $queues"))
      }
      topics.put(topic, queues)
      awaitCondition(s"the route of topic $topic on ${groups.mkString(", ")}", 60000) {
        Option(namesrv.getRouteInfoManager.pickupTopicRouteData(topic)).exists { route =>
          groups.forall(g =>
            route.getQueueDatas.asScala.exists(q =>
              q.getBrokerName == g && q.getReadQueueNums == queues))
        }
      }
    }

  /**
   * Creates `topic` on `broker` alone (a master whose replica has not copied it yet, for instance).
   */
  def createTopicOn(label: String, topic: String, queues: Int = 4): Unit =
    broker(label).jvm.command(s"createTopic $topic $queues")

  /**
   * Sends one command to a running broker (see [[RocketMQBrokerProcessMain]]); its answer's rest.
   */
  def command(label: String, line: String): String = {
    val b = broker(label)
    require(b.isRunning, s"$b is not running (command: $line)")
    b.jvm.command(line)
  }

  /** The max offset of each queue of `topic` in running broker `label`'s own store. */
  def storedOffsets(label: String, topic: String): Seq[Long] =
    command(label, s"offsets $topic").split(",").filter(_.nonEmpty).map(_.toLong).toSeq

  /**
   * Waits until every running replica of `group` holds what its master holds of `topic`
   * (replication is async).
   */
  def awaitReplicated(group: String, topic: String): Unit = {
    val master =
      masterOf(group).getOrElse(throw new IllegalStateException(s"group $group has no master"))
    brokers.filter(b => b.group == group && b != master && b.isRunning).foreach { replica =>
      awaitCondition(s"$replica to copy what $master holds of $topic", 60000) {
        storedOffsets(replica.label, topic) == storedOffsets(master.label, topic)
      }
    }
  }

  /**
   * Whether running broker `label` knows `topic` (a replica copies its master's topics every few
   * seconds).
   */
  def knowsTopic(label: String, topic: String): Boolean =
    command(label, s"knowsTopic $topic").toBoolean

  /** The producer groups running broker `label` could check back with now. */
  def producerGroups(label: String): Seq[String] =
    command(label, "producerGroups").split(",").filter(_.nonEmpty).toSeq

  /**
   * Sends `count` messages with the plain producer, after it has asked for the topic's route afresh
   * (it would otherwise learn of a group that joined the topic only at its next periodic look-up).
   * It sends batches of `batchSize` to the live groups' queues in turn: the default of 10 puts
   * messages on every queue of a topic of a few queues per group once `count` is a few hundred, so
   * that tests about one group find messages there.
   */
  def produce(topic: String, count: Int, body: Int => String = _.toString, batchSize: Int = 10)
      : Unit = {
    clients.producer.getDefaultMQProducerImpl.getMqClientFactory.updateTopicRouteInfoFromNameServer(
      topic)
    clients.produce(topic, count, body, batchSize)
  }

  /** Every message of `topic` the brokers serve now, read with a plain pull consumer. */
  def readAll(topic: String): Seq[MessageExt] = readAllAs(topic)(identity)

  /**
   * The bodies of every message of `topic`: a soak's hundreds of thousands, never all their
   * messages held at once.
   */
  def readBodies(topic: String): Seq[String] = readAllAs(topic)(m => new String(m.getBody, UTF_8))

  private def readAllAs[T](topic: String)(keep: MessageExt => T): Seq[T] = {
    brokers.filter(b => b.isRunning && masterOf(b.group).contains(b)).foreach(
      _.jvm.command("indexed"))
    clients.routedConsumer(topic)
    clients.readAllAs(topic)(keep)
  }

  /**
   * How many messages `topic`'s queues hold now, as each group's master (or a replica) counts them;
   * with `groups`, in those groups' queues only. Committed transactional messages count, half
   * messages do not.
   */
  def messageCount(topic: String, groups: Seq[String] = groups): Long = {
    val c = clients.routedConsumer(topic)
    c.fetchSubscribeMessageQueues(topic).asScala.toSeq.filter(mq =>
      groups.contains(mq.getBrokerName))
      .map(mq => c.maxOffset(mq) - c.minOffset(mq)).sum
  }

  /**
   * The bodies of `topic`'s messages in `group`'s queues, as its master (or a replica) serves them
   * now.
   */
  def bodiesOn(topic: String, group: String): Seq[String] = {
    val c = clients.routedConsumer(topic)
    c.fetchSubscribeMessageQueues(topic).asScala.toSeq.filter(_.getBrokerName == group).flatMap {
      mq =>
        clients.readRangeAs(mq, c.minOffset(mq), c.maxOffset(mq))(m => new String(m.getBody, UTF_8))
    }
  }

  /**
   * The next offset of each queue of `topic`, as each group's master stores it (a running replica's
   * store for a group without a master): no client route involved, so it answers during an outage
   * too.
   */
  def latestOffsets(topic: String): Map[RocketMQQueue, Long] = groups.flatMap { group =>
    masterOf(group).filter(_.isRunning).orElse(
      brokers.find(b => b.group == group && b.isRunning)).toSeq
      .flatMap(b =>
        storedOffsets(b.label, topic).zipWithIndex.map { case (o, q) =>
          RocketMQQueue(topic, group, q) -> o
        })
  }.toMap

  /** Waits until `label` has indexed everything in its commit log. */
  def awaitIndexed(label: String): Unit = command(label, "indexed")

  /** Waits until every running replica of `group` has copied its master's commit log to its end. */
  def awaitReplicatedLog(group: String): Unit = {
    val master =
      masterOf(group).getOrElse(throw new IllegalStateException(s"group $group has no master"))
    val end = command(master.label, "logEnd").toLong
    brokers.filter(b => b.group == group && b != master && b.isRunning).foreach { replica =>
      awaitCondition(s"$replica to copy $master's commit log", 60000)(command(replica.label,
        "logEnd").toLong >= end)
    }
  }

  override def close(): Unit = {
    clients.close()
    discard()
    controller.close()
    synchronized { if (namesrv != null) { namesrv.shutdown(); namesrv = null } }
    try Runtime.getRuntime.removeShutdownHook(exitHook)
    catch { case _: IllegalStateException => } // the JVM is exiting already
  }

  private def discard(): Unit = {
    brokers.foreach { b =>
      val jvm = b.jvm
      b.jvm = null
      if (jvm != null) jvm.kill()
    }
    if (!sys.env.get("ROCKETMQ_IT_KEEP_BROKER_STORE").contains("true")) {
      EmbeddedRocketMQ.deleteRecursively(storeDirectory.toFile)
    }
  }

  private def registered(b: Broker): Boolean =
    Option(namesrv.getRouteInfoManager.getAllClusterInfo.getBrokerAddrTable.get(b.group))
      .exists(_.getBrokerAddrs.containsValue(b.address))

  /**
   * Starts `b` in a new JVM; returns once it is registered and routes every topic of its group
   * again.
   */
  private def launch(b: Broker): Unit = {
    awaitCondition(s"ports of $b to be free", 60000) {
      Seq(b.port - 2, b.port, b.port + 1).forall(RocketMQBrokerProcess.bindable)
    }
    val jvm = new BrokerJvm(logDir, BrokerHeap, b.arguments, label = b.label)
    jvm.awaitReply(RocketMQBrokerProcessMain.Standby)
    jvm.send("start")
    jvm.awaitReply(RocketMQBrokerProcessMain.Ready)
    b.jvm = jvm
    // The first periodic registration comes seconds after start: ask for one until the name server
    // has it.
    var lastAttempt = 0L
    awaitCondition(s"$b to register with the name server", 120000) {
      if (System.nanoTime() - lastAttempt > 1000L * 1000 * 1000) {
        lastAttempt = System.nanoTime()
        jvm.command("register")
      }
      registered(b)
    }
  }
}

object RocketMQClusterProcess {

  @volatile private var started: Option[RocketMQClusterProcess] = None

  /**
   * The cluster every cluster suite of the test JVM shares, started on first use; stopped by
   * [[closeShared]] after the last of them ([[RocketMQClusterSuites]]), or else when the JVM exits.
   */
  lazy val shared: RocketMQClusterProcess = {
    val cluster = new RocketMQClusterProcess().start()
    started = Some(cluster)
    cluster
  }

  /** Stops the shared cluster if it was started: its broker JVMs killed, its store removed. */
  def closeShared(): Unit = started.foreach(_.close())

  val GroupA = "cluster-a"
  val GroupB = "cluster-b"
  val GroupC = "cluster-c"

  /** A broker JVM's heap and collector: five of them share the machine with Spark. */
  private val BrokerHeap = Seq("-Xmx384m", "-XX:+UseSerialGC")
}
