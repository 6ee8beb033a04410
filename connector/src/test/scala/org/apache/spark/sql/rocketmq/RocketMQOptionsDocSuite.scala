package org.apache.spark.sql.rocketmq

import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Paths}

import org.scalatest.funsuite.AnyFunSuite

/** The README's option table is generated from [[RocketMQOptions.registry]]; this fails when they drift. */
class RocketMQOptionsDocSuite extends AnyFunSuite {
  private val begin = "<!-- options:begin (generated from RocketMQOptions.registry) -->"
  private val end = "<!-- options:end -->"
  private val regenerate = """UPDATE_README=1 build/sbt "connector/testOnly *RocketMQOptionsDocSuite""""

  private def readme = Paths.get(sys.props.getOrElse("user.dir", ".")).resolve("../README.md").normalize()

  test("README option table matches the option declarations") {
    val path = readme
    val text = new String(Files.readAllBytes(path), StandardCharsets.UTF_8)
    val (from, to) = (text.indexOf(begin), text.indexOf(end))
    assert(from >= 0 && to > from, s"markers missing in $path")
    val current = text.substring(from + begin.length, to)
    val expected = "\n" + RocketMQOptionsDoc.markdownTable + "\n"
    if (current != expected && sys.env.get("UPDATE_README").contains("1")) {
      Files.write(path, (text.substring(0, from + begin.length) + expected + text.substring(to))
        .getBytes(StandardCharsets.UTF_8))
    } else {
      assert(current === expected, s"README.md option table is stale; regenerate it with: $regenerate")
    }
  }
}
