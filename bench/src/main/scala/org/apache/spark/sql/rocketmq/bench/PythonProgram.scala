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

package org.apache.spark.sql.rocketmq.bench

import java.io.{BufferedReader, BufferedWriter, InputStreamReader, OutputStreamWriter}
import java.nio.charset.StandardCharsets.UTF_8
import java.util.concurrent.TimeUnit

import scala.jdk.CollectionConverters._

/**
 * A Python program of the bench (a PySpark user's program) that it talks to a line at a time:
 * `tell` writes a line to its stdin, `await` reads its stdout up to the next line starting with a
 * word. Its stderr is the bench's.
 */
final class PythonProgram(command: Seq[String]) extends AutoCloseable {
  private val process =
    new ProcessBuilder(command.asJava).redirectError(ProcessBuilder.Redirect.INHERIT).start()
  private val in = new BufferedReader(new InputStreamReader(process.getInputStream, UTF_8))
  private val out = new BufferedWriter(new OutputStreamWriter(process.getOutputStream, UTF_8))

  /** The operating system's id of the Python process. */
  def pid: Long = process.pid()

  def tell(line: String): Unit = { out.write(line); out.newLine(); out.flush() }

  /**
   * What follows `word` on the program's next line that starts with it. Spark's JVM, started by
   * pyspark, shares the program's stdout: lines not of the protocol are skipped.
   */
  def await(word: String): String = {
    var line = in.readLine()
    while (line != null && !line.startsWith(word)) line = in.readLine()
    require(line != null,
      s"the Python program ${command.mkString(" ")} ended before $word (its log is above)")
    line.stripPrefix(word).trim
  }

  /** Tells the program to end (`EXIT`) and checks that it did, with status 0. */
  def finish(): Unit = {
    tell("EXIT")
    require(process.waitFor(120, TimeUnit.SECONDS), "the Python program did not exit")
    require(process.exitValue() == 0, s"the Python program exited with ${process.exitValue()}")
  }

  override def close(): Unit = process.destroyForcibly()
}
