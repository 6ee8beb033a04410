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

import scala.io.Source
import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.slf4j.LoggerFactory

/**
 * Where a source stood at the end of the last micro-batch Spark recorded as done, read from the
 * query's checkpoint. Spark tells a source that a batch is done (`MicroBatchStream.commit`) only
 * when it plans the next one: a query stopped after a batch never tells it, the checkpoint does.
 *
 * It reads Spark's own files, the one place this connector does: a source's checkpoint is
 * `<root>/sources/<id>`; `<root>/commits/<batch>` marks a batch done; `<root>/offsets/<batch>`
 * holds the batch's end, a version line ("v1" or "v2"), a metadata line, then either one line per
 * source in the order of their ids ("v1", "-" for none) or "<id>:<offset>" lines ("v2"). Anything
 * else (a layout or version Spark does not write today) reads as nothing known.
 */
private[rocketmq] object RocketMQCommittedBatch {
  private val log = LoggerFactory.getLogger(getClass)

  /** The offsets (JSON) of the source at `sourceCheckpoint` at the end of the last done batch. */
  def lastEnd(sourceCheckpoint: String, hadoopConf: Configuration): Option[String] =
    try {
      val source = new Path(sourceCheckpoint)
      val sources = Option(source.getParent).filter(_.getName == "sources")
      sources.flatMap(s => Option(s.getParent)).flatMap { root =>
        val fs = root.getFileSystem(hadoopConf)
        val commits = new Path(root, "commits")
        // Spark's file for batch N is named N (beside it: hidden temporary and checksum files).
        val done = if (fs.exists(commits)) {
          fs.listStatus(commits).map(_.getPath.getName).filter(isBatchId).map(_.toLong)
        } else Array.empty[Long]
        if (done.isEmpty) None
        else {
          val in = fs.open(new Path(root, s"offsets/${done.max}"))
          val lines = try Source.fromInputStream(in, StandardCharsets.UTF_8.name).getLines().toList
          finally in.close()
          endOf(lines, source.getName)
        }
      }
    } catch {
      case NonFatal(e) =>
        log.warn(s"Could not read the last done batch of the source at $sourceCheckpoint: $e")
        None
    }

  private def isBatchId(name: String): Boolean = name.nonEmpty && name.forall(_.isDigit)

  /** This source's end in the lines of an offsets file, `id` being the source's id. */
  def endOf(lines: Seq[String], id: String): Option[String] = lines match {
    case "v1" +: _ +: sources if isBatchId(id) => sources.lift(id.toInt).filter(_ != "-")
    case "v2" +: _ +: sources =>
      sources.collectFirst { case line if line.startsWith(s"$id:") => line.drop(id.length + 1) }
        .filter(_ != "-")
    case _ => None
  }
}
