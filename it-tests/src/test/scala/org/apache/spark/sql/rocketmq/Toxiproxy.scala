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

import java.net.{ServerSocket, URI}
import java.net.http.{HttpClient, HttpRequest, HttpResponse}
import java.nio.file.{Files, Path, Paths}
import java.util.concurrent.TimeUnit

/**
 * A real TCP fault proxy (Shopify's Toxiproxy, built from its Go module on first use into the
 * checkout's `target/toxiproxy`) running in its own process, driven through its HTTP API: proxies
 * between the connector and a broker, and the faults ("toxics") they apply to the bytes that pass.
 */
final class Toxiproxy private (process: Process, apiPort: Int, log: java.io.File)
  extends AutoCloseable {
  private val http = HttpClient.newHttpClient()
  private val api = s"http://127.0.0.1:$apiPort"

  /** A proxy named `name` listening on `listen` (host:port) and forwarding to `upstream`. */
  def proxy(name: String, listen: String, upstream: String): Unit =
    call("POST", "/proxies", s"""{"name":"$name","listen":"$listen","upstream":"$upstream"}""")

  /**
   * Adds fault `toxic` of `kind` (latency, reset_peer, timeout, bandwidth, ...) to `proxy`'s bytes
   * towards the broker (`stream` upstream) or back from it (downstream); `attributes` as JSON
   * fields.
   */
  def addToxic(proxy: String, toxic: String, kind: String, stream: String, attributes: String)
      : Unit =
    call("POST", s"/proxies/$proxy/toxics",
      s"""{"name":"$toxic","type":"$kind","stream":"$stream","attributes":{$attributes}}""")

  /** Connections `proxy` has accepted so far (from the server's log): a client's reconnections. */
  def clientsAccepted(proxy: String): Int = {
    val lines = Files.readAllLines(log.toPath).iterator()
    var accepted = 0
    while (lines.hasNext) {
      val line = lines.next()
      if (line.contains("\"Accepted client\"") && line.contains(s"\"name\":\"$proxy\"")) accepted +=
        1
    }
    accepted
  }

  def removeToxic(proxy: String, toxic: String): Unit =
    call("DELETE", s"/proxies/$proxy/toxics/$toxic", "")

  private def call(method: String, path: String, body: String): String = {
    val publisher =
      if (body.isEmpty) HttpRequest.BodyPublishers.noBody()
      else HttpRequest.BodyPublishers.ofString(body)
    val request = HttpRequest.newBuilder(URI.create(api + path)).method(method, publisher)
      .header("Content-Type", "application/json").build()
    val response = http.send(request, HttpResponse.BodyHandlers.ofString())
    require(response.statusCode() / 100 == 2,
      s"Toxiproxy $method $path: ${response.statusCode()} " +
        response.body())
    response.body()
  }

  private def isAlive: Boolean = process.isAlive

  override def close(): Unit = {
    process.destroy()
    if (!process.waitFor(10, TimeUnit.SECONDS)) process.destroyForcibly()
  }
}

object Toxiproxy {
  /** The Toxiproxy release built: its Go module at this version. */
  val Module = "github.com/Shopify/toxiproxy/v2/cmd/server@v2.5.0"

  private lazy val root =
    Paths.get(sys.props.getOrElse("rocketmq.spark.repoRoot", ".")).toAbsolutePath

  /** The server binary, built with `go install` the first time (its module cache under target/). */
  lazy val binary: Path = {
    val dir = root.resolve("target/toxiproxy")
    val server = dir.resolve("bin/server")
    if (!Files.isExecutable(server)) {
      val build = new ProcessBuilder("go", "install", Module).redirectErrorStream(true)
        .redirectOutput(dir.resolve("go-install.log").toFile)
      Files.createDirectories(dir)
      build.environment().put("GOPATH", dir.resolve("go").toString)
      build.environment().put("GOBIN", dir.resolve("bin").toString)
      build.environment().put("GOFLAGS", "-modcacherw")
      val code = build.start().waitFor()
      require(code == 0 && Files.isExecutable(server),
        s"go install $Module failed ($code): see ${dir.resolve("go-install.log")}")
    }
    server
  }

  /** Starts a server on an ephemeral API port and waits until it answers. */
  def start(): Toxiproxy = {
    val port = {
      val s = new ServerSocket(0);
      try s.getLocalPort
      finally s.close()
    }
    val log = Files.createTempFile("toxiproxy-", ".log").toFile
    val builder = new ProcessBuilder(binary.toString, "-host", "127.0.0.1", "-port", port.toString)
      .redirectErrorStream(true).redirectOutput(log)
    builder.environment().put("LOG_LEVEL", "info") // connections accepted, not every write
    val proxy = new Toxiproxy(builder.start(), port, log)
    EmbeddedRocketMQ.awaitCondition(s"Toxiproxy to answer on port $port ($log)", 30000) {
      require(proxy.isAlive, s"Toxiproxy exited: see $log")
      scala.util.Try(proxy.call("GET", "/version", "")).isSuccess
    }
    proxy
  }
}
