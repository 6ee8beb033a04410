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

import java.io.File
import java.nio.file.{Files, Path}
import java.util.UUID

import scala.jdk.CollectionConverters._

import org.apache.rocketmq.broker.BrokerController
import org.apache.rocketmq.client.producer.{SendResult, SendStatus}
import org.apache.rocketmq.common.{MixAll, TopicConfig}
import org.apache.rocketmq.common.action.Action
import org.apache.rocketmq.common.constant.PermName
import org.apache.rocketmq.common.message.{MessageExt, MessageQueue}
import org.apache.rocketmq.namesrv.NamesrvController
import org.apache.rocketmq.remoting.netty.{NettyClientConfig, NettyServerConfig}
import org.apache.rocketmq.store.{ConsumeQueue, MessageStore}
import org.apache.rocketmq.store.plugin.AbstractPluginMessageStore

import org.apache.spark.sql.rocketmq.common.RocketMQQueue

/** A message to send from tests, with the fields the connector maps to columns. */
final case class TestMessage(
    body: String,
    tags: String = null,
    keys: String = null,
    properties: Map[String, String] = Map.empty)

/**
 * A real RocketMQ name server and broker running in this JVM, for tests, the demo and benchmarks:
 * every port ephemeral, the store in a fresh temporary directory (removed by `stop()`), small
 * commitlog files, SQL92 property filtering on, RocketMQ's default pull limits, topics created only
 * explicitly. Its own logs go to a file under the temporary directory, never to the console or the
 * home directory (see rmq.logback-test.xml). A broker whose `advertisedHost` is another loopback
 * address listens on 127.0.0.1 and tells clients that address and its port: a fault proxy there
 * ([[Toxiproxy]]) then stands between them and the broker. `brokerProperties`: settings of the
 * broker and its store that tests of a feature RocketMQ leaves off need (as in `broker.conf`), a
 * store plug-in's among them.
 */
final class EmbeddedRocketMQ(
    val commitLogFileSize: Int = 16 * 1024 * 1024,
    val consumeQueueFileEntries: Int = 300000,
    val secured: Boolean = false,
    val advertisedHost: String = "127.0.0.1",
    val brokerProperties: Map[String, String] = Map.empty) extends EmbeddedRocketMQSends {
  import EmbeddedRocketMQ._

  val brokerName = "broker-a"
  val clusterName = "spark-it"

  private var storeDir: Path = _
  private var namesrv: NamesrvController = _
  private var broker: BrokerController = _
  private var clients: RocketMQPlainClients = _
  private var namesrvPort: Int = -1

  def nameServer: String = s"127.0.0.1:$namesrvPort"

  def brokerController: BrokerController = broker

  def storeDirectory: Path = storeDir

  /** The port the broker listens on (127.0.0.1) and tells clients (at `advertisedHost`). */
  def brokerPort: Int = broker.getBrokerAddr.split(":").last.toInt

  def start(): this.type = {
    storeDir = Files.createTempDirectory("rocketmq-spark-store-")
    namesrv = TestBrokerConfig.startNameServer(storeDir)
    namesrvPort = namesrv.getNettyServerConfig.getListenPort

    startBroker()
    this
  }

  /**
   * Starts the broker on the store directory (again, after [[stopBroker]]: its messages are kept).
   */
  def startBroker(): Unit = {
    val brokerConfig = TestBrokerConfig.broker(nameServer, brokerName, clusterName)
    brokerConfig.setBrokerIP1(advertisedHost)
    val brokerNetty = new NettyServerConfig()
    brokerNetty.setListenPort(0)
    brokerNetty.setBindAddress("127.0.0.1")
    val store =
      TestBrokerConfig.store(storeDir, commitLogFileSize, consumeQueueFileEntries, haListenPort = 0)
    // Files are kept for RocketMQ's default reserved time (72 h): the broker also skips
    // transactional half messages older than that. expireOldFiles deletes files regardless of it.
    // And files expire by the clock only during the hours deleteWhen lists (default "04"): none
    // here.
    store.setDeleteWhen("-1") // an hour that never comes
    store.setCleanResourceInterval(500)
    val properties = new java.util.Properties()
    brokerProperties.foreach { case (k, v) => properties.setProperty(k, v) }
    MixAll.properties2Object(properties, brokerConfig)
    MixAll.properties2Object(properties, store)
    broker =
      if (secured) {
        new BrokerController(brokerConfig, brokerNetty, new NettyClientConfig(), store,
          TestSecurity.authConfig(storeDir, clusterName))
      } else new BrokerController(brokerConfig, brokerNetty, new NettyClientConfig(), store)
    // A store plug-in (tiered storage) reads its settings from the broker's configuration.
    if (brokerProperties.nonEmpty) broker.getConfiguration.registerConfig(properties)
    require(broker.initialize(), "the broker did not initialize")
    BrokerBusyLoops.pace(broker)
    broker.start()
    // start() leaves the first registration to a task 10 s later (the broker's client does not
    // know the name server yet), and an early attempt is sometimes lost: register until it shows.
    broker.getBrokerOuterAPI.updateNameServerAddressList(nameServer)
    var lastAttempt = 0L
    awaitCondition("the broker to register with the name server", 30000) {
      if (System.nanoTime() - lastAttempt > 500L * 1000 * 1000) {
        lastAttempt = System.nanoTime()
        broker.registerBrokerAll(true, false, true)
      }
      !namesrv.getRouteInfoManager.getAllClusterInfo.getBrokerAddrTable.isEmpty
    }
    // A broker fails a status request (getBrokerRuntimeInfo, which planning sends to learn how far
    // the broker has indexed) until its store has taken its first statistics sample, about a second
    // after start, and logs the request whole, a security token included. A broker in service took
    // it long ago; so has this one before a test uses it.
    awaitCondition("the broker's first statistics sample", 30000) {
      scala.util.Try(broker.getMessageStore.getRuntimeInfo).isSuccess
    }
  }

  /**
   * Stops the broker alone (RocketMQ's shutdown takes some 20 s); the name server and the store
   * stay, and [[startBroker]] brings it back on a new port with its messages.
   */
  def stopBroker(): Unit = synchronized {
    // The harness's own clients would keep the old broker address: they are rebuilt on next use.
    if (clients != null) { clients.close(); clients = null }
    RocketMQBrokerShutdown.shutdown(broker)
    broker = null
    awaitCondition("the name server to forget the broker", 60000) {
      namesrv.getRouteInfoManager.getAllClusterInfo.getBrokerAddrTable.isEmpty
    }
  }

  /**
   * Creates `topic` (or changes its queue count) with `queues` read and write queues; waits for the
   * route. `messageType`: the topic's `message.type` attribute (NORMAL, FIFO, DELAY, TRANSACTION),
   * which a proxy checks sends against, as managed services require. `compacted`: the topic keeps
   * each key's latest message (`cleanup.policy=COMPACTION`, set at creation only).
   */
  def createTopic(topic: String, queues: Int = 4, messageType: Option[String] = None,
      compacted: Boolean = false): Unit = {
    val config = new TopicConfig(topic, queues, queues, PermName.PERM_READ | PermName.PERM_WRITE)
    val attributes = messageType.map("+message.type" -> _) ++
      (if (compacted) Some("+cleanup.policy" -> "COMPACTION") else None)
    if (attributes.nonEmpty) config.setAttributes(attributes.toMap.asJava)
    broker.getTopicConfigManager.updateTopicConfig(config)
    broker.registerIncrementBrokerData(config, broker.getTopicConfigManager.getDataVersion)
    awaitCondition(s"the route of topic $topic", 30000) {
      val route = namesrv.getRouteInfoManager.pickupTopicRouteData(topic)
      route != null && route.getQueueDatas.asScala.exists(_.getReadQueueNums == queues)
    }
  }

  /**
   * Deletes `topic`: its config, its stored messages and its route (create it again to reuse the
   * name).
   */
  def deleteTopic(topic: String): Unit = {
    broker.getTopicConfigManager.deleteTopicConfig(topic)
    broker.getMessageStore.deleteTopics(java.util.Collections.singleton(topic))
    namesrv.getRouteInfoManager.deleteTopic(topic)
    awaitCondition(s"topic $topic to be gone", 30000) {
      namesrv.getRouteInfoManager.pickupTopicRouteData(topic) == null &&
      broker.getMessageStore.getMaxOffsetInQueue(topic, 0) == 0
    }
  }

  /**
   * Makes the name server forget `topic`'s route while the broker keeps the topic and its messages,
   * as a name server does for a moment after it restarts or drops a broker's registration.
   * `createTopic` registers the route again.
   */
  def dropRoute(topic: String): Unit = {
    namesrv.getRouteInfoManager.deleteTopic(topic)
    awaitCondition(s"the route of $topic to be gone", 30000) {
      namesrv.getRouteInfoManager.pickupTopicRouteData(topic) == null
    }
  }

  /** On a [[secured]] broker: creates `user`, allowed `actions` on every topic and group. */
  def createUser(user: TestSecurity.User, actions: Seq[Action]): Unit = {
    require(secured, "users exist on a secured broker only")
    TestSecurity.createUser(broker, user, actions)
  }

  /** A fresh topic name for one test. */
  def newTopic(prefix: String = "t"): String = s"$prefix-${UUID.randomUUID().toString.take(8)}"

  /**
   * Sends `body` to queue 0 of `topic` as a producer whose clock reads `bornMs` would (ahead of the
   * broker's, or behind); waits until it is readable.
   */
  def sendBornAt(topic: String, body: String, bornMs: Long): SendResult = {
    val result = plainClients.sendBornAt(broker.getBrokerAddr, brokerName, topic, body, bornMs)
    require(result.getSendStatus == SendStatus.SEND_OK, s"send failed: $result")
    awaitCondition(s"dispatch of the message born at $bornMs", 30000) {
      broker.getMessageStore.getMaxOffsetInQueue(topic, 0) > result.getQueueOffset
    }
    result
  }

  /**
   * Makes data loss real: deletes the expired commitlog files (all but the newest) and waits until
   * the deletion is over. The broker's own clean-up does this on a schedule (first a minute after
   * it starts, then every 10 s, deleting a batch of files a round and moving queues' min offsets a
   * round later), which left a test waiting for over a minute: here its two steps are run on each
   * look until done. Returns queue `queueId`'s new min offset, which stays put from then on (as
   * long as nothing more is written).
   */
  def expireOldFiles(topic: String, queueId: Int = 0): Long = {
    val store = localStore
    val config = broker.getMessageStoreConfig
    awaitCondition(s"expired files of $topic/$queueId to be deleted", 60000) {
      // Every commitlog file but the newest is expired (a reserved time of 0 hours): deleted now.
      store.getCommitLog.deleteExpiredFile(0L, 0, config.getDestroyMapedFileIntervalForcibly.toLong,
        true, 100)
      // And the queue's index files pointing into them.
      store.getConsumeQueue(topic, queueId) match {
        case queue: ConsumeQueue => queue.deleteExpiredFile(store.getMinPhyOffset)
        case other => other.correctMinOffset(store.getMinPhyOffset)
      }
      val min = store.getMinOffsetInQueue(topic, queueId)
      store.getCommitLog.getMappedFileQueue.getMappedFiles.size == 1 && min > 0 &&
      store.getCommitLogOffsetInQueue(topic, queueId, min) >= store.getMinPhyOffset
    }
    store.getMinOffsetInQueue(topic, queueId)
  }

  /** The broker's own store: behind a store plug-in (tiered storage), the one it wraps. */
  def localStore: MessageStore = broker.getMessageStore match {
    case plugIn: AbstractPluginMessageStore => plugIn.getNext
    case store => store
  }

  /**
   * Commits `offset` as consumer group `group`'s progress in `queue`, as a RocketMQ consumer does.
   */
  def commitOffset(group: String, queue: RocketMQQueue, offset: Long): Unit =
    broker.getConsumerOffsetManager.commitOffset("test", group, queue.topic, queue.queueId, offset)

  /** The offset consumer group `group` has committed for a queue on the broker, -1 if none. */
  def committedOffset(group: String, queue: RocketMQQueue): Long =
    broker.getConsumerOffsetManager.queryOffset(group, queue.topic, queue.queueId)

  /**
   * Changes a broker setting at run time, as `mqadmin updateBrokerConfig` does. The transaction
   * check service is woken, so that a new `transactionCheckInterval` applies from now, not after
   * the round it is waiting for.
   */
  def setBrokerSetting(key: String, value: String): Unit = {
    val update = new java.util.Properties()
    update.setProperty(key, value)
    broker.getConfiguration.update(update)
    broker.getTransactionalMessageCheckService.wakeup()
  }

  /**
   * Waits until the broker has indexed every message it stored into its queues. It acknowledges a
   * send once the message is in its commit log and indexes it a moment later, so a test that checks
   * what a write left in the queues waits for this first.
   */
  def awaitIndexed(): Unit =
    awaitCondition("the broker to index every stored message", 30000)(
      broker.getMessageStore.dispatchBehindBytes() == 0)

  /** The next offset to be written, per queue of `topic`, once every stored message is indexed. */
  def latestOffsets(topic: String): Map[RocketMQQueue, Long] = {
    awaitIndexed()
    val config = broker.getTopicConfigManager.selectTopicConfig(topic)
    (0 until config.getReadQueueNums).map { id =>
      RocketMQQueue(topic, brokerName, id) -> broker.getMessageStore.getMaxOffsetInQueue(topic, id)
    }.toMap
  }

  /**
   * Every stored message of `topic`, read with the plain RocketMQ client from min to max offset.
   */
  def readAll(topic: String): Seq[MessageExt] = {
    latestOffsets(topic).toSeq.sortBy(_._1).flatMap { case (queue, max) =>
      plainClients.readRange(new MessageQueue(topic, brokerName, queue.queueId),
        broker.getMessageStore.getMinOffsetInQueue(topic, queue.queueId),
        max)
    }
  }

  /**
   * The harness's own producer and consumer, started on first use (again after a broker restart).
   */
  private[rocketmq] def plainClients: RocketMQPlainClients = synchronized {
    if (clients == null) {
      clients =
        new RocketMQPlainClients(nameServer, if (secured) TestSecurity.Admin.rpcHook else null)
    }
    clients
  }

  /** For a JVM about to exit: removes the temporary store without RocketMQ's slow shutdown. */
  def discard(): Unit = synchronized {
    if (storeDir != null) { deleteRecursively(storeDir.toFile); storeDir = null }
  }

  /**
   * Stops gracefully (the broker's own shutdown takes RocketMQ some 20 s) and removes the store.
   * A JVM that is about to exit can [[discard]] instead.
   */
  def stop(): Unit = {
    // Taken under the lock, shut down outside it: a JVM exiting meanwhile discards the store
    // without waiting.
    val (c, b, n) = synchronized {
      val taken = (clients, broker, namesrv)
      clients = null; broker = null; namesrv = null
      taken
    }
    // Each RocketMQ client and server ends its event thread's 3 s poll before it returns: the
    // harness's clients close while the broker stops, and the name server goes last.
    val closing = new Thread(() => if (c != null) c.close(), "embedded-rocketmq-clients-close")
    closing.start()
    try if (b != null) RocketMQBrokerShutdown.shutdown(b)
    finally closing.join()
    if (n != null) n.shutdown()
    discard()
  }
}

object EmbeddedRocketMQ {

  /**
   * The broker the integration suites of one test JVM share (each test makes its own topics). It
   * starts on first use; at JVM exit its store is deleted.
   */
  lazy val shared: EmbeddedRocketMQ = {
    val mq = new EmbeddedRocketMQ().start()
    Runtime.getRuntime.addShutdownHook(new Thread(() => mq.discard()))
    sharedOne = mq
    mq
  }

  @volatile private var sharedOne: EmbeddedRocketMQ = _

  /** Whether `mq` is [[shared]] (asking does not start it). */
  def isShared(mq: EmbeddedRocketMQ): Boolean = mq eq sharedOne

  /**
   * Stops `mq` on a thread of its own (RocketMQ's graceful shutdown takes some 20 s, spent
   * waiting): a suite's own broker, whose idle services would otherwise take CPU from every later
   * suite until the JVM exits.
   */
  def stopInBackground(mq: EmbeddedRocketMQ): Unit = {
    val stopping = new Thread(() => mq.stop(), "stop-embedded-rocketmq")
    stopping.setDaemon(true)
    stopping.start()
  }

  /** Polls `condition` until it holds, failing after `timeoutMs` with `what` in the message. */
  def awaitCondition(what: String, timeoutMs: Long)(condition: => Boolean): Unit = {
    val deadline = System.nanoTime() + timeoutMs * 1000000L
    while (!condition) {
      if (System.nanoTime() > deadline)
        throw new AssertionError(s"timed out after $timeoutMs ms waiting for $what")
      java.util.concurrent.locks.LockSupport.parkNanos(20L * 1000 * 1000) // poll interval
    }
  }

  private[rocketmq] def deleteRecursively(f: File): Unit = {
    Option(f.listFiles()).foreach(_.foreach(deleteRecursively))
    f.delete()
  }
}
