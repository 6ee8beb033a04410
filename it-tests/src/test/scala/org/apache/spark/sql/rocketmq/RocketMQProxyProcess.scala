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
import java.net.{InetSocketAddress, Socket}
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Path, Paths}
import java.util.concurrent.TimeUnit

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

/**
 * Apache RocketMQ's own proxy (module `proxy`, Maven Central's jar of the harness's RocketMQ
 * version) in a JVM of its own, in cluster mode in front of the name server `nameServer` and the
 * brokers of cluster `clusterName`: what managed RocketMQ 5 services give their users as an
 * endpoint. Its Remoting port is what a client takes as its name server ([[endpoint]]); both its
 * ports are free loopback ports (its defaults, 8080 and 8081, are Spark's UI ports). Its classpath
 * is `it-tests/target/proxy-java-args` (`build/sbt itTests/exportHarnessClasspath`).
 *
 * `auth`: the proxy authenticates and authorizes clients itself with ACL 2.0, reading users and
 * rules from the brokers (whose own auth is on: [[EmbeddedRocketMQ]] with `secured`), as a managed
 * service does. `settings`: more of the proxy's configuration.
 */
final class RocketMQProxyProcess(nameServer: String, clusterName: String,
    auth: Option[TestSecurity.User] = None, settings: Seq[(String, Any)] = Nil) {
  private val home: Path = Files.createTempDirectory("rocketmq-spark-proxy-")
  private var process: Process = _
  private var remotingPort: Int = -1

  /** What a client sets as its name server to go through this proxy. */
  def endpoint: String = s"127.0.0.1:$remotingPort"

  def start(timeoutMs: Long = 120000L): this.type = {
    remotingPort = RocketMQProxyProcess.freePort()
    val grpcPort = RocketMQProxyProcess.freePort()
    val config = Seq(
      "rocketMQClusterName" -> clusterName,
      "namesrvAddr" -> nameServer,
      "proxyMode" -> "cluster",
      "remotingListenPort" -> remotingPort,
      "grpcServerPort" -> grpcPort,
      "remotingAccessAddr" -> "127.0.0.1",
      "localServeAddr" -> "127.0.0.1",
      "enableTopicMessageTypeCheck" -> true
    ) ++ auth.toSeq.flatMap { admin =>
      Seq(
        "authenticationEnabled" -> true,
        "authorizationEnabled" -> true,
        "authenticationProvider" ->
          "org.apache.rocketmq.auth.authentication.provider.DefaultAuthenticationProvider",
        "authorizationProvider" ->
          "org.apache.rocketmq.auth.authorization.provider.DefaultAuthorizationProvider",
        "authenticationMetadataProvider" ->
          "org.apache.rocketmq.proxy.auth.ProxyAuthenticationMetadataProvider",
        "authorizationMetadataProvider" ->
          "org.apache.rocketmq.proxy.auth.ProxyAuthorizationMetadataProvider",
        "innerClientAuthenticationCredentials" ->
          s"""{"accessKey":"${admin.accessKey}","secretKey":"${admin.secretKey}"}""",
        "enableAclRpcHookForClusterMode" -> true
      )
    } ++ settings
    val json = config.map {
      case (k, v: String) => "  \"" + k + "\": \"" + v.replace("\"", "\\\"") + "\""
      case (k, v) => "  \"" + k + "\": " + v
    }.mkString("{\n", ",\n", "\n}\n")
    val configFile = home.resolve("proxy.json")
    Files.write(configFile, json.getBytes(UTF_8))
    val cmd =
      Seq(Paths.get(System.getProperty("java.home"), "bin", "java").toString, "-Xmx512m", "-Xss1m",
        s"-Duser.home=$home", s"-DRMQ_PROXY_HOME=$home", s"-Drocketmq.home.dir=$home",
        "-Dtls.server.mode=disabled", s"@${RocketMQProxyProcess.javaArgs}",
        "org.apache.rocketmq.proxy.ProxyStartup", "-pc", configFile.toString)
    process = new ProcessBuilder(cmd: _*)
      .redirectErrorStream(true)
      .redirectOutput(ProcessBuilder.Redirect.appendTo(home.resolve("proxy-stdout.log").toFile))
      .start()
    try {
      EmbeddedRocketMQ.awaitCondition(s"the proxy to listen on $remotingPort", timeoutMs) {
        if (!process.isAlive)
          throw new IllegalStateException(s"the proxy exited (${process.exitValue()}): $logTail")
        RocketMQProxyProcess.accepts(remotingPort)
      }
    } catch {
      case e: AssertionError =>
        stop()
        throw new IllegalStateException(s"${e.getMessage}: $logTail")
    }
    this
  }

  private def logTail: String = {
    val out = home.resolve("proxy-stdout.log")
    if (Files.exists(out)) Files.readAllLines(out, UTF_8).asScala.takeRight(30).mkString("\n")
    else "(no output)"
  }

  /** SIGKILL (a proxy holds no state of its own), then removes its directory. */
  def stop(): Unit = {
    if (process != null) {
      process.destroyForcibly()
      process.waitFor(30, TimeUnit.SECONDS)
      process = null
    }
    EmbeddedRocketMQ.deleteRecursively(home.toFile)
  }
}

object RocketMQProxyProcess {

  /**
   * The proxy's JVM arguments file: `-Drocketmq.proxy.javaArgs`, else
   * it-tests/target/proxy-java-args above the cwd.
   */
  private[rocketmq] def javaArgs: String =
    Option(System.getProperty("rocketmq.proxy.javaArgs")).getOrElse {
      val found = Iterator.iterate(new File(".").getAbsoluteFile)(_.getParentFile).takeWhile(
        _ != null)
        .flatMap(dir =>
          Seq(new File(dir, "it-tests/target/proxy-java-args"),
            new File(dir, "target/proxy-java-args")))
        .find(_.isFile)
      found.map(_.getAbsolutePath).getOrElse(throw new IllegalStateException(
        "it-tests/target/proxy-java-args is missing: run build/sbt itTests/exportHarnessClasspath"))
    }

  private def freePort(): Int = {
    val socket = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress)
    try socket.getLocalPort
    finally socket.close()
  }

  private def accepts(port: Int): Boolean = {
    val socket = new Socket()
    try { socket.connect(new InetSocketAddress("127.0.0.1", port), 200); true }
    catch { case NonFatal(_) => false }
    finally socket.close()
  }
}
