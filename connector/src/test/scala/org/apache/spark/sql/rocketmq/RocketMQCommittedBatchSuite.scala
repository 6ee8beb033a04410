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

import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path}

import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite

/** The end of the last done batch, read from checkpoints laid out as Spark writes them. */
class RocketMQCommittedBatchSuite extends AnyFunSuite {
  private val meta = """{"batchWatermarkMs":0,"batchTimestampMs":1}"""

  test("an offsets file of version 1: one line per source, by id; '-' for none") {
    val lines = Seq("v1", meta, """{"a":1}""", "-", """{"c":3}""")
    assert(RocketMQCommittedBatch.endOf(lines, "0") === Some("""{"a":1}"""))
    assert(RocketMQCommittedBatch.endOf(lines, "1") === None)
    assert(RocketMQCommittedBatch.endOf(lines, "2") === Some("""{"c":3}"""))
    assert(RocketMQCommittedBatch.endOf(lines, "3") === None)
    assert(RocketMQCommittedBatch.endOf(lines, "named") === None)
  }

  test("an offsets file of version 2: '<id>:<offset>' lines") {
    val lines = Seq("v2", meta, """1:{"b":2}""", """0:{"a":1}""", "2:-")
    assert(RocketMQCommittedBatch.endOf(lines, "0") === Some("""{"a":1}"""))
    assert(RocketMQCommittedBatch.endOf(lines, "1") === Some("""{"b":2}"""))
    assert(RocketMQCommittedBatch.endOf(lines, "2") === None)
  }

  test("a version Spark does not write today reads as nothing known") {
    assert(RocketMQCommittedBatch.endOf(Seq("v3", meta, """{"a":1}"""), "0") === None)
    assert(RocketMQCommittedBatch.endOf(Seq.empty, "0") === None)
  }

  private def write(path: Path, text: String): Unit = {
    Files.createDirectories(path.getParent)
    Files.write(path, text.getBytes(StandardCharsets.UTF_8))
  }

  test("the last batch the commits log records, not one planned but not done") {
    val root = Files.createTempDirectory("rocketmq-committed-")
    val source = root.resolve("sources/1")
    Files.createDirectories(source)
    def assertLastEnd(expected: Option[String]) =
      assert(RocketMQCommittedBatch.lastEnd(source.toString, new Configuration()) === expected)
    assertLastEnd(None) // no batch yet
    (0 to 2).foreach(b => write(root.resolve(s"offsets/$b"), s"""v1\n$meta\n-\n{"end":$b}"""))
    assertLastEnd(None)
    val commitFiles = Seq("0", "1", ".1.crc", "1.crc", ".2.4f1c.tmp") // and files beside them
    commitFiles.foreach(n => write(root.resolve(s"commits/$n"), "v1\n{}"))
    assertLastEnd(Some("""{"end":1}"""))
    val notASource = root.resolve("elsewhere").toString
    assert(RocketMQCommittedBatch.lastEnd(notASource, new Configuration()) === None)
  }
}
