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
import java.util.zip.ZipFile

import scala.collection.JavaConverters._

import sbt._
import sbtassembly.{Assembly, CustomMergeStrategy, MergeStrategy, PathList}
import com.eed3si9n.jarjarabrams.ShadeRule

/**
 * What the self-contained assembly jar does with rocketmq-client's dependencies: every third-party
 * package is moved under our own prefix so it can never meet Spark's netty, guava or jackson.
 */
object ShadedDependencies {
  val prefix = "org.apache.spark.sql.rocketmq.shaded"

  private val relocated = Seq(
    "io.netty", "com.google", "com.alibaba", "io.grpc", "io.opentelemetry", "io.perfmark",
    "io.prometheus", "okhttp3", "okio", "kotlin", "org.jetbrains", "org.intellij",
    "org.apache.commons", "org.yaml", "org.reflections", "javassist", "org.checkerframework",
    "org.codehaus", "android", "com.squareup", "javax.annotation"
  )

  val rules: Seq[ShadeRule] =
    relocated.map(pkg => ShadeRule.rename(s"$pkg.**" -> s"$prefix.$pkg.@1").inAll)

  /**
   * For the Scala 2.12 build: scala-collection-compat (what gives 2.12 the `scala.jdk` converters
   * 2.13 has built in), which Spark 3.5 does not ship, moved under our prefix too, so it never
   * meets another copy.
   */
  val scala212CompatRules: Seq[ShadeRule] = Seq("scala.collection.compat", "scala.jdk")
    .map(pkg => ShadeRule.rename(s"$pkg.**" -> s"$prefix.$pkg.@1").inAll)

  def mergeStrategy(fallback: String => MergeStrategy): String => MergeStrategy = {
    // Service registrations for frameworks we do not ship (Spark's own jersey would find them).
    // (RocketMQ's own shaded slf4j finds its logback through one of the kept ones.)
    case PathList("META-INF", "services", name)
        if !name.startsWith("org.apache.spark.sql.rocketmq") &&
          !name.startsWith("org.apache.rocketmq") &&
          name != "org.apache.spark.sql.sources.DataSourceRegister" =>
      MergeStrategy.discard
    case PathList("META-INF", "services", _*) => MergeStrategy.filterDistinctLines
    case PathList("META-INF", "native", _*) => MergeStrategy.discard
    case PathList("META-INF", "native-image", _*) => MergeStrategy.discard
    case PathList("META-INF", "versions", _*) => MergeStrategy.discard
    case PathList("META-INF", xs @ _*) if xs.lastOption.exists { f =>
          val n = f.toLowerCase;
          n.endsWith(".sf") || n.endsWith(".dsa") || n.endsWith(".rsa") ||
          n == "manifest.mf" || n == "index.list" || n == "dependencies"
        } => MergeStrategy.discard
    // Our LICENSE and NOTICE stay META-INF/LICENSE and META-INF/NOTICE; a bundled library's go,
    // unchanged, under META-INF/licenses/<group>.<artifact>/ (its NOTICE text is also in ours: see
    // assemblyLegalFiles).
    case path if isLegalFile(path) => CustomMergeStrategy.rename(legalFileTarget)
    case PathList("META-INF", "io.netty.versions.properties") => MergeStrategy.discard
    case PathList("META-INF", xs @ _*) if xs.lastOption.exists(_.endsWith(".kotlin_module")) =>
      MergeStrategy.discard
    case PathList("META-INF", "maven", _*) => MergeStrategy.discard
    case "module-info.class" => MergeStrategy.discard
    case x if x.endsWith("/module-info.class") => MergeStrategy.discard
    case x if x.endsWith(".proto") => MergeStrategy.discard
    case "rmq.client.logback.xml" => MergeStrategy.first
    case x => fallback(x)
  }

  /**
   * LICENSE*, LICENCE* and NOTICE* files (and directories) under META-INF, or at the root of a jar.
   */
  def isLegalFile(path: String): Boolean = {
    val parts = path.split('/').toSeq
    def legal(name: String): Boolean =
      Seq("license", "licence", "notice").exists(name.toLowerCase.startsWith)
    val placed = parts.size == 1 || (parts.size > 1 && parts.head == "META-INF")
    !path.endsWith(".class") && placed && parts.drop(if (parts.size == 1) 0 else 1).exists(legal)
  }

  private def legalFileTarget(dependency: Assembly.Dependency): String = dependency match {
    case library: Assembly.Library =>
      val m = library.moduleCoord
      val dir = if (m.organization.isEmpty) m.name else s"${m.organization}.${m.name}"
      s"META-INF/licenses/$dir/${library.target.stripPrefix("META-INF/")}"
    case own => own.target
  }

  /**
   * Writes the assembly's own META-INF/LICENSE and META-INF/NOTICE under `dir`, a directory for the
   * assembly's classpath: the project's LICENSE, and its NOTICE followed by every library in
   * `bundled` (and any library a bundled jar embeds) with the licences its POM declares, then the
   * text of every notice file those jars ship.
   */
  def assemblyLegalFiles(dir: File, root: File, jarName: String, bundled: Seq[(ModuleID, File)],
      report: UpdateReport): File = {
    val declared: Map[(String, String, String), Seq[(String, Option[String])]] =
      report.configurations.flatMap(_.modules).map { m =>
        (m.module.organization, m.module.name, m.module.revision) -> m.licenses.toSeq
      }.toMap
    def describe(licences: Seq[(String, Option[String])]): String =
      if (licences.isEmpty) "licence not declared in its POM"
      else licences.map { case (name, url) => name + url.fold("")(u => s" <$u>") }.mkString("; ")
    // One entry per module (native libraries come as several jars of one module, one per platform).
    val libraries = bundled.groupBy { case (m, _) =>
      (m.organization, m.name, m.revision)
    }.toSeq.sortBy(_._1)
    val listed = libraries.map { case (key @ (org, name, revision), jars) =>
      val embedded = jars.flatMap { case (_, jar) =>
        embeddedModules(jar, org, name)
      }.distinct.map {
        case (coordinates, licences) => s"\n    embeds $coordinates: ${describe(licences)}"
      }
      s"$org:$name:$revision\n    ${describe(declared.getOrElse(key, Nil))}" + embedded.mkString
    }
    // Notice files anywhere in the jars (not only META-INF: okhttp ships one beside a data file it
    // bundles).
    val notices = libraries.flatMap { case ((org, name, _), jars) =>
      jars.flatMap { case (_, jar) =>
        withJar(jar) { zip =>
          zip.entries.asScala.toList
            .filter(e =>
              !e.isDirectory && e.getName.split('/').last.toLowerCase.startsWith("notice"))
            .map(e =>
              (s"$org:$name (${e.getName})", read(zip, e.getName).replace("\r\n", "\n").trim))
        }
      }
    }.distinct
    val noticeTexts = notices.groupBy(_._2).toSeq.sortBy { case (_, from) => from.head._1 }.map {
      case (text, from) => from.map(_._1).sorted.mkString("From ", ",\n     ", ":") + "\n\n" + text
    }
    val rule = "-" * 100
    val notice = IO.read(root / "NOTICE", StandardCharsets.UTF_8).trim + "\n\n" + rule + "\n" +
      s"""Bundled third-party software
         |
         |$jarName bundles the libraries below, each under its own licence,
         |as its POM declares it. Their packages, except Apache RocketMQ's own (org.apache.rocketmq,
         |and the logging it ships under io.github.aliyunmq), are relocated under $prefix.
         |The licence and notice files the libraries ship are kept, unchanged, under
         |META-INF/licenses/<group>.<artifact>/; the text of their notices follows the list.
         |""".stripMargin + "\n" + listed.mkString("\n") + "\n\n" + rule + "\n" +
      "Notices of the bundled libraries\n\n" + noticeTexts.mkString("\n\n" + rule + "\n") + "\n"
    // Rewritten only when changed: the assembly's cache goes by modification times.
    def update(file: File, bytes: Array[Byte]): Unit =
      if (!file.isFile || !java.util.Arrays.equals(IO.readBytes(file), bytes)) IO.write(file, bytes)
    update(dir / "META-INF" / "LICENSE", IO.readBytes(root / "LICENSE"))
    update(dir / "META-INF" / "NOTICE", notice.getBytes(StandardCharsets.UTF_8))
    dir
  }

  /**
   * Licences of embedded libraries whose own pom.xml inherits them from a parent POM, as those
   * parents declare them (RocketMQ's logging jars embed logback and slf4j).
   */
  private val inheritedLicences: Map[String, Seq[(String, Option[String])]] = Map(
    "ch.qos.logback" ->
      Seq("Eclipse Public License v1.0" -> Some("https://www.eclipse.org/legal/epl-v10.html"),
        "GNU Lesser General Public License v2.1" ->
          Some("https://www.gnu.org/licenses/old-licenses/lgpl-2.1.html")),
    "org.slf4j" -> Seq("MIT License" -> Some("https://opensource.org/licenses/MIT"))
  )

  /**
   * Other modules a jar carries (shaded jars keep their META-INF/maven/<group>/<artifact>/pom.xml).
   */
  private def embeddedModules(jar: File, org: String, name: String)
      : Seq[(String, Seq[(String, Option[String])])] =
    withJar(jar) { zip =>
      val PomXml = "META-INF/maven/([^/]+)/([^/]+)/pom.xml".r
      zip.entries.asScala.toList.map(_.getName).sorted.collect {
        case path @ PomXml(g, a) if (g, a) != ((org, name)) =>
          val pom = scala.xml.XML.loadString(read(zip, path))
          val properties = Option(zip.getEntry(s"META-INF/maven/$g/$a/pom.properties")).map(e =>
            read(zip, e.getName))
          val version = properties.flatMap(_.linesIterator.find(_.startsWith("version=")))
            .map(_.stripPrefix("version=").trim)
            .getOrElse(((pom \ "version") ++ (pom \ "parent" \ "version")).map(
              _.text.trim).headOption.getOrElse("?"))
          val licences = (pom \ "licenses" \ "license").map { l =>
            (l \ "name").text.trim -> Option((l \ "url").text.trim).filter(_.nonEmpty)
          }
          s"$g:$a:$version" ->
            (if (licences.nonEmpty) licences else inheritedLicences.getOrElse(g, Nil))
      }
    }

  private def withJar[T](jar: File)(f: ZipFile => T): T = {
    val zip = new ZipFile(jar)
    try f(zip)
    finally zip.close()
  }

  private def read(zip: ZipFile, path: String): String =
    new String(IO.readBytes(zip.getInputStream(zip.getEntry(path))), StandardCharsets.UTF_8)
}
