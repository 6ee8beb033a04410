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

import java.io.{BufferedReader, File, IOException, InputStreamReader, PrintWriter}
import java.lang.management.ManagementFactory
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Path, Paths, StandardOpenOption}
import java.util.concurrent.{LinkedBlockingQueue, TimeUnit}

import scala.jdk.CollectionConverters._

/**
 * A JVM running [[RocketMQBrokerProcessMain]] with `arguments`: its protocol lines are queued for
 * [[awaitReply]], its other output and its stderr go to files under `logDir` (named after `label`).
 * `jvmOptions` are its heap and collector flags; the test JVM's module flags are passed on.
 */
final class BrokerJvm(logDir: Path, jvmOptions: Seq[String], arguments: Seq[String],
    label: String = "broker") {
  private val jvmFlags = ManagementFactory.getRuntimeMXBean.getInputArguments.asScala.filter { a =>
    a.startsWith("--add-") || a == "-XX:+IgnoreUnrecognizedVMOptions" ||
    a.startsWith("-Djdk.reflect.") ||
    a.startsWith("-Dio.netty.")
  }
  private val stderrFile = logDir.resolve(s"$label-stderr.log")
  private val cmd = Seq(Paths.get(System.getProperty("java.home"), "bin", "java").toString) ++
    jvmOptions ++ jvmFlags ++ Seq(
      s"-Duser.home=${System.getProperty("user.home")}",
      s"-Drocketmq.log.root=$logDir",
      s"-Drmq.logback.configurationFile=${logDir.resolve("rmq.logback.xml")}",
      "-Drocketmq.broker.diskSpaceWarningLevelRatio=0.99",
      // Else building a self-signed TLS context takes seconds at each start.
      "-Dtls.server.mode=disabled",
      "-cp",
      System.getProperty("java.class.path"),
      RocketMQBrokerProcessMain.getClass.getName.stripSuffix("$")) ++ arguments
  val process: Process = new ProcessBuilder(cmd: _*)
    .redirectError(ProcessBuilder.Redirect.appendTo(stderrFile.toFile))
    .start()
  private val stdin = new PrintWriter(process.getOutputStream, true, UTF_8)
  private val replies = new LinkedBlockingQueue[String]()
  private val reader = new Thread(() => copyOutput(), s"$label-process-stdout-${process.pid()}")
  reader.setDaemon(true)
  reader.start()

  private def copyOutput(): Unit = {
    val in = new BufferedReader(new InputStreamReader(process.getInputStream, UTF_8))
    val other = logDir.resolve(s"$label-stdout.log").toFile
    def next(): String = try in.readLine()
    catch { case _: IOException => null }
    Iterator.continually(next()).takeWhile(_ != null).foreach { line =>
      if (line.startsWith(RocketMQBrokerProcessMain.Prefix)) {
        replies.put(line.stripPrefix(RocketMQBrokerProcessMain.Prefix))
      } else BrokerJvm.appendLine(other, line)
    }
  }

  def send(line: String): Unit = stdin.println(line)

  /**
   * The next protocol line, which must start with `expected`; fails if the JVM exits or 2 min pass.
   */
  def awaitReply(expected: String): String = {
    val deadline = System.nanoTime() + 120L * 1000 * 1000 * 1000
    var answer: String = null
    while (answer == null) {
      answer = replies.poll(100, TimeUnit.MILLISECONDS)
      if (answer == null && (!process.isAlive || System.nanoTime() > deadline)) {
        val state =
          if (process.isAlive) "no answer within 2 min" else s"it exited (${process.exitValue()})"
        throw new IllegalStateException(s"$label JVM: $state; stderr ends with:\n$stderrTail")
      }
    }
    if (!answer.startsWith(expected))
      throw new IllegalStateException(s"$label JVM: '$answer', not $expected")
    answer
  }

  /** Sends one command line and returns its `OK` answer's rest. */
  def command(line: String): String = {
    send(line)
    awaitReply("OK").stripPrefix("OK").trim
  }

  /** SIGKILL, and waits until the process is gone. */
  def kill(): Unit = {
    process.destroyForcibly()
    require(process.waitFor(30, TimeUnit.SECONDS), s"the killed $label JVM did not exit")
  }

  private def stderrTail: String =
    Files.readAllLines(stderrFile).asScala.takeRight(20).mkString("\n")
}

object BrokerJvm {
  private[rocketmq] def appendLine(file: File, line: String): Unit =
    Files.write(file.toPath, (line + "\n").getBytes(UTF_8), StandardOpenOption.CREATE,
      StandardOpenOption.APPEND)
}
