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

import java.io.{BufferedReader, InputStreamReader}
import java.lang.management.ManagementFactory
import java.nio.charset.StandardCharsets
import java.nio.file.Paths

import scala.jdk.CollectionConverters._

import org.apache.rocketmq.broker.BrokerController
import org.apache.rocketmq.common.{MixAll, MQVersion, TopicConfig}
import org.apache.rocketmq.common.constant.PermName
import org.apache.rocketmq.remoting.netty.{NettyClientConfig, NettyServerConfig}
import org.apache.rocketmq.store.{CommitLogDispatcher, DispatchRequest}
import org.apache.rocketmq.remoting.RPCHook
import org.apache.rocketmq.remoting.protocol.{RemotingCommand, RequestCode}

/**
 * The broker JVM of [[RocketMQBrokerProcess]]: one RocketMQ broker configured as the in-JVM
 * [[EmbeddedRocketMQ]] configures its broker, but on fixed ports and a fixed store directory, so
 * that a broker killed with SIGKILL comes back at the same address with the same messages.
 *
 * Arguments: `nameServer storeDir listenPort haListenPort brokerName clusterName
 * commitLogFileSize`, then any number of `key=value` broker or store settings (RocketMQ's own
 * names, as in a broker.conf: `brokerId=1`, `brokerRole=SLAVE`, `slaveReadEnable=true`,
 * `enableControllerMode=true` ...) for the brokers of a cluster. The JVM starts as a stand-by: it
 * loads the broker's classes, prints `STANDBY` and touches neither the store nor the ports until
 * told to `start` (so a restart does not wait for a JVM to boot). Then it answers one command per
 * stdin line with one line (every protocol line starts with [[Prefix]]):
 * - `start`: loads the store (recovering it after a crash) and starts the broker; answers `READY`;
 * - `register`: registers with the name server now (the first periodic registration comes 10 s
 *   late);
 *   - `createTopic <topic> <queues>`: creates or resizes a read-write topic and registers it;
 *   - `indexed`: returns once every message stored in the commit log is indexed into its queue;
 * - `pauseIndexing` / `resumeIndexing`: holds the indexing of newly stored messages back, and lets
 *   it go on (sends are still stored and acknowledged: the lag a busy broker shows, made to order);
 * - `resumeIndexingAfterStatusRequests <n>`: lets indexing go on once the broker has answered `n`
 *   more status requests (what planning polls while it waits for the index); answers `OK`; then
 *   `statusRequests` answers `OK <status requests since>`;
 *   - `set <key> <value>`: changes a broker setting at run time (as `mqadmin updateBrokerConfig`);
 * - `knowsTopic <topic>`: answers `OK true` or `OK false` (a replica learns its master's topics
 *   late);
 * - `offsets <topic>`: answers `OK <max offset of queue 0>,<of queue 1>,...` as this broker's store
 *   has them;
 * - `logEnd`: answers `OK <offset>`, where this broker's commit log ends (a replica's grows as it
 *   copies);
 * - `role`: answers `OK <brokerRole> <brokerId>` (in controller mode the controller assigns both);
 * - `producerGroups`: answers `OK <group>,<group>,...`, the producer groups the broker could check
 *   back with now (an active connection of the group sent it a heartbeat).
 *   Other answers are `OK` or `ERROR <message>`. When stdin closes (the parent is gone) the process
 *   halts at once: it never outlives its test JVM.
 */
object RocketMQBrokerProcessMain {

  /** Starts every line of the protocol, so that anything else a library prints is told apart. */
  val Prefix = "broker-process> "
  val Standby = "STANDBY"
  val Ready = "READY"

  def main(args: Array[String]): Unit = {
    // As BrokerStartup does: otherwise the name server reads registrations in the pre-3.0.11
    // format.
    System.setProperty(RemotingCommand.REMOTING_VERSION_KEY,
      Integer.toString(MQVersion.CURRENT_VERSION))
    Seq(
      "org.apache.rocketmq.broker.BrokerController",
      "org.apache.rocketmq.store.DefaultMessageStore",
      "org.apache.rocketmq.store.CommitLog",
      "org.apache.rocketmq.remoting.netty.NettyRemotingServer",
      "org.apache.rocketmq.remoting.netty.NettyRemotingClient"
    ).foreach(name => Class.forName(name, true, getClass.getClassLoader))
    reply(Standby)

    var broker: BrokerController = null
    val in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))
    var line = in.readLine()
    while (line != null) {
      val answer =
        try {
          line.trim.split("\\s+").toList match {
            case "start" :: Nil if broker == null =>
              broker = startBroker(args)
              Ready
            case _ if broker == null => s"ERROR the broker is not started: $line"
            case "register" :: Nil =>
              broker.registerBrokerAll(true, false, true)
              "OK"
            case "createTopic" :: topic :: queues :: Nil =>
              val q = queues.toInt
              val config = new TopicConfig(topic, q, q, PermName.PERM_READ | PermName.PERM_WRITE)
              broker.getTopicConfigManager.updateTopicConfig(config)
              broker.registerIncrementBrokerData(config,
                broker.getTopicConfigManager.getDataVersion)
              "OK"
            case "set" :: key :: value :: Nil =>
              val update = new java.util.Properties()
              update.setProperty(key, value)
              broker.getConfiguration.update(update)
              // A new check interval applies from now, not after the round the check service waits
              // for.
              broker.getTransactionalMessageCheckService.wakeup()
              "OK"
            case "knowsTopic" :: topic :: Nil =>
              s"OK ${broker.getTopicConfigManager.selectTopicConfig(topic) != null}"
            case "offsets" :: topic :: Nil =>
              val queues =
                Option(broker.getTopicConfigManager.selectTopicConfig(topic)).map(
                  _.getReadQueueNums).getOrElse(0)
              "OK " + (0 until queues).map(q =>
                broker.getMessageStore.getMaxOffsetInQueue(topic, q)).mkString(",")
            case "logEnd" :: Nil => s"OK ${broker.getMessageStore.getMaxPhyOffset}"
            case "role" :: Nil =>
              s"OK ${broker.getMessageStoreConfig.getBrokerRole} " +
                s"${broker.getBrokerConfig.getBrokerId}"
            case "producerGroups" :: Nil =>
              val groups = broker.getProducerManager.getGroupChannelTable.keySet.asScala
              // As a check-back picks its producer.
              val online =
                groups.filter(g => broker.getProducerManager.getAvailableChannel(g) != null)
              "OK " + online.toSeq.sorted.mkString(",")
            case "pauseIndexing" :: Nil =>
              IndexingGate.close(broker)
              "OK"
            case "resumeIndexing" :: Nil =>
              IndexingGate.open()
              "OK"
            case "resumeIndexingAfterStatusRequests" :: n :: Nil =>
              IndexingGate.openAfterStatusRequests(broker, n.toInt)
              "OK"
            case "statusRequests" :: Nil => s"OK ${IndexingGate.statusRequests}"
            case "indexed" :: Nil =>
              val store = broker.getMessageStore
              EmbeddedRocketMQ.awaitCondition("the broker to index every stored message", 60000) {
                store.dispatchBehindBytes() == 0
              }
              "OK"
            case _ => s"ERROR unknown command: $line"
          }
        } catch {
          case e: Throwable => s"ERROR ${e.toString.replace('\n', ' ')}"
        }
      reply(answer)
      line = in.readLine()
    }
    Runtime.getRuntime.halt(0) // the parent is gone: no graceful (20 s) shutdown, as after a crash
  }

  private def startBroker(args: Array[String]): BrokerController = {
    val Array(nameServer, storeDir, listenPort, haListenPort, brokerName, clusterName,
      commitLogFileSize) =
      args.take(7)
    val store = Paths.get(storeDir)
    val brokerConfig = TestBrokerConfig.broker(nameServer, brokerName, clusterName)
    val netty = new NettyServerConfig()
    netty.setListenPort(listenPort.toInt) // RocketMQ also binds listenPort - 2 (its "fast" server)
    val storeConfig =
      TestBrokerConfig.store(store, commitLogFileSize.toInt, 300000, haListenPort.toInt)
    val settings = new java.util.Properties()
    args.drop(7).foreach { setting =>
      val Array(key, value) = setting.split("=", 2)
      settings.setProperty(key, value)
    }
    MixAll.properties2Object(settings, brokerConfig)
    MixAll.properties2Object(settings, storeConfig)
    MixAll.properties2Object(settings, netty)

    // initialize() loads the store; after a SIGKILL the `abort` file is still there and it recovers
    // the commit log abnormally (re-checking the last files message by message).
    val broker = new BrokerController(brokerConfig, netty, new NettyClientConfig(), storeConfig)
    val initStart = System.nanoTime()
    require(broker.initialize(), "the broker did not initialize")
    BrokerBusyLoops.pace(broker)
    val startStart = System.nanoTime()
    broker.start()
    broker.getBrokerOuterAPI.updateNameServerAddressList(nameServer)
    System.err.println(
      s"broker on port $listenPort: JVM up ${ManagementFactory.getRuntimeMXBean.getUptime} ms, " +
        s"initialize (store load and recovery) ${(startStart - initStart) / 1000000} ms, " +
        s"start ${(System.nanoTime() - startStart) / 1000000} ms")
    broker
  }

  private def reply(line: String): Unit = synchronized {
    System.out.println(Prefix + line)
    System.out.flush()
  }
}

/**
 * Holds a broker's indexing back on command: a dispatcher placed first in the store's list, which
 * blocks the store's indexing thread while the gate is closed. Messages are still stored and
 * acknowledged; their consume-queue entries (what offsets and pulls see) come once the gate opens.
 */
private object IndexingGate {
  private val lock = new Object
  @volatile private var closed = false
  @volatile private var installed = false

  def close(broker: BrokerController): Unit = lock.synchronized {
    if (!installed) {
      broker.getMessageStore.getDispatcherList.addFirst(new CommitLogDispatcher {
        override def dispatch(request: DispatchRequest): Unit = lock.synchronized {
          while (closed) lock.wait(100)
        }
      })
      installed = true
    }
    closed = true
  }

  def open(): Unit = lock.synchronized {
    closed = false
    lock.notifyAll()
  }

  private val seen = new java.util.concurrent.atomic.AtomicInteger()
  @volatile private var openAt = -1
  @volatile private var counting = false

  /** Status requests answered since the last [[openAfterStatusRequests]]. */
  def statusRequests: Int = seen.get

  /** Opens the gate once the broker has answered `n` more status requests. */
  def openAfterStatusRequests(broker: BrokerController, n: Int): Unit = lock.synchronized {
    if (!counting) {
      broker.getRemotingServer.registerRPCHook(new RPCHook {
        override def doBeforeRequest(address: String, request: RemotingCommand): Unit = ()
        override def doAfterResponse(address: String, request: RemotingCommand,
            response: RemotingCommand): Unit =
          if (request.getCode == RequestCode.GET_BROKER_RUNTIME_INFO &&
            seen.incrementAndGet() == openAt) open()
      })
      counting = true
    }
    seen.set(0)
    openAt = n
  }
}
