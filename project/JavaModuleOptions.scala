/** The JVM flags Spark 4 passes to its own JVMs on Java 17 (module opens), plus what RocketMQ's store needs. */
object JavaModuleOptions {
  val opens: Seq[String] = Seq(
    "java.lang",
    "java.lang.invoke",
    "java.lang.reflect",
    "java.io",
    "java.net",
    "java.nio",
    "java.util",
    "java.util.concurrent",
    "java.util.concurrent.atomic",
    "jdk.internal.ref",
    "sun.nio.ch",
    "sun.nio.cs",
    "sun.security.action",
    "sun.util.calendar"
  ).map(pkg => s"--add-opens=java.base/$pkg=ALL-UNNAMED")

  val all: Seq[String] = Seq("-XX:+IgnoreUnrecognizedVMOptions") ++ opens ++ Seq(
    "-Djdk.reflect.useDirectMethodHandle=false",
    "-Dio.netty.tryReflectionSetAccessible=true"
  )
}
