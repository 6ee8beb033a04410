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
import java.nio.file.{Files, Paths}

import org.scalatest.funsuite.AnyFunSuite

/** The README's option table is generated from [[RocketMQOptions.registry]]; this fails when they drift. */
class RocketMQOptionsDocSuite extends AnyFunSuite {
  private val begin = "<!-- options:begin (generated from RocketMQOptions.registry) -->"
  private val end = "<!-- options:end -->"
  private val regenerate = """UPDATE_README=1 build/sbt "connector/testOnly *RocketMQOptionsDocSuite""""

  private def readme = Paths.get(sys.props("rocketmq.spark.repoRoot")).resolve("README.md")

  test("README option table matches the option declarations") {
    val path = readme
    val text = new String(Files.readAllBytes(path), StandardCharsets.UTF_8)
    val (from, to) = (text.indexOf(begin), text.indexOf(end))
    assert(from >= 0 && to > from, s"markers missing in $path")
    val current = text.substring(from + begin.length, to)
    val expected = "\n" + RocketMQOptionsDoc.markdownTable + "\n"
    if (current != expected && sys.env.get("UPDATE_README").contains("1")) {
      Files.write(path,
        (text.substring(0, from + begin.length) + expected + text.substring(to))
          .getBytes(StandardCharsets.UTF_8))
    } else {
      assert(current === expected, s"README.md option table is stale; regenerate it with: $regenerate")
    }
  }
}
