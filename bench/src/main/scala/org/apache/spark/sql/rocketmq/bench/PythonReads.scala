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

import java.nio.file.Path

import com.fasterxml.jackson.databind.ObjectMapper

/**
 * Batch reads from a PySpark program (`bench/python_read.py` on `python`, a virtualenv's with the
 * wheel): each in the program's own Spark, `local[2]` on PySpark's defaults, timed there.
 */
final class PythonReads(python: Path) extends AutoCloseable {
  private val program = new PythonProgram(Seq(python.toString, "bench/python_read.py"))
  private val json = new ObjectMapper()

  println(s"BENCH python reads: pyspark ${program.await("STARTED")}")

  /** Seconds a read of all of `topic` took; it must sum `bodyBytes` bytes of bodies. */
  def read(nameServer: String, topic: String, bodyBytes: Long): Double = {
    program.tell(
      "RUN " + json.writeValueAsString(java.util.Map.of("nameServer", nameServer, "topic", topic)))
    val result = json.readTree(program.await("RESULT"))
    val bytes = result.get("bytes").asLong()
    require(bytes == bodyBytes, s"a read of $topic from Python summed $bytes bytes of bodies")
    result.get("seconds").asDouble()
  }

  /** Ends the program (and checks that it ended well). */
  override def close(): Unit = program.finish()
}
