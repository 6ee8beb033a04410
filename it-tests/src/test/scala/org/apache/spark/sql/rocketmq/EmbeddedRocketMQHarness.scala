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
import java.nio.charset.StandardCharsets
import java.nio.file.Files

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper

import org.apache.spark.sql.rocketmq.options.RocketMQOffsetsJson

/**
 * The embedded RocketMQ ([[EmbeddedRocketMQ]]) run as a process that answers commands on stdin, for
 * dev/rocketmq-harness and the Python tests.
 */
object EmbeddedRocketMQHarness {

  /**
   * Runs the harness as a process: prints `NAMESRV host:port` once ready, then answers one command
   * per stdin line with one line (`OK …` or `ERROR …`); stops when stdin closes or on SIGTERM.
   *
   * Commands: `createTopic <topic> <queues> [messageType | COMPACTED]`, `send <topic> <count>
   * <bodyPrefix> [tag]`, `latestOffsets <topic>` (JSON), `bodies <topic>` (JSON array of UTF-8
   * bodies), `storeDir`, `awaitIndexed`, `stop`, `set <key> <value>` (a broker setting changed at
   * run time, such as `transactionCheckInterval`), `startProxy` (a RocketMQ 5 proxy in front of the
   * broker, [[RocketMQProxyProcess]]: its endpoint), `stopProxy`; with `--acl`, `createUser
   * <accessKey> <secretKey> <none|read|readwrite>` and `createUserWithRights <accessKey>
   * <secretKey> <Topic:t=Sub+Get,Group:g=Sub>` (exactly those rights).
   *
   * Arguments: `--acl` turns authentication and authorization on (see [[TestSecurity]]); `--tls`
   * makes the name server and the broker accept TLS connections only, with a certificate made at
   * start; `--cluster` runs a cluster of broker JVMs instead ([[RocketMQClusterHarness]], with
   * commands of its own).
   */
  def main(args: Array[String]): Unit = {
    val started = System.nanoTime()
    if (args.sameElements(Seq("--cluster"))) RocketMQClusterHarness.run()
    val unknown = args.filterNot(Set("--acl", "--tls"))
    require(unknown.isEmpty,
      s"unknown arguments: ${unknown.mkString(" ")} (known: --acl, --tls, --cluster)")
    if (args.contains("--tls")) {
      // Before any RocketMQ class loads: RocketMQ reads its TLS settings once, from system
      // properties.
      val dir = Files.createTempDirectory("rocketmq-spark-tls-")
      TestSecurity.generateCertificate(dir)
      TestSecurity.tlsServerProperties(dir).foreach { case (k, v) => System.setProperty(k, v) }
    }
    val mq = new EmbeddedRocketMQ(secured = args.contains("--acl")).start()
    val startSeconds = (System.nanoTime() - started) / 1e9
    // The process only ever holds throwaway data: stopping removes the store and exits at once.
    Runtime.getRuntime.addShutdownHook(new Thread(() => mq.discard()))
    val rt = Runtime.getRuntime
    System.err.println(f"embedded RocketMQ started in $startSeconds%.2f s (JVM up ${
        java.lang.management.ManagementFactory.getRuntimeMXBean.getUptime / 1000.0
      }%.2f s), " +
      f"heap used ${(rt.totalMemory() - rt.freeMemory()) / 1048576.0}%.0f MiB")
    println(s"NAMESRV ${mq.nameServer}")
    System.out.flush()

    val json = new ObjectMapper()
    // A RocketMQ 5 proxy in front of this broker, started by the first `startProxy`; stopped with
    // the harness.
    var proxy: Option[RocketMQProxyProcess] = None
    Runtime.getRuntime.addShutdownHook(new Thread(() => proxy.foreach(_.stop())))
    serveCommands {
      case "startProxy" :: Nil =>
        if (proxy.isEmpty) {
          proxy = Some(new RocketMQProxyProcess(mq.nameServer, mq.clusterName,
            auth = if (mq.secured) Some(TestSecurity.Admin) else None).start())
        }
        s"OK ${proxy.get.endpoint}"
      case "stopProxy" :: Nil =>
        proxy.foreach(_.stop())
        proxy = None
        "OK"
      case "createTopic" :: topic :: queues :: Nil => mq.createTopic(topic, queues.toInt); "OK"
      case "createTopic" :: topic :: queues :: "COMPACTED" :: Nil =>
        mq.createTopic(topic, queues.toInt, compacted = true); "OK"
      case "createTopic" :: topic :: queues :: messageType :: Nil =>
        mq.createTopic(topic, queues.toInt, Some(messageType)); "OK"
      case "createUserWithRights" :: accessKey :: secretKey :: rights :: Nil =>
        TestSecurity.createUserWithRights(mq.brokerController,
          TestSecurity.User(accessKey, secretKey),
          TestSecurity.parseRights(rights))
        "OK"
      case "send" :: topic :: count :: prefix :: rest =>
        val tag = rest.headOption.orNull
        mq.sendSpread(topic, (0 until count.toInt).map(i => TestMessage(s"$prefix$i", tags = tag)))
        "OK"
      case "latestOffsets" :: topic :: Nil =>
        "OK " + RocketMQOffsetsJson.format(mq.latestOffsets(topic))
      case "storeDir" :: Nil => s"OK ${mq.storeDirectory}"
      case "awaitIndexed" :: Nil => mq.awaitIndexed(); "OK"
      case "set" :: key :: value :: Nil => mq.setBrokerSetting(key, value); "OK"
      case "createUser" :: accessKey :: secretKey :: rights :: Nil =>
        val actions = rights match {
          case "none" => Nil
          case "read" => TestSecurity.ReadOnly
          case "readwrite" => TestSecurity.ReadWrite
          case other =>
            throw new IllegalArgumentException(s"rights must be none, read or readwrite: $other")
        }
        mq.createUser(TestSecurity.User(accessKey, secretKey), actions)
        "OK"
      case "bodies" :: topic :: Nil =>
        "OK " + json.writeValueAsString(
          mq.readAll(topic).map(m => new String(m.getBody, StandardCharsets.UTF_8)).asJava)
    }
  }

  /**
   * Answers one command per stdin line with one line: `handle`'s reply to the line's words, `ERROR
   * unknown command: …` where it has none, or `ERROR <exception>`. Exits the JVM when stdin
   * closes or says `stop`.
   */
  private[rocketmq] def serveCommands(handle: PartialFunction[List[String], String]): Nothing = {
    val in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))
    var line = in.readLine()
    while (line != null && line.trim != "stop") {
      val words = line.trim.split("\\s+").toList
      val reply =
        try handle.applyOrElse(words, (_: List[String]) => s"ERROR unknown command: $line")
        catch { case e: Throwable => s"ERROR ${e.toString.replace('\n', ' ')}" }
      println(reply)
      System.out.flush()
      line = in.readLine()
    }
    System.exit(0)
    throw new IllegalStateException("unreachable")
  }
}
