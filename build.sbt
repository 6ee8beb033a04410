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
// The Spark 3.5 line (Databricks 15.4 and 16.4 LTS, many on-premise clusters): built against the
// oldest 3.5 release, so that only APIs every 3.5.x has are used, for Scala 2.12 (Spark 3.5's
// default) and 2.13.
val spark35Version = "3.5.0"
val scala212Version = "2.12.20"
val scala213Version = "2.13.18"
val rocketmqVersion = "5.5.0"
val scalatestVersion = "3.2.19"
// Bench only (never in the connector's jar or POM): the peer we measure against. The broker's
// version is that of the kafka-clients Spark's Kafka connector ships (3.9.x for Spark 4.2).
val kafkaVersion = "3.9.2"
// Bench only: the Spark of the bench's `realtime` section (stateful real-time queries need 4.3),
// run from a pyspark of that version (.venv-spark-<version>, as dev/test-spark-version makes it),
// and the Spark Kafka connector it loads. Spark's 4.3.0 jars are not on Maven Central (its
// spark-sql-kafka-0-10_2.13 and spark-core_2.13 4.3.0 POMs answered 404 on 2026-11-26; pyspark
// 4.3.0 is on PyPI): until they are, the newest there, 4.2.0, which runs on pyspark 4.3.0 in that
// section's stateless and stateful queries.
val realTimeSparkVersion = "4.3.0"
val realTimeKafkaConnectorVersion = "4.2.0"

ThisBuild / organization := "io.github.rocketmq-spark"
ThisBuild / version := projectVersion
ThisBuild / scalaVersion := scala213Version
ThisBuild / versionScheme := Some("early-semver")
// What Maven Central asks of every published POM: name (the project's), description (each
// published project's own), url, licenses, developers and scm (RELEASING.md;
// python/tests/test_release_artifacts.py checks the published POMs).
val projectUrl = "https://github.com/rocketmq-spark/rocketmq-spark"
ThisBuild / licenses := Seq("Apache-2.0" -> url("https://www.apache.org/licenses/LICENSE-2.0"))
ThisBuild / homepage := Some(url(projectUrl))
ThisBuild / developers :=
  List(Developer("rocketmq-spark", "the rocketmq-spark authors", "", url(projectUrl)))
ThisBuild / scmInfo := Some(ScmInfo(url(projectUrl), s"scm:git:$projectUrl.git",
  "scm:git:git@github.com:rocketmq-spark/rocketmq-spark.git"))

// Parts of rocketmq-client's tree that a client never loads, kept out of both the POM and the
// assembly: broker storage, native codecs Spark already ships, and what the broker, the proxy and
// their metrics exporters need (gRPC and its gson, Prometheus, the OpenTelemetry exporters and
// their okhttp, okio and kotlin, netty's codecs and transports other than NIO, javassist and
// reflections, fastjson 1, commons-digester and -beanutils). No class of these is reachable from
// the connector's classes in the jar's class graph (`jdeps`; docs/build-notes.md), and every Python
// test runs the assembly, the --packages test the POM, without them.
val clientExclusions: Seq[ExclusionRule] = Seq(
  ExclusionRule("org.apache.rocketmq", "rocketmq-rocksdb"),
  ExclusionRule("com.github.luben", "zstd-jni"),
  ExclusionRule("at.yawk.lz4", "lz4-java"),
  ExclusionRule("org.awaitility"),
  ExclusionRule("org.hamcrest"),
  ExclusionRule("org.apache.tomcat", "annotations-api"),
  ExclusionRule(
    "com.fasterxml.jackson.core"), // only the OTLP log exporter wants it; Spark has its own
  ExclusionRule("io.grpc"),
  ExclusionRule("com.google.code.gson"),
  ExclusionRule("io.perfmark"),
  ExclusionRule("io.prometheus"),
  ExclusionRule("io.opentelemetry", "opentelemetry-exporter-common"),
  ExclusionRule("io.opentelemetry", "opentelemetry-exporter-logging"),
  ExclusionRule("io.opentelemetry", "opentelemetry-exporter-logging-otlp"),
  ExclusionRule("io.opentelemetry", "opentelemetry-exporter-otlp"),
  ExclusionRule("io.opentelemetry", "opentelemetry-exporter-otlp-common"),
  ExclusionRule("io.opentelemetry", "opentelemetry-exporter-prometheus"),
  ExclusionRule("io.opentelemetry", "opentelemetry-exporter-sender-okhttp"),
  ExclusionRule("com.squareup.okhttp3"),
  ExclusionRule("com.squareup.okio"),
  ExclusionRule("org.jetbrains.kotlin"),
  ExclusionRule("org.javassist"),
  ExclusionRule("org.reflections"),
  ExclusionRule("com.alibaba", "fastjson"),
  ExclusionRule("commons-digester"),
  ExclusionRule("commons-beanutils")
) ++ Seq("codec-dns", "codec-haproxy", "codec-http2", "codec-memcache", "codec-mqtt", "codec-redis",
  "codec-smtp",
  "codec-stomp", "codec-xml", "resolver-dns", "resolver-dns-classes-macos",
  "resolver-dns-native-macos",
  "transport-classes-epoll", "transport-native-epoll", "transport-classes-kqueue",
  "transport-native-kqueue",
  "transport-rxtx", "transport-sctp", "transport-udt", "handler-ssl-ocsp").map(m =>
  ExclusionRule("io.netty", s"netty-$m"))

// Out of the published POM only: with --packages the client runs on Spark's own netty
// (docs/build-notes.md).
val pomOnlyClientExclusions: Seq[(String, String)] = Seq("io.netty" -> "*")

/**
 * Adds `pomOnlyClientExclusions` to the RocketMQ dependencies (client, filter) of a generated POM.
 */
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
  require((out \\ "exclusion").count(e =>
      (e \ "groupId").text == "io.netty" && (e \ "artifactId").text == "*") == 2,
    "rocketmq-client or rocketmq-filter is no longer a POM dependency: update " +
      "excludeFromClientInPom")
  out
}

/**
 * Compiler, Spark and test settings: Spark `spark` as a provided dependency, bytecode for Java
 * `javaRelease` (8 for the Scala 2.12 build, which Databricks' JDK 8 runtimes load; 17 otherwise).
 */
def sparkSettings(spark: String, javaRelease: Int) = Seq(
  scalacOptions ++= Seq("-deprecation", "-feature", "-unchecked", s"-release:$javaRelease") ++ (
    if (scalaBinaryVersion.value == "2.12") Seq("-Ywarn-unused:imports")
    else Seq("-Wunused:imports")),
  javacOptions ++= Seq("--release", javaRelease.toString),
  libraryDependencies ++= Seq(
    "org.apache.spark" %% "spark-sql" % spark % Provided,
    "org.scalatest" %% "scalatest" % scalatestVersion % Test
  ),
  Test / fork := true,
  Test / javaOptions ++= JavaModuleOptions.all ++ Seq("-Xmx3g", "-Xss4m",
    // RocketMQ writes some files under user.home: keep them in the build tree.
    s"-Duser.home=${(target.value / "test-home").getAbsolutePath}",
    s"-Drocketmq.log.root=${(target.value / "rocketmq-logs").getAbsolutePath}",
    // RocketMQ's own log of this test JVM (it-tests/src/test/resources/rmq.logback-test.xml): a
    // folder per run.
    s"-Drocketmq.spark.testLogs=${(target.value / "rocketmq-test-logs" /
        System.currentTimeMillis.toString).getAbsolutePath}",
    // The checkout's root (the README, fixtures), wherever the project's own directory is.
    s"-Drocketmq.spark.repoRoot=${(ThisBuild / baseDirectory).value.getAbsolutePath}"),
  Test / parallelExecution := false,
  Test / testOptions += Tests.Argument(TestFrameworks.ScalaTest, "-oDF")
)

lazy val commonSettings = sparkSettings(sparkVersion, 17)

lazy val root = (project in file("."))
  .aggregate(connector, itTests, bench, connectorSpark35_212, connectorSpark35_213, smokeSpark4,
    smokeSpark35_212,
    smokeSpark35_213)
  .settings(publish / skip := true, name := "rocketmq-spark-root")

/**
 * The RocketMQ client and its SQL92 compiler, the thin jar's POM and the shaded assembly: every
 * connector build.
 */
lazy val connectorPackaging = Seq(
  libraryDependencies ++= Seq(
    ("org.apache.rocketmq" % "rocketmq-client" % rocketmqVersion).excludeAll(clientExclusions: _*),
    // RocketMQ's own SQL92 compiler, to refuse at planning a filter the broker would ignore; its
    // server utilities are never loaded by the compiler.
    ("org.apache.rocketmq" % "rocketmq-filter" % rocketmqVersion)
      .excludeAll(clientExclusions :+ ExclusionRule("org.apache.rocketmq", "rocketmq-srvutil"): _*)
  ),
  pomPostProcess := excludeFromClientInPom,
  // `publish` goes to a Maven repository of this checkout's own (target/maven-repo), which
  // dev/ivysettings.xml puts first for spark-submit --packages, ahead of Maven Central and never
  // reading ~/.m2.
  publishTo := Some(MavenCache("rocketmq-spark-local",
    (ThisBuild / baseDirectory).value / "target" / "maven-repo")),
  // dev/test republishes the same version to its repository on every run (for the spark-submit
  // --packages test); without this the second publish fails because the POM already exists.
  publishM2Configuration := publishM2Configuration.value.withOverwrite(true),
  publishConfiguration := publishConfiguration.value.withOverwrite(true),
  assembly / assemblyJarName :=
    s"${name.value}-assembly_${scalaBinaryVersion.value}-${version.value}.jar",
  assembly / assemblyOption ~= (_.withIncludeScala(false)),
  assembly / test := {},
  assembly / assemblyShadeRules := ShadedDependencies.rules,
  assembly / assemblyMergeStrategy :=
    ShadedDependencies.mergeStrategy((assembly / assemblyMergeStrategy).value),
  // LICENSE and NOTICE as META-INF/LICENSE and META-INF/NOTICE: the thin jar's are the top-level
  // files; the assembly's come from a directory of their own, its NOTICE naming what it bundles
  // (docs/build-notes.md).
  Compile / packageBin / mappings ++=
    Seq("LICENSE", "NOTICE").map(f => (ThisBuild / baseDirectory).value / f -> s"META-INF/$f"),
  assembly / fullClasspath := {
    val classpath = (assembly / fullClasspath).value
    val options = (assembly / assemblyOption).value
    val excluded = options.excludedJars.map(_.data).toSet
    val bundled = for {
      entry <- classpath if entry.data.isFile && !excluded(entry.data)
      module <- entry.get(moduleID.key) if options.includeScala ||
        module.organization != "org.scala-lang"
    } yield module -> entry.data
    val dir = ShadedDependencies.assemblyLegalFiles(target.value / "assembly-legal",
      (ThisBuild / baseDirectory).value, (assembly / assemblyJarName).value, bundled, update.value)
    classpath :+ Attributed.blank(dir)
  }
)

lazy val connector = (project in file("connector"))
  .settings(commonSettings)
  .settings(connectorPackaging)
  .settings(
    name := "rocketmq-spark-connector",
    description := "Apache RocketMQ source and sink for Spark 4 (DataSource V2), batch and " +
      "streaming; the RocketMQ client is a dependency.",
    Compile / unmanagedSourceDirectories += baseDirectory.value / "src" / "main" / "spark-4",
    // Unit tests of the Spark 4 sources, which the Spark 3.5 builds do not compile.
    Test / unmanagedSourceDirectories += baseDirectory.value / "src" / "test" / "spark-4"
  )

/**
 * The connector for Spark 3.5 and Scala `scala`: the same sources as [[connector]] (with the few
 * that differ by Spark version from src/main/spark-3.5), compiled against Spark 3.5.0. Its artifact
 * is rocketmq-spark-connector-spark35_<scala binary version>, thin and shaded as the main one,
 * published with the sources and Scaladoc jars of its own sources, as Maven Central requires.
 */
def connectorForSpark35(scala: String): Project = {
  val binary = CrossVersion.binaryScalaVersion(scala)
  Project(s"connectorSpark35_${binary.replace(".", "")}", file(s"connector-spark35/scala-$binary"))
    .settings(sparkSettings(spark35Version, if (binary == "2.12") 8 else 17))
    .settings(connectorPackaging)
    .settings(
      name := "rocketmq-spark-connector-spark35",
      description := "Apache RocketMQ source and sink for Spark 3.5 (DataSource V2), batch and " +
        "streaming; the RocketMQ client is shaded into the jar.",
      scalaVersion := scala,
      // The published jar is the shaded one: Spark 3.5 puts its own guava 14 first on the
      // classpath, where the RocketMQ client (guava 32) fails with NoSuchMethodError; --packages of
      // a thin jar cannot work there.
      Compile / packageBin := assembly.value,
      pomPostProcess := bundledOutOfPom,
      // The Scala 2.12 build needs scala.jdk.CollectionConverters, which 2.13 has built in.
      libraryDependencies ++=
        (if (binary == "2.12")
           Seq("org.scala-lang.modules" %% "scala-collection-compat" % "2.12.0")
         else Nil),
      Compile / unmanagedSourceDirectories := {
        val main = (ThisBuild / baseDirectory).value / "connector" / "src" / "main"
        Seq(main / "scala", main / "java", main / "spark-3.5")
      },
      // The connector's unit tests, run against Spark 3.5 too.
      Test / unmanagedSourceDirectories :=
        Seq((ThisBuild / baseDirectory).value / "connector" / "src" / "test" / "scala"),
      assembly / assemblyShadeRules ++=
        (if (binary == "2.12") ShadedDependencies.scala212CompatRules else Nil),
      Compile / unmanagedResourceDirectories :=
        Seq((ThisBuild / baseDirectory).value / "connector" / "src" / "main" / "resources")
    )
}

/**
 * The spark35 artifacts' POM: what the jar bundles is gone from it (the published jar is the shaded
 * one), and only what the cluster provides stays (Spark, Scala).
 */
def bundledOutOfPom(pom: scala.xml.Node): scala.xml.Node = {
  import scala.xml._
  import scala.xml.transform.{RewriteRule, RuleTransformer}
  val rule = new RewriteRule {
    override def transform(n: Node): Seq[Node] = n match {
      case dep: Elem if dep.label == "dependency" =>
        val provided = (dep \ "scope").text == "provided" || (dep \ "groupId").text ==
          "org.scala-lang"
        if (provided && (dep \ "scope").text != "test") dep else Nil
      case other => other
    }
  }
  new RuleTransformer(rule).transform(pom).head
}

lazy val connectorSpark35_212 = connectorForSpark35(scala212Version)
lazy val connectorSpark35_213 = connectorForSpark35(scala213Version)

lazy val exportHarnessClasspath =
  taskKey[File]("Writes the java command line of the embedded RocketMQ harness")

// A RocketMQ 4.9 name server and broker (what many production clusters still run), from Maven
// Central's jars, on a classpath of their own: the Python tests run them as processes next to the
// 5.x harness.
val rocketmq49Version = "4.9.7"
lazy val RocketMQ49 = config("rocketmq49")
// The RocketMQ 5 proxy (what managed RocketMQ 5 services put in front of their brokers), on a
// classpath of its own: the tests run it as a process in front of the harness's name server and
// broker (RocketMQProxyProcess).
lazy val RocketMQProxy = config("rocketmqproxy")

// The test and bench JVMs' RocketMQ servers (in-JVM, the harness's, RocketMQ 4.9's) speak plain
// text only, as the broker processes of the clusters and the proxy do: in its default mode a
// server also accepts TLS, with a self-signed certificate it makes at each start, an RSA key pair
// per server (a name server, a broker's two): seconds of CPU a start on the 2-core test machine.
// TLS is tested on servers of its own (`dev/rocketmq-harness --tls`), which set their own mode.
val plainTextServers = Seq("-Dtls.server.mode=disabled")

lazy val itTests = (project in file("it-tests"))
  .dependsOn(connector % "compile->compile;test->test")
  .configs(RocketMQ49, RocketMQProxy)
  .settings(commonSettings)
  .settings(
    name := "rocketmq-spark-it-tests",
    publish / skip := true,
    libraryDependencies ++= Seq(
      "org.apache.rocketmq" % "rocketmq-namesrv" % rocketmqVersion % Test,
      "org.apache.rocketmq" % "rocketmq-broker" % rocketmqVersion % Test,
      "org.apache.rocketmq" % "rocketmq-tiered-store" % rocketmqVersion % Test,
      "org.apache.rocketmq" % "rocketmq-namesrv" % rocketmq49Version % RocketMQ49,
      "org.apache.rocketmq" % "rocketmq-broker" % rocketmq49Version % RocketMQ49,
      "org.apache.rocketmq" % "rocketmq-tools" % rocketmq49Version % RocketMQ49,
      "org.apache.rocketmq" % "rocketmq-proxy" % rocketmqVersion % RocketMQProxy
    ),
    // `build/sbt itTests/exportHarnessClasspath` writes target/harness-java-args: the JVM flags and
    // classpath to run the harness as a process (dev/rocketmq-harness reads it); and
    // target/rocketmq49-java-args, the same for RocketMQ 4.9's own name server, broker and admin
    // tool (python/tests/rocketmq49.py); and target/proxy-java-args, the same for the RocketMQ 5
    // proxy (RocketMQProxyProcess); and target/decision-halt-fs.jar (DecisionHaltFileSystem,
    // python/tests/test_exactly_once_kill.py). The proxy's JVM (RocketMQProxyProcess) runs from the
    // classpath file exportHarnessClasspath writes.
    Test / javaOptions +=
      s"-Drocketmq.proxy.javaArgs=${(target.value / "proxy-java-args").getAbsolutePath}",
    Test / javaOptions ++= plainTextServers,
    Test / test := (Test / test).dependsOn(exportHarnessClasspath).value,
    Test / testOnly := (Test / testOnly).dependsOn(exportHarnessClasspath).evaluated,
    exportHarnessClasspath := {
      val cp = (Test / fullClasspath).value.map(_.data.getAbsolutePath).mkString(
        java.io.File.pathSeparator)
      val serverFlags = JavaModuleOptions.all ++ plainTextServers
      val out = target.value / "harness-java-args"
      IO.write(out, (serverFlags :+ "-cp" :+ cp).mkString("\n") + "\n")
      val cp49 = Classpaths.managedJars(RocketMQ49, classpathTypes.value, update.value)
        .map(_.data.getAbsolutePath).mkString(java.io.File.pathSeparator)
      IO.write(target.value / "rocketmq49-java-args",
        (serverFlags :+ "-cp" :+ cp49).mkString("\n") + "\n")
      val cpProxy = Classpaths.managedJars(RocketMQProxy, classpathTypes.value, update.value)
        .map(_.data.getAbsolutePath).mkString(java.io.File.pathSeparator)
      IO.write(target.value / "proxy-java-args",
        (JavaModuleOptions.all :+ "-cp" :+ cpProxy).mkString("\n") + "\n")
      // The file system test_exactly_once_kill.py halts a driver with, alone in a jar for the
      // driver's classpath.
      val classes = (Test / classDirectory).value
      val haltFs = (classes ** "DecisionHaltFileSystem*.class").get.map(f =>
        f -> IO.relativize(classes, f).get)
      IO.zip(haltFs, target.value / "decision-halt-fs.jar", None)
      out
    }
  )

lazy val exportSmoke =
  taskKey[File]("Packages the Scala smoke suite and writes the java command line to run it")

/**
 * The Scala smoke suite of the compatibility matrix (it-tests/src/smoke: the public DataFrame API
 * only), built against Spark `spark` with Scala `scala`. `exportSmoke` copies its jar to
 * target/smoke/ (where python/tests/test_scala_smoke.py submits it on each pyspark of the matrix)
 * and writes target/smoke/<project>-java-args: JVM flags and a classpath with Spark `spark` itself,
 * to run it without a pyspark (Spark 3.5 with Scala 2.13, which no pyspark ships).
 */
def smokeFor(id: String, scala: String, spark: String, javaRelease: Int): Project =
  Project(id, file(s"it-tests/smoke/$id"))
    .settings(sparkSettings(spark, javaRelease))
    .settings(
      name := s"rocketmq-spark-$id",
      scalaVersion := scala,
      publish / skip := true,
      // The Spark 4 build adds the checks whose API Spark 3.5 lacks (loaded by name from the shared
      // suite).
      Compile / unmanagedSourceDirectories := {
        val smoke = (ThisBuild / baseDirectory).value / "it-tests" / "src" / "smoke"
        Seq(smoke / "scala") ++ (if (spark.startsWith("3.")) Nil else Seq(smoke / "spark-4"))
      },
      Test / unmanagedSourceDirectories := Nil,
      exportSmoke := {
        val out = (ThisBuild / baseDirectory).value / "target" / "smoke"
        val jar = out / s"$id.jar"
        IO.copyFile((Compile / packageBin).value, jar)
        val cp = (jar +: (Compile / dependencyClasspath).value.map(_.data)).map(_.getAbsolutePath)
          .mkString(java.io.File.pathSeparator)
        IO.write(out / s"$id-java-args",
          (JavaModuleOptions.all :+ "-cp" :+ cp).mkString("\n") + "\n")
        jar
      }
    )

lazy val smokeSpark4 = smokeFor("smokeSpark4", scala213Version, sparkVersion, 17)
lazy val smokeSpark35_212 = smokeFor("smokeSpark35_212", scala212Version, spark35Version, 8)
lazy val smokeSpark35_213 = smokeFor("smokeSpark35_213", scala213Version, spark35Version, 17)

// The Kafka broker's own classpath, kept apart from Spark's (they disagree on Jackson and Scala
// modules).
lazy val KafkaServer = config("kafkaServer")
// Spark's Kafka connector for the realtime section's pyspark (its `spark.jars`).
lazy val RealTimeKafkaConnector = config("realTimeKafkaConnector")
lazy val exportBenchClasspath =
  taskKey[File]("Writes the classpaths of the bench and of its Kafka broker")

lazy val bench = (project in file("bench"))
  .dependsOn(connector, itTests % "compile->test")
  .configs(KafkaServer, RealTimeKafkaConnector)
  .settings(commonSettings)
  .settings(
    name := "rocketmq-spark-bench",
    publish / skip := true,
    libraryDependencies ++= Seq(
      "org.apache.spark" %% "spark-sql" % sparkVersion,
      "org.apache.spark" %% "spark-sql-kafka-0-10" % sparkVersion,
      "org.apache.kafka" %% "kafka" % kafkaVersion % KafkaServer,
      // The broker logs through SLF4J 1.7 (what its POM brings); without a binding it would log
      // nothing.
      "org.slf4j" % "slf4j-simple" % "1.7.36" % KafkaServer,
      "org.apache.spark" %% "spark-sql-kafka-0-10" % realTimeKafkaConnectorVersion %
        RealTimeKafkaConnector
    ),
    // `build/sbt bench/exportBenchClasspath` writes target/bench-java-args (the bench's JVM flags
    // and classpath) and target/kafka-classpath (the Kafka broker's), which dev/bench reads.
    exportBenchClasspath := {
      val cp = (Compile / fullClasspath).value.map(_.data.getAbsolutePath).mkString(
        java.io.File.pathSeparator)
      // Of the connector's resolution only its own jars and those pyspark lacks (Spark, Hadoop and
      // the compression libraries come with pyspark), as spark-submit --packages would add them.
      val realTimeKafkaJars =
        Classpaths.managedJars(RealTimeKafkaConnector, classpathTypes.value, update.value)
          .map(_.data).filter { jar =>
            Seq("spark-sql-kafka-0-10", "spark-token-provider-kafka-0-10", "kafka-clients",
              "commons-pool2")
              .exists(jar.getName.startsWith)
          }
      val flags = JavaModuleOptions.all ++ plainTextServers ++ Seq(
        s"-Dbench.kafkaVersion=$kafkaVersion",
        s"-Dbench.realTimeSparkVersion=$realTimeSparkVersion",
        s"-Dbench.realTimeKafkaJars=${realTimeKafkaJars.map(_.getAbsolutePath).mkString(",")}",
        "-cp", cp)
      IO.write(target.value / "bench-java-args", flags.mkString("\n") + "\n")
      val kafka = Classpaths.managedJars(KafkaServer, classpathTypes.value, update.value)
        .map(_.data.getAbsolutePath).mkString(java.io.File.pathSeparator)
      IO.write(target.value / "kafka-classpath", kafka + "\n")
      target.value / "bench-java-args"
    }
  )
