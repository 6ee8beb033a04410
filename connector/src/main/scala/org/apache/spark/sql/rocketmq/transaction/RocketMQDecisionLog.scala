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

package org.apache.spark.sql.rocketmq.transaction

import java.io.IOException
import java.nio.ByteBuffer
import java.nio.channels.FileChannel
import java.nio.charset.StandardCharsets
import java.nio.file.StandardOpenOption.{CREATE_NEW, WRITE}
import java.util.concurrent.ConcurrentHashMap

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileContext, Options, Path, UnsupportedFileSystemException}
import org.slf4j.LoggerFactory

/** Which attempt of each partition an epoch committed, and in which run of the query. */
private[rocketmq] final case class RocketMQEpochDecision(run: String, attempts: Map[Int, Long]) {
  def names(origin: RocketMQHalfMessageRecorder.Origin): Boolean =
    origin.run == run && attempts.get(origin.partition).contains(origin.attempt)
}

/**
 * The decisions of an exactly-once write, by epoch. A decision is written once, before any of its
 * half messages is committed, and never changes: an epoch Spark runs again finds it and commits
 * nothing of its second copy. Once the driver has seen the broker confirm the commit of every half
 * message of a partition, it records that too: the broker may still hold a copy of such a message
 * (it copies a half message each time it looks at it), and a check-back about that copy must be
 * answered with a roll back.
 */
private[rocketmq] sealed trait RocketMQDecisionLog {
  def read(epoch: Long): Option[RocketMQEpochDecision]

  /** Records `decision` for `epoch` unless one is there already; returns the one that holds. */
  def decide(epoch: Long, decision: RocketMQEpochDecision): RocketMQEpochDecision

  /** The partitions of `epoch` whose half messages the driver committed, each confirmed. */
  def committed(epoch: Long): Set[Int]

  def markCommitted(epoch: Long, partitions: Set[Int]): Unit

  /**
   * Epochs decided at `sinceMs` or later whose partitions were not all seen committed by the driver
   * (it left them to the broker, or stopped while committing): each with the partitions left, and
   * when it was decided.
   */
  def unconfirmed(sinceMs: Long): Seq[RocketMQDecisionLog.Unconfirmed]
}

private[rocketmq] object RocketMQDecisionLog {

  final case class Unconfirmed(epoch: Long, run: String, partitions: Set[Int], decidedMs: Long)

  /** For a batch job, which runs once: the decisions live as long as the job. */
  final class InMemory extends RocketMQDecisionLog {
    private val decisions = new ConcurrentHashMap[Long, RocketMQEpochDecision]()
    private val done = new ConcurrentHashMap[Long, Set[Int]]()
    override def committed(epoch: Long): Set[Int] = Option(done.get(epoch)).getOrElse(Set.empty)
    override def markCommitted(epoch: Long, partitions: Set[Int]): Unit =
      done.put(epoch, partitions)
    override def read(epoch: Long): Option[RocketMQEpochDecision] = Option(decisions.get(epoch))
    override def decide(epoch: Long, decision: RocketMQEpochDecision): RocketMQEpochDecision = {
      val before = decisions.putIfAbsent(epoch, decision)
      if (before == null) decision else before
    }
    override def unconfirmed(sinceMs: Long): Seq[Unconfirmed] =
      Nil // a batch job's log starts empty
  }

  /**
   * For a streaming query: one small file per epoch in `dir` (beside the checkpoint, on its file
   * system), written whole, so that a reader sees all of it or nothing; a decision's file is never
   * replaced (see `writeOnce`). Text: the run on the first line, then `<partition> <attempt>` per
   * line. The partitions committed go to `<epoch>.committed`, one per line. Every file ends with a
   * line break. `link` makes the hard links of a local disk ([[HardLink]]).
   */
  final class Files(dir: String, hadoopConf: Configuration,
      link: (java.nio.file.Path, java.nio.file.Path) => Unit = HardLink)
    extends RocketMQDecisionLog {
    private val fs = new Path(dir).getFileSystem(hadoopConf)
    private val root = fs.makeQualified(new Path(dir))
    private val cache = new ConcurrentHashMap[Long, RocketMQEpochDecision]()

    override def read(
        epoch: Long): Option[RocketMQEpochDecision] = Option(cache.get(epoch)).orElse {
      readLines(new Path(root, epoch.toString)).map { lines =>
        val attempts = lines.drop(1).map { line =>
          val Array(partition, attempt) = line.split(' ')
          partition.toInt -> attempt.toLong
        }.toMap
        val decision = RocketMQEpochDecision(lines.head, attempts)
        cache.put(epoch, decision)
        decision
      }
    }

    /**
     * The lines of `file`, None if there is none. A file created in place (`createExclusive`) is
     * empty until its one write lands: a file that does not end with a line break is read again.
     */
    private def readLines(file: Path): Option[Seq[String]] = {
      val deadline = System.nanoTime() + IncompleteWaitMs * 1000000L
      while (true) {
        if (!fs.exists(file)) return None
        val in = fs.open(file)
        val text = try new String(readAll(in), StandardCharsets.UTF_8)
        finally in.close()
        if (text.endsWith("\n")) return Some(text.split('\n').filter(_.nonEmpty).toSeq)
        if (System.nanoTime() > deadline) {
          throw new IOException(s"$file is incomplete after $IncompleteWaitMs ms: a driver " +
            "created it and stopped before writing it, so no run acted on it. Delete it once no " +
            "other run of the query is alive.")
        }
        Thread.sleep(50)
      }
      throw new IllegalStateException("unreachable")
    }

    /**
     * The whole stream (InputStream.readAllBytes is newer than the Java 8 the Spark 3.5 build
     * targets).
     */
    private def readAll(in: java.io.InputStream): Array[Byte] = {
      val out = new java.io.ByteArrayOutputStream()
      val buffer = new Array[Byte](4096)
      var n = in.read(buffer)
      while (n >= 0) { out.write(buffer, 0, n); n = in.read(buffer) }
      out.toByteArray
    }

    private val committedCache = new ConcurrentHashMap[Long, Set[Int]]()

    override def committed(epoch: Long): Set[Int] = Option(committedCache.get(epoch)).getOrElse {
      readLines(new Path(root, s"$epoch.committed")).fold(Set.empty[Int]) { lines =>
        val partitions = lines.map(_.toInt).toSet
        committedCache.put(epoch, partitions)
        partitions
      }
    }

    override def markCommitted(epoch: Long, partitions: Set[Int]): Unit = {
      write(s"$epoch.committed", partitions.toSeq.sorted.map(_.toString), s"-${System.nanoTime()}")
      committedCache.put(epoch, partitions)
    }

    /**
     * Writes `lines` to `name` in `root` whole: to a temporary file first, then renamed over any
     * earlier one.
     */
    private def write(name: String, lines: Seq[String], tempSuffix: String): Unit = {
      val temp = writeTemp(name, text(lines), tempSuffix)
      if (!fs.rename(temp, new Path(root, name))) {
        throw new IOException(s"could not record the sink's $name in $root")
      }
    }

    private def text(lines: Seq[String]): Array[Byte] =
      lines.mkString("", "\n", "\n").getBytes(StandardCharsets.UTF_8)

    private def writeTemp(name: String, bytes: Array[Byte], tempSuffix: String): Path = {
      fs.mkdirs(root)
      val temp = new Path(root, s".$name$tempSuffix.tmp")
      val out = fs.create(temp, true)
      try {
        out.write(bytes)
        out.hsync()
      } finally out.close()
      temp
    }

    private val local = root.toUri.getScheme == "file"

    // FileContext needs an AbstractFileSystem for the scheme: gs:// has one only if configured,
    // dbfs: none.
    private lazy val fileContext: Option[FileContext] =
      try Some(FileContext.getFileContext(root.toUri, hadoopConf))
      catch { case _: UnsupportedFileSystemException => None }

    @volatile private var linksRefused = false

    /**
     * Writes `lines` to `name` in `root` whole, unless a file of that name is there: then writes
     * nothing and returns false. Two drivers racing (a zombie beside its successor) cannot both
     * succeed: on a local disk the file is a hard link made to the written temporary file (link
     * fails when the name exists); with a FileContext, a rename that refuses to overwrite (atomic
     * on HDFS). With neither (a mount without hard links, a scheme without FileContext), see
     * `createExclusive`.
     */
    private def writeOnce(name: String, lines: Seq[String], tempSuffix: String): Boolean = {
      val target = new Path(root, name)
      val bytes = text(lines)
      if (local && !linksRefused) {
        val temp = writeTemp(name, bytes, tempSuffix)
        try { link(localPath(target), localPath(temp)); true }
        catch {
          case _: java.nio.file.FileAlreadyExistsException => false
          case e @ (_: IOException | _: UnsupportedOperationException) =>
            linksRefused = true
            log.warn(s"$root takes no hard links ($e): the sink's decisions are created in place")
            createExclusive(target, bytes)
        } finally fs.delete(temp, false)
      } else if (!local && fileContext.isDefined) {
        val temp = writeTemp(name, bytes, tempSuffix)
        try { fileContext.get.rename(temp, target, Options.Rename.NONE); true }
        catch { case _: org.apache.hadoop.fs.FileAlreadyExistsException => false }
        finally fs.delete(temp, false)
      } else createExclusive(target, bytes)
    }

    private def localPath(path: Path) = java.nio.file.Paths.get(path.toUri)

    /**
     * Creates `target` holding `bytes` unless it exists (false), in one write: as atomic as the
     * exclusive create of the file system (the kernel's on a local mount, the FileSystem's `create`
     * without overwrite elsewhere; docs/exactly-once.md says where that holds). Until the write
     * lands, a reader may find the file empty.
     */
    private def createExclusive(target: Path, bytes: Array[Byte]): Boolean = {
      fs.mkdirs(root)
      try {
        if (local) {
          val channel = FileChannel.open(localPath(target), CREATE_NEW, WRITE)
          try {
            val buffer = ByteBuffer.wrap(bytes)
            while (buffer.hasRemaining) channel.write(buffer)
            channel.force(true)
          } finally channel.close()
        } else {
          // Closed, not synced: an object store stores an object at close, a sync may store a part.
          val out = fs.create(target, false)
          try out.write(bytes)
          finally out.close()
        }
        true
      } catch {
        case _: java.nio.file.FileAlreadyExistsException |
            _: org.apache.hadoop.fs.FileAlreadyExistsException => false
        // Google Cloud Storage's connector checks the name again as it stores the object: a writer
        // that lost the race between the two checks fails at close ("412 Precondition Failed").
        case _: IOException if fs.exists(target) => false
      }
    }

    override def decide(epoch: Long, decision: RocketMQEpochDecision): RocketMQEpochDecision =
      read(epoch).getOrElse(record(epoch, decision))

    /**
     * Records `decision` for `epoch` unless another driver recorded one since this one looked:
     * returns the one that holds.
     */
    private[transaction] def record(epoch: Long, decision: RocketMQEpochDecision)
        : RocketMQEpochDecision = {
      val lines = decision.run +: decision.attempts.toSeq.sorted.map { case (p, a) => s"$p $a" }
      if (writeOnce(epoch.toString, lines, s".${decision.run}")) {
        cache.put(epoch, decision)
        if (epoch % RetainEpochs == 0) prune(epoch)
        decision
      } else {
        read(epoch).getOrElse(
          throw new IOException(s"the sink's decision of epoch $epoch in $root vanished"))
      }
    }

    override def unconfirmed(sinceMs: Long): Seq[Unconfirmed] =
      if (!fs.exists(root)) Nil
      else fs.listStatus(root).toSeq.flatMap { status =>
        val name = status.getPath.getName
        if (name.nonEmpty && name.length < 19 && name.forall(_.isDigit) &&
          status.getModificationTime >= sinceMs) {
          read(name.toLong).flatMap { decision =>
            val left = decision.attempts.keySet -- committed(name.toLong)
            if (left.isEmpty) None
            else Some(Unconfirmed(name.toLong, decision.run, left, status.getModificationTime))
          }
        } else None
      }.sortBy(_.epoch)

    /**
     * Deletes the decisions of epochs more than [[RetainEpochs]] before `epoch` that are also older
     * than a day: by then the broker has long stopped asking about their half messages.
     */
    private def prune(epoch: Long): Unit = {
      val dayAgo = System.currentTimeMillis() - 24L * 3600 * 1000
      fs.listStatus(root).foreach { status =>
        val number = status.getPath.getName.stripSuffix(".committed")
        if (number.nonEmpty && number.forall(_.isDigit) && number.length < 19 &&
          number.toLong < epoch - RetainEpochs && status.getModificationTime < dayAgo) {
          fs.delete(status.getPath, false)
          cache.remove(number.toLong)
          committedCache.remove(number.toLong)
        }
      }
    }
  }

  /** A hard link named `link` to the file `existing`. */
  val HardLink: (java.nio.file.Path, java.nio.file.Path) => Unit = { (link, existing) =>
    java.nio.file.Files.createLink(link, existing)
    ()
  }

  /** Decisions kept at least (by count; see [[Files]]). */
  val RetainEpochs = 1000L

  /** How long a file not yet whole is read again (its writer has one write left to make). */
  private val IncompleteWaitMs = 5000L

  private val log = LoggerFactory.getLogger(classOf[RocketMQDecisionLog])
}
