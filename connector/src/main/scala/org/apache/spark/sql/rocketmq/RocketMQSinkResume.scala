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

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.slf4j.LoggerFactory

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.rocketmq.client.RocketMQOptions

/**
 * How a restarted exactly-once stream into a catalog table (`writeStream.toTable`) answers the
 * broker's check-backs from its start, as one started with `format("rocketmq").start()` does
 * through the source's `getTable`. Spark resolves a catalog table without the writer's options, and
 * plans the write only at a micro-batch with rows: a run with no new input would leave the epochs
 * its earlier run decided unanswered until the broker gives them up. So a run records its writer's
 * options beside its checkpoint (credentials never: a run whose writer sets them answers from its
 * first micro-batch), and a listener of the catalog's session, hearing a query start that writes to
 * one of its tables, starts the run's coordinator from them.
 */
private[rocketmq] object RocketMQSinkResume {
  private val log = LoggerFactory.getLogger(getClass)

  private val Credentials =
    Seq(RocketMQOptions.AccessKey, RocketMQOptions.SecretKey, RocketMQOptions.SecurityToken)
      .map(_.key.toLowerCase(Locale.ROOT)).toSet

  private def file(dir: String): Path = new Path(s"$dir/rocketmq-sink/writer-options.properties")

  /**
   * Records `writerOptions` (but `checkpointLocation`) beside checkpoint `dir`, unless they carry
   * credentials; again when a run's options differ from the recorded ones (a new name server, say).
   * A failure is logged: the run then answers from its first micro-batch.
   */
  def record(dir: String, writerOptions: Map[String, String], hadoopConf: Configuration): Unit =
    if (!writerOptions.keys.exists(k => Credentials(k.toLowerCase(Locale.ROOT)))) {
      try {
        val toRecord = writerOptions.filter { case (k, _) =>
          !k.equalsIgnoreCase("checkpointLocation")
        }
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

  /** The writer's options recorded beside checkpoint `dir`, if any. */
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

  /** Listens once to the queries started in `session` (a catalog's). */
  def listen(session: SparkSession): Unit = RocketMQRunEvents.listenForStarts(session)

  /**
   * Starts the coordinator of query `queryId`'s run `runId` if it writes to a catalog table
   * exactly-once and its earlier run recorded its writer's options. Spark's query object says its
   * sink and checkpoint only through its internal classes ([[RocketMQSparkInternals]]); anything
   * missing is logged, and the run answers from its first micro-batch.
   */
  def resume(session: SparkSession, queryId: String, runId: String): Unit =
    try {
      Option(session.streams.get(queryId)).foreach { query =>
        val execution = RocketMQSparkInternals.executionOf(query)
        RocketMQSparkInternals.sinkOf(execution) match {
          case table: RocketMQCatalogTable =>
            val hadoopConf = session.sessionState.newHadoopConf()
            // Where the sink kept its state: the writer's checkpointLocation, else its own place
            // under the root.
            val dirs = Seq(RocketMQSparkInternals.checkpointRootOf(execution)) ++
              session.conf.getOption("spark.sql.streaming.checkpointLocation").map(r =>
                s"$r/rocketmq-sink-$queryId")
            dirs.iterator.flatMap(dir => recorded(dir, hadoopConf).map(dir -> _)).take(1).foreach {
              case (dir, writerOptions) =>
                SparkSession.setActiveSession(session)
                table.resumeStream(writerOptions, queryId, runId, dir)
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
}
