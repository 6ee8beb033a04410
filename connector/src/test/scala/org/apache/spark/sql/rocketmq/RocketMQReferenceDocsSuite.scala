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

/**
 * The reference pages' tables are generated from the code ([[RocketMQReferenceDocs]]); this fails
 * when they drift, and with UPDATE_DOCS=1 rewrites them.
 */
class RocketMQReferenceDocsSuite extends AnyFunSuite {
  private val regenerate =
    """UPDATE_DOCS=1 build/sbt "connector/testOnly *RocketMQReferenceDocsSuite""""

  private def checkGenerated(page: String, name: String, source: String, table: String): Unit = {
    val path = Paths.get(sys.props("rocketmq.spark.repoRoot")).resolve(page)
    val (begin, end) = (s"<!-- $name:begin (generated from $source) -->", s"<!-- $name:end -->")
    val text = new String(Files.readAllBytes(path), StandardCharsets.UTF_8)
    val (from, to) = (text.indexOf(begin), text.indexOf(end))
    assert(from >= 0 && to > from, s"markers missing in $path")
    val current = text.substring(from + begin.length, to)
    val expected = "\n" + table + "\n"
    if (current != expected && sys.env.get("UPDATE_DOCS").contains("1")) {
      Files.write(path,
        (text.substring(0, from + begin.length) + expected + text.substring(to)).getBytes(
          StandardCharsets.UTF_8))
    } else {
      assert(current === expected,
        s"the $name table of $page is stale; regenerate it with: $regenerate")
    }
  }

  test("the option reference matches the option declarations") {
    checkGenerated("docs/reference/options.md", "options", "RocketMQOptions.registry",
      RocketMQReferenceDocs.optionsTable)
  }

  test("the error reference matches the error conditions the connector raises") {
    checkGenerated("docs/reference/errors.md", "errors", "rocketmq-error-conditions.json",
      RocketMQReferenceDocs.errorsTable)
  }

  test("Python keywords are the option keys in snake_case, an acronym being one word") {
    assert(RocketMQReferenceDocs.pythonKeyword("nameServer") === "name_server")
    assert(RocketMQReferenceDocs.pythonKeyword("useTLS") === "use_tls")
    assert(
      RocketMQReferenceDocs.pythonKeyword("maxOffsetsPerTrigger") === "max_offsets_per_trigger")
  }
}
