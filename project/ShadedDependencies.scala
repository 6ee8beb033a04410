import sbtassembly.{MergeStrategy, PathList}
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

  val rules: Seq[ShadeRule] = relocated.map(pkg => ShadeRule.rename(s"$pkg.**" -> s"$prefix.$pkg.@1").inAll)

  def mergeStrategy(fallback: String => MergeStrategy): String => MergeStrategy = {
    // Service registrations for frameworks we do not ship (Spark's own jersey would find them).
    // (RocketMQ's own shaded slf4j finds its logback through one of the kept ones.)
    case PathList("META-INF", "services", name) if !name.startsWith("org.apache.spark.sql.rocketmq") &&
          !name.startsWith("org.apache.rocketmq") && name != "org.apache.spark.sql.sources.DataSourceRegister" =>
      MergeStrategy.discard
    case PathList("META-INF", "services", _*) => MergeStrategy.filterDistinctLines
    case PathList("META-INF", "native", _*) => MergeStrategy.discard
    case PathList("META-INF", "native-image", _*) => MergeStrategy.discard
    case PathList("META-INF", "versions", _*) => MergeStrategy.discard
    case PathList("META-INF", xs @ _*) if xs.lastOption.exists { f =>
          val n = f.toLowerCase; n.endsWith(".sf") || n.endsWith(".dsa") || n.endsWith(".rsa") ||
          n == "manifest.mf" || n == "index.list" || n == "dependencies"
        } => MergeStrategy.discard
    case PathList("META-INF", xs @ _*) if xs.lastOption.exists(_.toLowerCase.startsWith("license")) =>
      MergeStrategy.concat
    case PathList("META-INF", xs @ _*) if xs.lastOption.exists(_.toLowerCase.startsWith("notice")) =>
      MergeStrategy.concat
    case PathList("META-INF", "io.netty.versions.properties") => MergeStrategy.discard
    case PathList("META-INF", xs @ _*) if xs.lastOption.exists(_.endsWith(".kotlin_module")) => MergeStrategy.discard
    case PathList("META-INF", "maven", _*) => MergeStrategy.discard
    case "module-info.class" => MergeStrategy.discard
    case x if x.endsWith("/module-info.class") => MergeStrategy.discard
    case x if x.endsWith(".proto") => MergeStrategy.discard
    case "rmq.client.logback.xml" => MergeStrategy.first
    case x => fallback(x)
  }
}
