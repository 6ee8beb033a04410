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

import java.nio.file.Path

import org.apache.rocketmq.common.{BrokerConfig, MQVersion}
import org.apache.rocketmq.common.namesrv.NamesrvConfig
import org.apache.rocketmq.namesrv.NamesrvController
import org.apache.rocketmq.remoting.netty.NettyServerConfig
import org.apache.rocketmq.remoting.protocol.RemotingCommand
import org.apache.rocketmq.store.config.MessageStoreConfig

/**
 * The one configuration of every test broker, in-JVM ([[EmbeddedRocketMQ]]) or in its own JVM
 * ([[RocketMQBrokerProcessMain]]): a single master on loopback, topics created explicitly, and
 * RocketMQ's default pull limits (32 messages / 256 KiB per pull from memory, 8 / 64 KiB from
 * disk), as production brokers keep them, so every read suite sees what those brokers return.
 */
private[rocketmq] object TestBrokerConfig {

  /**
   * Starts a name server in this JVM on an ephemeral port (`getNettyServerConfig.getListenPort`
   * once started), its files under `store`. It first sets the remoting version, as RocketMQ's own
   * startup classes do: without it requests claim protocol version 0, and the name server reads a
   * broker's registration in the pre-3.0.11 format, dropping every topic.
   */
  def startNameServer(store: Path): NamesrvController = {
    System.setProperty(RemotingCommand.REMOTING_VERSION_KEY,
      Integer.toString(MQVersion.CURRENT_VERSION))
    val config = new NamesrvConfig()
    config.setKvConfigPath(store.resolve("namesrv/kvConfig.json").toString)
    config.setConfigStorePath(store.resolve("namesrv/namesrv.properties").toString)
    val netty = new NettyServerConfig()
    netty.setListenPort(0)
    val namesrv = new NamesrvController(config, netty)
    require(namesrv.initialize(), "the name server did not initialize")
    namesrv.start()
    namesrv
  }

  def broker(nameServer: String, brokerName: String, clusterName: String): BrokerConfig = {
    val config = new BrokerConfig()
    config.setBrokerName(brokerName)
    config.setBrokerClusterName(clusterName)
    config.setBrokerId(0L)
    config.setBrokerIP1("127.0.0.1")
    config.setNamesrvAddr(nameServer)
    config.setAutoCreateTopicEnable(false)
    config.setAutoCreateSubscriptionGroup(true)
    config.setEnablePropertyFilter(true)
    config.setWaitTimeMillsInSendQueue(3000)
    config
  }

  /** The store under `root/broker`; `haListenPort` 0 picks an ephemeral port. */
  def store(root: Path, commitLogFileSize: Int, consumeQueueFileEntries: Int, haListenPort: Int)
      : MessageStoreConfig = {
    val store = new MessageStoreConfig()
    store.setStorePathRootDir(root.resolve("broker").toString)
    store.setStorePathCommitLog(root.resolve("broker/commitlog").toString)
    store.setMappedFileSizeCommitLog(commitLogFileSize)
    store.setMappedFileSizeConsumeQueue(consumeQueueFileEntries * 20) // 20 bytes per entry
    store.setMaxMessageSize(math.min(4 * 1024 * 1024, commitLogFileSize / 2))
    store.setHaListenPort(haListenPort)
    store.setMaxIndexNum(10000)
    store.setMaxHashSlotNum(4000)
    store.setDiskMaxUsedSpaceRatio(98)
    store.setOsPageCacheBusyTimeOutMills(5000)
    store.setEnableRocksDBLog(false) // RocksDB would otherwise log into ~/logs/rocketmqlogs
    store.setDisappearTimeAfterStart(0) // register with the name server at once, not seconds later
    // Compacted topics compacted within seconds, in files of about a hundred messages, with a small
    // key map (RocketMQ: every 15 minutes, 100 MB files, a 100 MB map).
    store.setCompactionScheduleInternal(2000)
    store.setCompactionCqMappedFileSize(4600)
    store.setCompactionMappedFileSize(23000)
    store.setMaxOffsetMapSize(1 << 20)
    store
  }
}
