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

import java.util.{Locale, Properties}

import scala.io.Source
import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.slf4j.LoggerFactory

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.write.LogicalWriteInfo
import org.apache.spark.sql.rocketmq.options.RocketMQOptions
import org.apache.spark.sql.rocketmq.producer.{RocketMQTransactionScope, RocketMQWriteSettings}
import org.apache.spark.sql.rocketmq.transaction.{
  RocketMQCoordinatorSettings, RocketMQDecisionLog, RocketMQTransactionCoordinator,
  RocketMQTransactionRuns
}

/**
 * An exactly-once stream's sink across its runs, as Spark drives it: where the sink keeps its state
 * ([[stateDir]]), the coordinator each micro-batch commits through, and the resume of a restarted
 * run before it plans a batch. Spark plans a streaming write only for a micro-batch with rows,
 * while the broker asks the group's producers about the epochs an earlier run decided but did not
 * see committed: a run that finds no new input would leave them unanswered until the broker gives
 * them up, and their rows would never be delivered. So a restarted run's coordinator starts early:
 * - `format("rocketmq")`: when Spark resolves the sink's table ([[resumeStream]]), from the
 *   writer's options, if they name the checkpoint;
 * - a catalog table (`writeStream.toTable`), which Spark resolves without the writer's options:
 *   each run records them ([[record]]; credentials never: such a run answers from its first
 *   micro-batch), and a listener of the catalog's session, hearing the next run start, starts its
 *   coordinator from them ([[resumeCatalog]]).
 * The runs' states (resumed, started, their coordinators, ended) are [[RocketMQTransactionRuns]].
 */
private[rocketmq] object RocketMQSinkRun {
  private val log = LoggerFactory.getLogger(getClass)

  private val CheckpointOption = "checkpointLocation"
  private val DefaultRoot = "spark.sql.streaming.checkpointLocation"

  /**
   * Where the sink of query `queryId` keeps its state (`rocketmq-sink/` in it): the checkpoint the
   * writer's `checkpointLocation` names, else a directory of its own under the session's default
   * root. None with neither.
   */
  def stateDir(checkpointLocation: Option[String], queryId: String,
      session: Option[SparkSession]): Option[String] =
    checkpointLocation.orElse(
      session.flatMap(_.conf.getOption(DefaultRoot)).map(root => s"$root/rocketmq-sink-$queryId"))

  /** [[stateDir]] of the write Spark describes in `info`. */
  def stateDir(info: LogicalWriteInfo): Option[String] =
    stateDir(Option(info.options().get(CheckpointOption)), info.queryId(),
      SparkSession.getActiveSession)

  /** A coordinator for `scope`, whose decisions live in the sink's state directory `dir`. */
  private def newCoordinator(settings: RocketMQWriteSettings, dir: String)(
      scope: RocketMQTransactionScope): RocketMQTransactionCoordinator =
    new RocketMQTransactionCoordinator(RocketMQCoordinatorSettings.of(settings), scope,
      new RocketMQDecisionLog.Files(s"$dir/rocketmq-sink/decisions",
        SparkSession.active.sessionState.newHadoopConf()))

  /**
   * The coordinator a micro-batch of run `runId` commits through: the run's, unless it was made
   * for other settings (a resume uses the earlier run's options), then one made for these. Closed
   * when the run ends.
   */
  def coordinator(settings: RocketMQWriteSettings, runId: String, dir: String)
      : RocketMQTransactionCoordinator = {
    RocketMQRunEvents.listenForEnds(SparkSession.active.sparkContext)
    RocketMQTransactionRuns.coordinator(runId, RocketMQCoordinatorSettings.of(settings))(
      newCoordinator(settings, dir))
  }

  /**
   * Starts the coordinator of query `queryId`'s next run (`runId` when Spark has named it), whose
   * sink keeps its state in `dir`, if `options` ask for an exactly-once write: the one resume of
   * both paths.
   */
  private def resume(options: RocketMQOptions, queryId: String, runId: Option[String],
      dir: String): Unit =
    if (RocketMQWrite.isExactlyOnce(options)) {
      RocketMQRunEvents.listenForEnds(SparkSession.active.sparkContext)
      runId match {
        case Some(run) =>
          val settings = RocketMQWrite.writeSettings(options, queryId)(
            RocketMQTransactionRuns.scope(queryId, run, _, _))
          RocketMQTransactionRuns.coordinator(run, RocketMQCoordinatorSettings.of(settings))(
            newCoordinator(settings, dir))
        case None =>
          val settings = RocketMQWrite.writeSettings(options, queryId)(
            RocketMQTransactionRuns.resumedScope(queryId, _, _))
          RocketMQTransactionRuns.resume(queryId, RocketMQCoordinatorSettings.of(settings))(
            newCoordinator(settings, dir))
      }
    }

  /**
   * Called when Spark resolves the table of `format("rocketmq")`, before the query starts: a
   * restarted exactly-once stream (its `checkpointLocation` option names a checkpoint that has the
   * query's id) starts its next run's coordinator now. Does nothing for any other table or write; a
   * failure is logged, and the run's first micro-batch then starts the coordinator.
   */
  def resumeStream(options: RocketMQOptions): Unit = {
    val checkpoint =
      options.all.collectFirst { case (k, v) if k.equalsIgnoreCase(CheckpointOption) => v }
    if (RocketMQWrite.isExactlyOnce(options) && checkpoint.isDefined) {
      try {
        SparkSession.getActiveSession.foreach { session =>
          queryIdOf(checkpoint.get, session.sessionState.newHadoopConf()).foreach { queryId =>
            // The run's start, heard at once in this session, names the run the coordinator is for.
            RocketMQRunEvents.listenForStarts(session)
            stateDir(checkpoint, queryId, Some(session)).foreach(resume(options, queryId, None, _))
          }
        }
      } catch {
        case NonFatal(e) =>
          log.warn(
            s"The exactly-once sink of the stream checkpointed at ${checkpoint.get} starts " +
              s"answering the broker's check-backs at its first micro-batch, not now: $e")
      }
    }
  }

  /**
   * The id of the streaming query checkpointed at `dir` (Spark's `metadata` file there), if it has
   * run before.
   */
  private def queryIdOf(dir: String, hadoopConf: Configuration): Option[String] = {
    val file = new Path(dir, "metadata")
    val fs = file.getFileSystem(hadoopConf)
    if (!fs.exists(file)) None
    else {
      val in = fs.open(file)
      val text = try Source.fromInputStream(in, "UTF-8").mkString
      finally in.close()
      QueryIdInMetadata.findFirstMatchIn(text).map(_.group(1))
    }
  }

  private val QueryIdInMetadata = "\"id\"\\s*:\\s*\"([^\"]+)\"".r

  /** Listens once to the queries started in `session` (a catalog's). */
  def listen(session: SparkSession): Unit = RocketMQRunEvents.listenForStarts(session)

  /**
   * Starts the coordinator of query `queryId`'s run `runId` if it writes to a catalog table
   * exactly-once and its earlier run recorded its writer's options. Spark's query object says its
   * sink and checkpoint only through its internal classes ([[RocketMQSparkInternals]]); anything
   * missing is logged, and the run answers from its first micro-batch.
   */
  def resumeCatalog(session: SparkSession, queryId: String, runId: String): Unit =
    try {
      Option(session.streams.get(queryId)).foreach { query =>
        val execution = RocketMQSparkInternals.executionOf(query)
        RocketMQSparkInternals.sinkOf(execution) match {
          case table: RocketMQCatalogTable =>
            val hadoopConf = session.sessionState.newHadoopConf()
            // The execution's checkpoint is the writer's checkpointLocation when it named one;
            // else the sink's own directory under the default root.
            val dirs = Seq(Some(RocketMQSparkInternals.checkpointRootOf(execution)), None)
              .flatMap(stateDir(_, queryId, Some(session)))
            dirs.iterator.flatMap(dir => recorded(dir, hadoopConf).map(dir -> _)).take(1).foreach {
              case (dir, writerOptions) =>
                SparkSession.setActiveSession(session)
                resume(table.resumedOptions(writerOptions), queryId, Some(runId), dir)
            }
          case _ =>
        }
      }
    } catch {
      case NonFatal(e) =>
        log.warn(
          s"Query $queryId: if it writes exactly-once to a RocketMQ catalog table, it answers " +
            s"the broker's check-backs from its first micro-batch, not from its start: $e")
    }

  private val Credentials =
    Seq(RocketMQOptions.AccessKey, RocketMQOptions.SecretKey, RocketMQOptions.SecurityToken)
      .map(_.key.toLowerCase(Locale.ROOT)).toSet

  private def file(dir: String): Path = new Path(s"$dir/rocketmq-sink/writer-options.properties")

  /**
   * Records `writerOptions` (but `checkpointLocation`) in the sink's state directory `dir`, unless
   * they carry credentials; again when a run's options differ from the recorded ones (a new name
   * server, say). A failure is logged: the next run then answers from its first micro-batch.
   */
  def record(dir: String, writerOptions: Map[String, String], hadoopConf: Configuration): Unit =
    if (!writerOptions.keys.exists(k => Credentials(k.toLowerCase(Locale.ROOT)))) {
      try {
        val toRecord = writerOptions.filter { case (k, _) => !k.equalsIgnoreCase(CheckpointOption) }
        if (!recorded(dir, hadoopConf).contains(toRecord)) {
          val path = file(dir)
          val properties = new Properties()
          toRecord.foreach { case (k, v) => properties.setProperty(k, v) }
          val out = path.getFileSystem(hadoopConf).create(path, true)
          try properties.store(out,
              "the writer's options of this exactly-once stream, for its next run")
          finally out.close()
        }
      } catch {
        case NonFatal(e) => log.warn(s"Could not record the writer's options beside $dir: $e")
      }
    }

  /** The writer's options recorded in the sink's state directory `dir`, if any. */
  def recorded(dir: String, hadoopConf: Configuration): Option[Map[String, String]] = {
    val path = file(dir)
    val fs = path.getFileSystem(hadoopConf)
    if (!fs.exists(path)) None
    else {
      val in = fs.open(path)
      val properties = new Properties()
      try properties.load(in)
      finally in.close()
      Some(properties.asScala.toMap)
    }
  }
}
