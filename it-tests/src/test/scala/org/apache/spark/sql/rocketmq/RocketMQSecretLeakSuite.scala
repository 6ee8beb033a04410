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

import java.io.{PrintWriter, StringWriter}
import java.nio.charset.StandardCharsets.{ISO_8859_1, UTF_8}
import java.nio.file.{Files, Path, Paths}
import java.util.concurrent.ConcurrentLinkedQueue

import scala.jdk.CollectionConverters._

import org.apache.logging.log4j.{Level, LogManager}
import org.apache.logging.log4j.core.{LogEvent, LoggerContext}
import org.apache.logging.log4j.core.appender.AbstractAppender
import org.apache.logging.log4j.core.config.Property

import org.apache.spark.scheduler.{SparkListener, SparkListenerEvent}
import org.apache.spark.sql.execution.QueryExecution
import org.apache.spark.sql.streaming.Trigger
import org.apache.spark.sql.util.QueryExecutionListener

/**
 * Runs secured queries end to end (credentials from the Spark configuration and from options, a
 * security token, a batch write (traced) and read, a stream from topic to topic, and failures with
 * wrong and incomplete credentials) with every log at DEBUG, then searches what a user or an
 * operator could see for the secrets: every log line (Spark's and RocketMQ's client log),
 * `explain()` output, the plans and events behind the Spark UI's SQL page, its environment page,
 * the streaming progress JSON, the checkpoint's files and the error texts with their stack traces.
 */
class RocketMQSecretLeakSuite extends RocketMQSparkSuiteBase {
  import testImplicits._

  private val confUser = TestSecurity.newUser("conf")
  private val confToken = s"conf-token-${java.util.UUID.randomUUID()}"
  private val optionUser = TestSecurity.newUser("opt")
  private val optionToken = s"opt-token-${java.util.UUID.randomUUID()}"
  private val wrongSecret = s"wrong-secret-${java.util.UUID.randomUUID()}"
  private val loneSecret = s"lone-secret-${java.util.UUID.randomUUID()}"

  /**
   * The configuration's credentials, given as `spark-submit --conf` gives them: as JVM system
   * properties.
   */
  private val confCredentials = Map("spark.rocketmq.accessKey" -> confUser.accessKey,
    "spark.rocketmq.secretKey" -> confUser.secretKey, "spark.rocketmq.securityToken" -> confToken)

  override protected def newRocketMQ(): EmbeddedRocketMQ = {
    val mq = new EmbeddedRocketMQ(secured = true).start()
    Runtime.getRuntime.addShutdownHook(new Thread(() => mq.discard()))
    mq.createUser(confUser, TestSecurity.ReadWrite)
    mq.createUser(optionUser, TestSecurity.ReadWrite)
    confCredentials.foreach { case (k, v) =>
      System.setProperty(k, v)
    } // read when the session starts
    mq
  }

  override protected def afterAll(): Unit =
    try confCredentials.keys.foreach(System.clearProperty)
    finally super.afterAll()

  private def optionCredentials: Map[String, String] = optionUser.options +
    ("securityToken" -> optionToken)

  /** Every log event of the JVM from any logger, formatted, with its stack trace. */
  private final class Capture
    extends AbstractAppender("secret-leak-capture", null, null, true, Property.EMPTY_ARRAY) {
    val lines = new ConcurrentLinkedQueue[String]()
    override def append(event: LogEvent): Unit = {
      lines.add(s"${event.getLoggerName}: ${event.getMessage.getFormattedMessage}")
      Option(event.getThrown).foreach(t => lines.add(stackTrace(t)))
    }
  }

  private def stackTrace(t: Throwable): String = {
    val out = new StringWriter()
    t.printStackTrace(new PrintWriter(out))
    out.toString
  }

  private def filesUnder(dir: Path): Seq[(Path, String)] =
    if (!Files.exists(dir)) Nil
    else Files.walk(dir).iterator().asScala.filter(Files.isRegularFile(_)).map { f =>
      f -> new String(Files.readAllBytes(f), ISO_8859_1)
    }.toSeq

  test(
    "a secured query end to end: no secret or token in logs, plans, UI data, progress, " +
      "checkpoint or errors") {
    val (source, sink) = (rocketmq.newTopic("leak-src"), rocketmq.newTopic("leak-sink"))
    val traceTopic = rocketmq.newTopic("leak-trace")
    Seq(source, sink).foreach(rocketmq.createTopic(_, queues = 2))
    rocketmq.createTopic(traceTopic, queues = 1)

    val capture = new Capture
    val context = LogManager.getContext(false).asInstanceOf[LoggerContext]
    val root = context.getConfiguration.getRootLogger
    val rootLevel = root.getLevel
    capture.start()
    root.addAppender(capture, Level.ALL, null)
    root.setLevel(Level.DEBUG)
    context.updateLoggers()

    val plans = new ConcurrentLinkedQueue[String]()
    val planListener = new QueryExecutionListener {
      override def onSuccess(funcName: String, qe: QueryExecution, durationNs: Long): Unit =
        plans.add(qe.toString)
      override def onFailure(funcName: String, qe: QueryExecution, exception: Exception): Unit =
        plans.add(qe.toString)
    }
    val events = new ConcurrentLinkedQueue[String]()
    val eventListener = new SparkListener {
      override def onOtherEvent(event: SparkListenerEvent): Unit = events.add(event.toString)
    }
    spark.listenerManager.register(planListener)
    spark.sparkContext.addSparkListener(eventListener)
    val checkpoint = Files.createTempDirectory("leak-checkpoint-")
    val errors = Seq.newBuilder[String]
    val progress = Seq.newBuilder[String]
    try {
      // A batch write and read with credentials in the options (a token too). The write is traced:
      // the secured broker takes its trace records only signed with those credentials.
      (0 until 20).map(i => s"m$i").toDF("body").write.format("rocketmq").mode("append")
        .option("nameServer", rocketmq.nameServer).option("topic", source).options(
          optionCredentials).option("traceEnabled", "true").option("traceTopic", traceTopic)
        .save()
      EmbeddedRocketMQ.awaitCondition("the write's 20 trace records", 60000)(
        RocketMQTraceRecords.tracedIds(rocketmq, traceTopic).size == 20)
      val batch = spark.read.format("rocketmq").option("nameServer", rocketmq.nameServer).option(
        "topic", source)
        .options(optionCredentials).load()
      assert(batch.count() === 20)
      plans.add(batch.queryExecution.explainString(org.apache.spark.sql.execution.ExtendedMode))

      // A stream reading with the configuration's credentials and writing with the options'.
      val query = spark.readStream.format("rocketmq").option("nameServer", rocketmq.nameServer)
        .option("topic", source).option("startingOffsets", "earliest").load()
        .select("body").writeStream.format("rocketmq").option("nameServer", rocketmq.nameServer)
        .option("topic", sink).options(optionCredentials).option("checkpointLocation",
          checkpoint.toString)
        .trigger(Trigger.AvailableNow()).start()
      query.awaitTermination()
      assert(query.exception.isEmpty)
      val explained = new java.io.ByteArrayOutputStream()
      Console.withOut(explained)(query.explain(extended = true))
      plans.add(explained.toString(UTF_8))
      progress ++= query.recentProgress.map(_.prettyJson)
      assert(rocketmq.readAll(sink).size === 20)

      // Failures: a wrong secret (the broker refuses it) and a secret without its key.
      errors += stackTrace(intercept[Throwable](spark.read.format("rocketmq").option("nameServer",
        rocketmq.nameServer)
        .option("topic", source).option("accessKey", optionUser.accessKey).option("secretKey",
          wrongSecret)
        .load().count()))
      errors += stackTrace(intercept[Throwable](spark.read.format("rocketmq").option("nameServer",
        rocketmq.nameServer)
        .option("topic", source).option("accessKey", "").option("secretKey",
          loneSecret).load().count()))
      spark.sparkContext.listenerBus.waitUntilEmpty()
    } finally {
      root.removeAppender(capture.getName)
      root.setLevel(rootLevel)
      context.updateLoggers()
      capture.stop()
      spark.listenerManager.unregister(planListener)
      spark.sparkContext.removeSparkListener(eventListener)
    }

    // The environment page as the UI renders it: Spark redacts what its spark.redaction.regex
    // matches.
    val environment = spark.sparkContext.statusStore.environmentInfo()
    val environmentText = org.apache.spark.util.Utils.redact(spark.sparkContext.getConf,
      environment.sparkProperties ++ environment.systemProperties ++ environment.hadoopProperties)
      .map { case (k, v) => s"$k=$v" }.mkString("\n")
    // RocketMQ's own log of this JVM (a folder of this run's: build.sbt names it; the one of
    // processes is shared).
    val logFolder = Option(System.getProperty("rocketmq.spark.testLogs"))
    assert(logFolder.isDefined,
      "rocketmq.spark.testLogs is not set: build.sbt sets it for the test JVM")
    val clientLogs = filesUnder(Paths.get(logFolder.get))
    val seen: Seq[(String, String)] =
      capture.lines.asScala.toSeq.map("log" -> _) ++ plans.asScala.map("plan" -> _) ++
        events.asScala.map("event" -> _) ++ Seq("environment" -> environmentText) ++
        progress.result().map("progress" -> _) ++ errors.result().map("error" -> _) ++
        filesUnder(checkpoint).map { case (f, text) => s"checkpoint $f" -> text } ++
        clientLogs.map { case (f, text) => s"RocketMQ log $f" -> text }

    // What was searched is there: a search of nothing finds no leak.
    assert(capture.lines.size > 100, "few log lines were captured")
    assert(plans.asScala.exists(_.contains("RocketMQScan")), plans.asScala.mkString("\n"))
    assert(events.asScala.exists(_.contains("SparkListenerSQLExecutionStart")))
    assert(environmentText.contains("spark.rocketmq.secretKey"))
    assert(progress.result().nonEmpty &&
      progress.result().exists(_.contains("RocketMQMicroBatchStream")))
    assert(filesUnder(checkpoint).exists(_._1.toString.contains("offsets")))
    assert(errors.result().exists(_.contains("ROCKETMQ_ACCESS_DENIED")))
    assert(errors.result().exists(_.contains("ROCKETMQ_INCOMPLETE_CREDENTIALS")))

    val secrets =
      Seq(confUser.secretKey, confToken, optionUser.secretKey, optionToken, wrongSecret, loneSecret)
    val leaks = for ((where, text) <- seen; secret <- secrets if text.contains(secret)) yield {
      val at = text.indexOf(secret)
      s"$where: ...${text.substring(math.max(0, at - 200), math.min(text.length, at + 60))}..."
    }
    assert(leaks.isEmpty, s"${leaks.size} leak(s):\n${leaks.take(10).mkString("\n\n")}")
    info(s"searched ${capture.lines.size} log lines, ${plans.size} plans, ${events.size} events, " +
      s"${progress.result().size} progress reports, ${filesUnder(checkpoint).size} checkpoint " +
      s"files, ${clientLogs.size} RocketMQ log file(s), ${errors.result().size} errors")
  }
}
