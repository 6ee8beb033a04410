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

import java.nio.charset.StandardCharsets
import java.nio.file.Files

// One version for the jar and the Python package: python/rocketmq_spark/_version.py is the source.
val projectVersion: String = {
  val text = IO.read(file("python/rocketmq_spark/_version.py"), StandardCharsets.UTF_8)
  "__version__ = \"([^\"]+)\"".r.findFirstMatchIn(text).map(_.group(1))
    .getOrElse(sys.error("no __version__ in python/rocketmq_spark/_version.py"))
}

val sparkVersion = "4.2.0" // equal to the pyspark pinned in python/pyproject.toml
val rocketmqVersion = "5.5.0"
val scalatestVersion = "3.2.19"
// Bench only (never in the connector's jar or POM): the peer we measure against. The broker's version is
// that of the kafka-clients Spark's Kafka connector ships (3.9.x for Spark 4.2).
val kafkaVersion = "3.9.2"

ThisBuild / organization := "io.github.rocketmq-spark"
ThisBuild / version := projectVersion
ThisBuild / scalaVersion := "2.13.18"
ThisBuild / versionScheme := Some("early-semver")
ThisBuild / licenses := Seq("Apache-2.0" -> url("https://www.apache.org/licenses/LICENSE-2.0"))
ThisBuild / homepage := Some(url("https://github.com/rocketmq-spark/rocketmq-spark"))

// Parts of rocketmq-client's tree that a client never loads (broker storage, metrics exporters,
// gRPC, native codecs Spark already ships), kept out of both the POM and the assembly.
val clientExclusions: Seq[ExclusionRule] = Seq(
  ExclusionRule("org.apache.rocketmq", "rocketmq-rocksdb"),
  ExclusionRule("com.github.luben", "zstd-jni"),
  ExclusionRule("at.yawk.lz4", "lz4-java"),
  ExclusionRule("org.awaitility"),
  ExclusionRule("org.hamcrest"),
  ExclusionRule("org.apache.tomcat", "annotations-api"),
  ExclusionRule("com.fasterxml.jackson.core") // only the OTLP log exporter wants it; Spark has its own
)

// Out of the published POM only: with --packages the client runs on Spark's own netty (docs/build-notes.md).
val pomOnlyClientExclusions: Seq[(String, String)] = Seq("io.netty" -> "*")

/** Adds `pomOnlyClientExclusions` to the RocketMQ dependencies (client, filter) of a generated POM. */
def excludeFromClientInPom(pom: scala.xml.Node): scala.xml.Node = {
  import scala.xml._
  import scala.xml.transform.{RewriteRule, RuleTransformer}
  val added = pomOnlyClientExclusions.map { case (group, artifact) =>
    <exclusion><groupId>{group}</groupId><artifactId>{artifact}</artifactId></exclusion>
  }
  val rule = new RewriteRule {
    override def transform(n: Node): Seq[Node] = n match {
      case dep: Elem
          if dep.label == "dependency" && (dep \ "groupId").text == "org.apache.rocketmq" &&
            Set("rocketmq-client", "rocketmq-filter").contains((dep \ "artifactId").text) =>
        val (exclusions, rest) = dep.child.partition(_.label == "exclusions")
        val kept = exclusions.flatMap(_.child).filter(_.isInstanceOf[Elem])
        dep.copy(child = rest :+ <exclusions>{kept ++ added}</exclusions>)
      case other => other
    }
  }
  val out = new RuleTransformer(rule).transform(pom).head
  require((out \\ "exclusion").count(e => (e \ "groupId").text == "io.netty") == 2,
    "rocketmq-client or rocketmq-filter is no longer a POM dependency: update excludeFromClientInPom")
  out
}

lazy val commonSettings = Seq(
  scalacOptions ++= Seq("-deprecation", "-feature", "-unchecked", "-Wunused:imports", "-release:17"),
  javacOptions ++= Seq("--release", "17"),
  libraryDependencies ++= Seq(
    "org.apache.spark" %% "spark-sql" % sparkVersion % Provided,
    "org.scalatest" %% "scalatest" % scalatestVersion % Test
  ),
  Test / fork := true,
  Test / javaOptions ++= JavaModuleOptions.all ++ Seq("-Xmx3g", "-Xss4m",
    // RocketMQ writes some files under user.home: keep them in the build tree.
    s"-Duser.home=${(target.value / "test-home").getAbsolutePath}",
    s"-Drocketmq.log.root=${(target.value / "rocketmq-logs").getAbsolutePath}"),
  Test / parallelExecution := false,
  Test / testOptions += Tests.Argument(TestFrameworks.ScalaTest, "-oDF")
)

lazy val root = (project in file("."))
  .aggregate(connector, itTests, bench)
  .settings(publish / skip := true, name := "rocketmq-spark-root")

lazy val connector = (project in file("connector"))
  .settings(commonSettings)
  .settings(
    name := "rocketmq-spark-connector",
    libraryDependencies ++= Seq(
      ("org.apache.rocketmq" % "rocketmq-client" % rocketmqVersion).excludeAll(clientExclusions: _*),
      // RocketMQ's own SQL92 compiler, to refuse at planning a filter the broker would ignore; its
      // server utilities are never loaded by the compiler.
      ("org.apache.rocketmq" % "rocketmq-filter" % rocketmqVersion)
        .excludeAll(clientExclusions :+ ExclusionRule("org.apache.rocketmq", "rocketmq-srvutil"): _*)
    ),
    pomPostProcess := excludeFromClientInPom,
    // dev/test republishes the same version to ~/.m2 on every run (for the spark-submit --packages
    // test); without this the second `connector/publishM2` fails because the POM already exists.
    publishM2Configuration := publishM2Configuration.value.withOverwrite(true),
    assembly / assemblyJarName := s"rocketmq-spark-connector-assembly_${scalaBinaryVersion.value}-${version.value}.jar",
    assembly / assemblyOption ~= (_.withIncludeScala(false)),
    assembly / test := {},
    assembly / assemblyShadeRules := ShadedDependencies.rules,
    assembly / assemblyMergeStrategy := ShadedDependencies.mergeStrategy((assembly / assemblyMergeStrategy).value),
    // LICENSE and NOTICE as META-INF/LICENSE and META-INF/NOTICE: the thin jar's are the top-level files; the
    // assembly's come from a directory of their own, its NOTICE naming what it bundles (docs/build-notes.md).
    Compile / packageBin / mappings ++=
      Seq("LICENSE", "NOTICE").map(f => (ThisBuild / baseDirectory).value / f -> s"META-INF/$f"),
    assembly / fullClasspath := {
      val classpath = (assembly / fullClasspath).value
      val options = (assembly / assemblyOption).value
      val excluded = options.excludedJars.map(_.data).toSet
      val bundled = for {
        entry <- classpath if entry.data.isFile && !excluded(entry.data)
        module <- entry.get(moduleID.key) if options.includeScala || module.organization != "org.scala-lang"
      } yield module -> entry.data
      val dir = ShadedDependencies.assemblyLegalFiles(target.value / "assembly-legal",
        (ThisBuild / baseDirectory).value, (assembly / assemblyJarName).value, bundled, update.value)
      classpath :+ Attributed.blank(dir)
    }
  )

lazy val exportHarnessClasspath = taskKey[File]("Writes the java command line of the embedded RocketMQ harness")

lazy val itTests = (project in file("it-tests"))
  .dependsOn(connector % "compile->compile;test->test")
  .settings(commonSettings)
  .settings(
    name := "rocketmq-spark-it-tests",
    publish / skip := true,
    libraryDependencies ++= Seq(
      "org.apache.rocketmq" % "rocketmq-namesrv" % rocketmqVersion % Test,
      "org.apache.rocketmq" % "rocketmq-broker" % rocketmqVersion % Test
    ),
    // `build/sbt itTests/exportHarnessClasspath` writes target/harness-java-args: the JVM flags and
    // classpath to run the harness as a process (dev/rocketmq-harness reads it).
    exportHarnessClasspath := {
      val cp = (Test / fullClasspath).value.map(_.data.getAbsolutePath).mkString(java.io.File.pathSeparator)
      val out = target.value / "harness-java-args"
      IO.write(out, (JavaModuleOptions.all :+ "-cp" :+ cp).mkString("\n") + "\n")
      out
    }
  )

// The Kafka broker's own classpath, kept apart from Spark's (they disagree on Jackson and Scala modules).
lazy val KafkaServer = config("kafkaServer")
lazy val exportBenchClasspath = taskKey[File]("Writes the classpaths of the bench and of its Kafka broker")

lazy val bench = (project in file("bench"))
  .dependsOn(connector, itTests % "compile->test")
  .configs(KafkaServer)
  .settings(commonSettings)
  .settings(
    name := "rocketmq-spark-bench",
    publish / skip := true,
    libraryDependencies ++= Seq(
      "org.apache.spark" %% "spark-sql" % sparkVersion,
      "org.apache.spark" %% "spark-sql-kafka-0-10" % sparkVersion,
      "org.apache.kafka" %% "kafka" % kafkaVersion % KafkaServer,
      // The broker logs through SLF4J 1.7 (what its POM brings); without a binding it would log nothing.
      "org.slf4j" % "slf4j-simple" % "1.7.36" % KafkaServer
    ),
    // `build/sbt bench/exportBenchClasspath` writes target/bench-java-args (the bench's JVM flags and
    // classpath) and target/kafka-classpath (the Kafka broker's), which dev/bench reads.
    exportBenchClasspath := {
      val cp = (Compile / fullClasspath).value.map(_.data.getAbsolutePath).mkString(java.io.File.pathSeparator)
      val flags = JavaModuleOptions.all ++ Seq(s"-Dbench.kafkaVersion=$kafkaVersion", "-cp", cp)
      IO.write(target.value / "bench-java-args", flags.mkString("\n") + "\n")
      val kafka = Classpaths.managedJars(KafkaServer, classpathTypes.value, update.value)
        .map(_.data.getAbsolutePath).mkString(java.io.File.pathSeparator)
      IO.write(target.value / "kafka-classpath", kafka + "\n")
      target.value / "bench-java-args"
    }
  )
