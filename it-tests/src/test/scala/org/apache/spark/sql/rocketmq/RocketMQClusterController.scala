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

import java.net.ServerSocket
import java.nio.file.{Files, Path}

import org.apache.rocketmq.common.ControllerConfig
import org.apache.rocketmq.controller.ControllerManager
import org.apache.rocketmq.remoting.netty.{NettyClientConfig, NettyServerConfig}

import org.apache.spark.sql.rocketmq.EmbeddedRocketMQ.awaitCondition

/**
 * RocketMQ 5's controller (automatic master election for brokers in controller mode), in this JVM:
 * one controller node with its own DLedger log under `store`, as RocketMQ's own controller tests
 * run it. Brokers reach it at [[address]] (their `controllerAddr`). Started by [[start]], which
 * returns once it leads.
 */
final class RocketMQClusterController(store: Path) extends AutoCloseable {
  private var manager: ControllerManager = _
  private val netty = new NettyServerConfig()

  def address: String = {
    require(manager != null, "the controller is not started")
    s"127.0.0.1:${netty.getListenPort}"
  }

  def start(): Unit = synchronized {
    require(manager == null, "already started")
    Files.createDirectories(store)
    val config = new ControllerConfig()
    config.setControllerType(ControllerConfig.DLEDGER_CONTROLLER)
    config.setControllerDLegerGroup("spark-it-controller")
    config.setControllerDLegerSelfId("n0")
    config.setControllerDLegerPeers(s"n0-127.0.0.1:${freePort()}")
    config.setControllerStorePath(store.resolve("dledger").toString)
    config.setConfigStorePath(store.resolve("controller.properties").toString)
    config.setRocketmqHome(store.toString)
    netty.setListenPort(freePort())
    manager = new ControllerManager(config, netty, new NettyClientConfig())
    require(manager.initialize(), "the controller did not initialize")
    manager.start()
    awaitCondition("the controller to lead its DLedger group", 60000)(
      manager.getController.isLeaderState)
  }

  override def close(): Unit = synchronized {
    if (manager != null) {
      manager.shutdown()
      manager = null
    }
  }

  private def freePort(): Int = {
    val socket = new ServerSocket(0)
    try socket.getLocalPort
    finally socket.close()
  }
}

object RocketMQClusterController {

  /**
   * Settings of a broker in controller mode beyond `enableControllerMode` and `controllerAddr`:
   * none, so far (RocketMQ's defaults: the controller assigns the broker id, and elects a master
   * among the replicas in sync).
   */
  val BrokerSettings: Seq[String] = Nil
}
