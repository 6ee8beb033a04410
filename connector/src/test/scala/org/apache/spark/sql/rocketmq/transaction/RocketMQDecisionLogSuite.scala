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

import java.net.URI
import java.nio.file.{Files, FileSystemException}
import java.util.concurrent.{Callable, CountDownLatch, Executors}
import java.util.concurrent.atomic.AtomicInteger

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileAlreadyExistsException, FSDataOutputStream, Path}
import org.apache.hadoop.fs.RawLocalFileSystem
import org.apache.hadoop.fs.permission.FsPermission
import org.apache.hadoop.util.Progressable
import org.scalatest.funsuite.AnyFunSuite

/** The decision log on file systems other than the local disk and HDFS. */
class RocketMQDecisionLogSuite extends AnyFunSuite {

  /**
   * Two drivers racing, epoch after epoch (10 to 59), each making its proposal with `act` at the
   * same moment: both end with the one decision `stored` then reads.
   */
  private def race(proposals: Seq[(RocketMQDecisionLog.Files, RocketMQEpochDecision)])(
      act: (RocketMQDecisionLog.Files, Long, RocketMQEpochDecision) => RocketMQEpochDecision)(
      stored: Long => Option[RocketMQEpochDecision]): Unit = {
    val pool = Executors.newFixedThreadPool(2)
    try {
      (10 until 60).foreach { epoch =>
        val start = new CountDownLatch(1)
        val answers = proposals.map { case (log, proposal) =>
          pool.submit(new Callable[RocketMQEpochDecision] {
            override def call(): RocketMQEpochDecision = {
              start.await()
              act(log, epoch.toLong, proposal)
            }
          })
        }
        start.countDown()
        val decided = answers.map(_.get())
        assert(decided.distinct.size === 1 && stored(epoch) === Some(decided.head),
          s"epoch $epoch: $decided")
      }
    } finally pool.shutdownNow()
  }

  test("a file system without an AbstractFileSystem binding (as gs:// or dbfs:): decisions are " +
    "written, read back, and a second decision for an epoch gets the first") {
    val conf = new Configuration()
    conf.set("fs.nobinding.impl", classOf[NoBindingFileSystem].getName)
    conf.setBoolean("fs.nobinding.impl.disable.cache", true)
    val local = Files.createTempDirectory("decisions-nobinding-").resolve("d")
    val dir = s"nobinding:$local"
    val first = new RocketMQDecisionLog.Files(dir, conf)
    assert(first.read(4) === None)
    val kept = RocketMQEpochDecision("1-a", Map(0 -> 1L, 1 -> 2L))
    assert(first.decide(4, kept) === kept)
    assert(Files.exists(local.resolve("4")), "the decision is not on the file system it was given")
    assert(new RocketMQDecisionLog.Files(dir, conf).read(4) === Some(kept))
    // A driver that looked before the first one wrote records its proposal: it gets the first's.
    val late = new RocketMQDecisionLog.Files(dir, conf)
    assert(late.record(4, RocketMQEpochDecision("2-b", Map(0 -> 7L))) === kept)
    assert(new RocketMQDecisionLog.Files(dir, conf).read(4) === Some(kept))
    first.markCommitted(4, Set(0, 1))
    assert(new RocketMQDecisionLog.Files(dir, conf).committed(4) === Set(0, 1))

    // Two drivers racing, epoch after epoch: both end with the decision the file holds.
    val proposals = Seq("1-zombie" -> 1L, "2-successor" -> 5L).map { case (run, attempt) =>
      new RocketMQDecisionLog.Files(dir, conf) -> RocketMQEpochDecision(run, Map(0 -> attempt))
    }
    race(proposals)(_.decide(_, _))(new RocketMQDecisionLog.Files(dir, conf).read)
    assert(local.toFile.list().forall(!_.endsWith(".tmp")), "temporary files left behind")
  }

  test("a local mount that refuses hard links (as a FUSE mount does): decisions are created in " +
    "place, read back, and a second writer racing for an epoch gets the first decision") {
    val conf = new Configuration()
    val dir = Files.createTempDirectory("decisions-nolinks-").resolve("d")
    val linksTried = new AtomicInteger()
    def refusingLinks() =
      new RocketMQDecisionLog.Files(dir.toString, conf,
        (link, _) => {
          linksTried.incrementAndGet()
          throw new FileSystemException(link.toString, null, "Operation not permitted")
        })
    val first = refusingLinks()
    val kept = RocketMQEpochDecision("1-a", Map(0 -> 1L, 1 -> 2L))
    assert(first.decide(4, kept) === kept)
    assert(linksTried.get() === 1)
    assert(refusingLinks().read(4) === Some(kept))
    // A writer that looked before the first one wrote records its own proposal: it loses.
    val late = refusingLinks()
    assert(late.record(4, RocketMQEpochDecision("2-b", Map(0 -> 7L))) === kept)
    assert(refusingLinks().read(4) === Some(kept))
    // Once refused, a writer stops trying links and creates in place from then on.
    assert(first.decide(5, kept) === kept && linksTried.get() === 2)
    first.markCommitted(4, Set(0, 1))
    assert(refusingLinks().committed(4) === Set(0, 1))

    val proposals = Seq("1-zombie" -> 1L, "2-successor" -> 5L).map { case (run, attempt) =>
      refusingLinks() -> RocketMQEpochDecision(run, Map(0 -> attempt))
    }
    race(proposals)(_.record(_, _))(refusingLinks().read)
    assert(dir.toFile.list().forall(!_.endsWith(".tmp")), "temporary files left behind")
  }
}

/**
 * The local disk under a scheme of its own, registered through `fs.nobinding.impl` alone: Hadoop
 * has no AbstractFileSystem (FileContext) for it, as for gs:// without the connector's optional
 * binding, or dbfs:. Its create-if-absent is atomic, as Google Cloud Storage's connector makes it
 * with a precondition; what it writes is visible while being written, as on a disk.
 */
class NoBindingFileSystem extends RawLocalFileSystem {
  override def getScheme: String = "nobinding"
  override def getUri: URI = URI.create("nobinding:///")

  override def create(f: Path, overwrite: Boolean, bufferSize: Int, replication: Short,
      blockSize: Long, progress: Progressable): FSDataOutputStream = {
    claim(f, overwrite)
    super.create(f, true, bufferSize, replication, blockSize, progress)
  }

  override def create(f: Path, permission: FsPermission, overwrite: Boolean, bufferSize: Int,
      replication: Short, blockSize: Long, progress: Progressable): FSDataOutputStream = {
    claim(f, overwrite)
    super.create(f, permission, true, bufferSize, replication, blockSize, progress)
  }

  // The local file system's own create looks for the file, then opens it: not atomic.
  private def claim(f: Path, overwrite: Boolean): Unit =
    if (!overwrite) {
      try Files.createFile(pathToFile(f).toPath)
      catch {
        case _: java.nio.file.FileAlreadyExistsException =>
          throw new FileAlreadyExistsException(s"$f exists")
      }
    }
}
