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

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper

import org.apache.spark.sql.rocketmq.options.RocketMQOffsetsJson

/**
 * `dev/rocketmq-harness --cluster`: the cluster of [[RocketMQClusterProcess]] (a name server with
 * RocketMQ's controller, five broker JVMs in three groups) as a process, for scripts such as
 * `dev/soak --cluster`. It prints `NAMESRV host:port` once every group has a master, then answers
 * one command per stdin line:
 *   - `createTopic <topic> <queues>`: the topic on every group, with `queues` queues each;
 * - `send <topic> <count> <bodyPrefix>`: bodies `<bodyPrefix>0` ... in batches, over the live
 *   groups;
 * - `latestOffsets <topic>` (offsets JSON, by group), `bodies <topic>` (JSON array of every body);
 * - `kill <broker>` (SIGKILL), `restart <broker>`, `masterOf <group>` (a broker's label, or
 *   `none`), `brokers` (`label=group` pairs), `storeDir`, `stop`. Broker labels: `a-master`,
 *   `a-replica`, `b-master`, `c-1`, `c-2`.
 */
private[rocketmq] object RocketMQClusterHarness {

  def run(): Nothing = {
    val started = System.nanoTime()
    val cluster = new RocketMQClusterProcess().start()
    System.err.println(
      f"RocketMQ cluster started in ${(System.nanoTime() - started) / 1e9}%.1f s: " +
        cluster.brokers.mkString(", "))
    println(s"NAMESRV ${cluster.nameServer}")
    System.out.flush()
    val json = new ObjectMapper()
    EmbeddedRocketMQHarness.serveCommands {
      case "createTopic" :: topic :: queues :: Nil => cluster.createTopic(topic, queues.toInt); "OK"
      case "send" :: topic :: count :: prefix :: Nil =>
        cluster.produce(topic, count.toInt, i => s"$prefix$i")
        "OK"
      case "latestOffsets" :: topic :: Nil => "OK " +
          RocketMQOffsetsJson.format(cluster.latestOffsets(topic))
      case "bodies" :: topic :: Nil => "OK " +
          json.writeValueAsString(cluster.readBodies(topic).asJava)
      case "kill" :: label :: Nil => cluster.kill(label); "OK"
      case "restart" :: label :: Nil => cluster.restart(label); "OK"
      case "masterOf" :: group :: Nil => "OK " + cluster.masterOf(group).fold("none")(_.label)
      case "brokers" :: Nil => "OK " +
          cluster.brokers.map(b => s"${b.label}=${b.group}").mkString(" ")
      case "storeDir" :: Nil => s"OK ${cluster.storeDirectory}"
    }
  }
}
