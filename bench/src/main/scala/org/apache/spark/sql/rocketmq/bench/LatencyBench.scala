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

package org.apache.spark.sql.rocketmq.bench

import java.io.BufferedOutputStream
import java.net.{InetAddress, ServerSocket, Socket}
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, Path}
import java.util.concurrent.{CompletableFuture, ConcurrentLinkedQueue, Executors, TimeUnit}
import java.util.concurrent.atomic.AtomicLong

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{DataFrame, ForeachWriter, Row, SparkSession}
import org.apache.spark.sql.functions.{col, unix_millis}
import org.apache.spark.sql.streaming.{StreamingQueryListener, Trigger}
import org.apache.spark.sql.streaming.StreamingQueryListener.{
  QueryProgressEvent, QueryStartedEvent,
  QueryTerminatedEvent
}

/**
 * End-to-end latency of a micro-batch stream: a producer sends `rate` small messages a second,
 * steadily, and a query at trigger interval 0 reads them into `foreachBatch`, which notes for each
 * message the time it reached the batch (after the batch is collected) minus the time its producer
 * stamped on it. The first `warmupSeconds` of each run are left out. Each run reports p50, p95 and
 * p99.
 *
 * To show where the time goes, it also reports the median of each phase of the micro-batches that
 * read something (Spark's `durationMs`: `latestOffset` asks the source for its end, `walCommit`
 * writes the offset log, `queryPlanning`, `addBatch` runs the job, `commitOffsets` writes the
 * commit log) and how many such batches ran a second.
 *
 * `measureRealTime` runs the same producer against a query under Spark's real-time trigger (batches
 * of `realTimeBatch`), into a `foreach` sink that notes each message as it arrives there; its topic
 * has [[LatencyBench.RealTimeQueues]] queues, one task slot each for the whole batch.
 */
final class LatencyBench(spark: SparkSession, results: BenchResults, scratch: Path, queues: Int,
    rate: Int,
    warmupSeconds: Int, seconds: Int, runs: Int) {

  /**
   * Micro-batch latency of `system`; `send(topic, body)` sends one message without waiting for the
   * broker's answer. With `checkpoints`, the query's checkpoint files are written through that
   * Spark checkpoint file manager (the figures' names say so).
   */
  def measure(system: BenchSystem, checkpoints: Option[LatencyBench.CheckpointFiles] = None)(
      send: (String, Array[Byte]) => Unit): Unit =
    report(system.name, checkpoints,
      (1 to runs).map(_ => withCheckpoints(checkpoints)(once(feed(system, send)))))

  /**
   * Spark's floor: the same query reading Spark's own `socket` source, fed from this JVM over
   * loopback with lines that each hold the time they were written. No broker, and the data is in
   * the driver before a batch starts: what is left is the micro-batch itself. Reported as the
   * system `spark`.
   */
  def measureSparkFloor(checkpoints: Option[LatencyBench.CheckpointFiles] = None): Unit =
    report(LatencyBench.SparkFloor, checkpoints,
      (1 to runs).map(_ => withCheckpoints(checkpoints)(once(socketFeed()))))

  private def report(system: String, checkpoints: Option[LatencyBench.CheckpointFiles],
      perRun: Seq[(Seq[Double], Seq[Map[String, Long]], Seq[Double])]): Unit = {
    val how = checkpoints.map(c => s", ${c.label}").getOrElse("")
    Seq(50.0, 95.0, 99.0).foreach { p =>
      results.add(Figure("latency",
        s"produce to foreachBatch p${p.toInt} (trigger 0, $rate msg/s$how)", system,
        "ms", perRun.map { case (latencies, _, _) => Measure.percentile(latencies, p) }))
    }
    results.add(Figure("latency", s"micro-batches with data per second$how", system, "1/s",
      perRun.map { case (_, batches, _) => batches.size.toDouble / seconds }))
    LatencyBench.Phases.foreach { phase =>
      results.add(Figure("latency", s"micro-batch phase $phase, median$how", system, "ms",
        perRun.map { case (_, batches, _) =>
          Measure.percentile(batches.map(_.getOrElse(phase, 0L).toDouble), 50)
        }))
    }
  }

  /**
   * Runs `run` with the session's checkpoint file manager set to `checkpoints`' class, if any, then
   * as it was.
   */
  private def withCheckpoints[T](checkpoints: Option[LatencyBench.CheckpointFiles])(run: => T): T =
    checkpoints match {
      case None => run
      case Some(files) =>
        val key = LatencyBench.CheckpointFileManagerKey
        val before = spark.conf.getOption(key)
        spark.conf.set(key, files.className)
        try run
        finally before match {
            case Some(value) => spark.conf.set(key, value)
            case None => spark.conf.unset(key)
          }
    }

  /**
   * Produce-to-sink latency under `Trigger.RealTime` with batches of `batchSeconds`, each run
   * measuring for `runSeconds` (so that a run spans as many batch ends as a user's query would see
   * in that time): p50, p95, p99 of each run, the sink's pause at a batch end and the phases Spark
   * times.
   */
  def measureRealTime(system: BenchSystem, batchSeconds: Int, runSeconds: Int)(
      send: (String, Array[Byte]) => Unit): Unit = {
    val batch = s"$batchSeconds seconds"
    val perRun = (1 to runs).map(_ =>
      once(feed(system, send, realTime = true), Some(batch), runSeconds))
    Seq(50.0, 95.0, 99.0).foreach { p =>
      results.add(Figure("latency",
        s"produce to foreach p${p.toInt} (real-time, $batch batches, $rate msg/s)",
        system.name, "ms",
        perRun.map { case (latencies, _, _) => Measure.percentile(latencies, p) }))
    }
    // Between two real-time batches no task reads: what the sink's arrivals show of that pause, and
    // Spark's phases.
    results.add(Figure("latency",
      s"real-time ($batch batches): the sink's pause at a batch end, median",
      system.name, "ms",
      perRun.map { case (_, _, pauses) =>
        if (pauses.isEmpty) 0.0 else Measure.percentile(pauses, 50)
      }))
    // A run shorter than a batch (the quick bench) has no batch that ended: no phases to show.
    val ended = perRun.map(_._2).filter(_.nonEmpty)
    if (ended.nonEmpty) LatencyBench.Phases.foreach { phase =>
      results.add(Figure("latency", s"real-time ($batch batches) phase $phase, median", system.name,
        "ms",
        ended.map(batches => Measure.percentile(batches.map(_.getOrElse(phase, 0L).toDouble), 50))))
    }
  }

  /**
   * Produce-to-sink latency under continuous processing (`Trigger.Continuous`, progress recorded
   * every `epochSeconds`): a long-running task per queue hands each message to a foreach sink as it
   * arrives.
   */
  def measureContinuous(system: BenchSystem, epochSeconds: Int)(
      send: (String, Array[Byte]) => Unit): Unit = {
    val interval = s"$epochSeconds second"
    val perRun = (1 to runs).map(_ =>
      once(feed(system, send, realTime = true), continuous = Some(interval)))
    Seq(50.0, 95.0, 99.0).foreach { p =>
      results.add(Figure("latency",
        s"produce to foreach p${p.toInt} (continuous, $interval epochs, $rate msg/s)",
        system.name, "ms",
        perRun.map { case (latencies, _, _) => Measure.percentile(latencies, p) }))
    }
  }

  /** A fresh topic of `system`, read from its start. */
  private def feed(system: BenchSystem, send: (String, Array[Byte]) => Unit,
      realTime: Boolean = false)
      : LatencyBench.Feed = {
    val topic = s"bench-lat-${System.nanoTime()}"
    system.createTopic(topic, if (realTime) LatencyBench.RealTimeQueues else queues)
    val stream = spark.readStream.format(system.format).options(system.sourceOptions(topic))
      .option("startingOffsets", "earliest").load()
      .select(unix_millis(col(system.producedAtColumn)).as("producedAt"))
    val body = Array.fill[Byte](100)('x')
    LatencyBench.Feed(system.name, stream, () => send(topic, body), () => (), () => ())
  }

  /**
   * Spark's `socket` source connected to a server socket of this JVM; each line is the time it was
   * written.
   */
  private def socketFeed(): LatencyBench.Feed = {
    val server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress)
    val connection = new CompletableFuture[Socket]()
    val acceptor = new Thread(() =>
        try connection.complete(server.accept())
        catch { case e: Throwable => connection.completeExceptionally(e) }, "bench-socket-feed")
    acceptor.setDaemon(true)
    acceptor.start()
    val stream = spark.readStream.format("socket").option("host", "127.0.0.1").option("port",
      server.getLocalPort)
      .load().select(col("value").cast("long").as("producedAt"))
    lazy val out = new BufferedOutputStream(connection.get().getOutputStream)
    LatencyBench.Feed(LatencyBench.SparkFloor, stream,
      send = () => { out.write(s"${System.currentTimeMillis()}\n".getBytes(UTF_8)); out.flush() },
      ready = () => connection.get(60, TimeUnit.SECONDS),
      close = () => { server.close(); if (connection.isDone) connection.get().close() })
  }

  /**
   * The latencies of one run, the phase durations of each batch with data in its measured part, and
   * the pauses at the sink (times between two arrivals of over [[LatencyBench.PauseMs]]): a
   * micro-batch query into foreachBatch, or with `realTime` a real-time one into a foreach sink,
   * with `continuous` a continuous one into it.
   */
  private def once(feed: LatencyBench.Feed, realTime: Option[String] = None,
      runSeconds: Int = seconds,
      continuous: Option[String] = None): (Seq[Double], Seq[Map[String, Long]], Seq[Double]) = {
    val name = feed.name
    val run = LatencyBench.newRun()
    val latencies = LatencyBench.arrivals(run) // (produced at, reached the sink at)
    val checkpoint = Files.createTempDirectory(scratch, "checkpoint-")
    val measuredFrom = new AtomicLong(Long.MaxValue)
    val batches = new ConcurrentLinkedQueue[Map[String, Long]]()
    val listener = new StreamingQueryListener {
      override def onQueryProgress(event: QueryProgressEvent): Unit = {
        val progress = event.progress
        if (progress.numInputRows > 0 &&
          java.time.Instant.parse(progress.timestamp).toEpochMilli >= measuredFrom.get()) {
          batches.add(progress.durationMs.asScala.map { case (k, v) => k -> v.longValue() }.toMap)
        }
      }
      override def onQueryStarted(event: QueryStartedEvent): Unit = ()
      override def onQueryTerminated(event: QueryTerminatedEvent): Unit = ()
    }
    spark.streams.addListener(listener)
    val query = realTime match {
      case None if continuous.isDefined =>
        feed.stream.writeStream.option("checkpointLocation", checkpoint.toString)
          .trigger(Trigger.Continuous(continuous.get)).foreach(
            new LatencyBench.ArrivalSink(run)).start()
      case None =>
        feed.stream.writeStream.option("checkpointLocation", checkpoint.toString).trigger(
          Trigger.ProcessingTime(0))
          .foreachBatch { (batch: DataFrame, _: Long) =>
            val produced = batch.collect().map(_.getLong(0))
            val now = System.currentTimeMillis()
            produced.foreach(p => latencies.add(p -> now))
          }
          .start()
      case Some(batch) =>
        feed.stream.writeStream.outputMode("update")
          .option("checkpointLocation", checkpoint.toString).trigger(Trigger.RealTime(batch))
          .foreach(new LatencyBench.ArrivalSink(run)).start()
    }
    val sent = new AtomicLong()
    val ticker = Executors.newSingleThreadScheduledExecutor()
    try {
      feed.ready()
      ticker.scheduleAtFixedRate(() => { feed.send(); sent.incrementAndGet() }, 0, 1000000L / rate,
        TimeUnit.MICROSECONDS)
      val start = System.currentTimeMillis()
      measuredFrom.set(start + warmupSeconds * 1000L)
      val stop = start + (warmupSeconds + runSeconds) * 1000L
      while (System.currentTimeMillis() < stop) {
        require(!query.awaitTermination(100),
          s"the $name latency query stopped: ${query.exception}")
      }
      ticker.shutdown()
      val measuredBatches = batches.asScala.toList // those that started before the producer stopped
      require(ticker.awaitTermination(10, TimeUnit.SECONDS), "the producer did not stop")
      val deadline = System.currentTimeMillis() + 60000
      while (latencies.size() < sent.get()) {
        require(System.currentTimeMillis() < deadline,
          s"$name: ${latencies.size()} of ${sent.get()} messages reached the sink within 60 s")
        require(!query.awaitTermination(50), s"the $name latency query stopped: ${query.exception}")
      }
      val inWindow = latencies.asScala.toSeq.filter { case (produced, _) =>
        produced >= measuredFrom.get()
      }
      val arrivals = inWindow.map(_._2).sorted
      val pauses = arrivals.zip(arrivals.drop(1)).map { case (a, b) => (b - a).toDouble }
        .filter(_ > LatencyBench.PauseMs)
      (inWindow.map { case (produced, reached) => (reached - produced).toDouble }, measuredBatches,
        pauses)
    } finally {
      ticker.shutdownNow()
      query.stop()
      feed.close()
      spark.streams.removeListener(listener)
      LatencyBench.endRun(run)
    }
  }
}

object LatencyBench {

  /**
   * Where one run's messages come from: `stream` has a `producedAt` column (epoch milliseconds),
   * `send()` sends one message, `ready()` returns once a sent message will reach the query,
   * `close()` ends the feed.
   */
  final case class Feed(name: String, stream: DataFrame, send: () => Unit, ready: () => Unit,
      close: () => Unit)

  /**
   * The system name of Spark's floor ([[LatencyBench#measureSparkFloor]]): Spark's socket source,
   * no broker.
   */
  val SparkFloor = "spark"

  /**
   * Spark's setting naming the class that writes a query's checkpoint files (offset and commit
   * logs).
   */
  val CheckpointFileManagerKey = "spark.sql.streaming.checkpointFileManagerClass"

  /** A checkpoint file manager of Spark's, and how a figure's name says it was used. */
  final case class CheckpointFiles(className: String, label: String)

  /**
   * Spark's checkpoint file manager on Hadoop's `FileSystem` API. Spark's default one (on Hadoop's
   * `FileContext`) sets each new file's permissions, which Hadoop does on the local file system by
   * running `chmod` in a new process when its native library is not installed (as with pip's
   * pyspark): two processes for each offset or commit log entry. This one does not. Measured to
   * show what that costs a micro-batch.
   */
  val FileSystemCheckpoints: CheckpointFiles = CheckpointFiles(
    "org.apache.spark.sql.execution.streaming.checkpointing.FileSystemBasedCheckpointFileManager",
    "FileSystem checkpoint manager")

  /**
   * Queues (Kafka partitions) of a real-time run's topic: each holds a task slot of local[2] for a
   * whole batch.
   */
  val RealTimeQueues = 2

  /**
   * Arrivals at the sink further apart than this (ten times the producer's interval at 200 msg/s)
   * are a pause.
   */
  val PauseMs = 50L

  private val runs =
    new java.util.concurrent.ConcurrentHashMap[Long, ConcurrentLinkedQueue[(Long, Long)]]()
  private val runIds = new AtomicLong()

  private def newRun(): Long = {
    val run = runIds.incrementAndGet()
    runs.put(run, new ConcurrentLinkedQueue[(Long, Long)]())
    run
  }

  private def arrivals(run: Long): ConcurrentLinkedQueue[(Long, Long)] = runs.get(run)

  private def endRun(run: Long): Unit = runs.remove(run)

  /**
   * Notes, in the driver's JVM (local mode), when each row reached the sink: (produced at, now).
   */
  final class ArrivalSink(run: Long) extends ForeachWriter[Row] {
    override def open(partitionId: Long, epochId: Long): Boolean = true
    override def process(row: Row): Unit = {
      val arrivals = runs.get(run)
      if (arrivals != null) arrivals.add(row.getLong(0) -> System.currentTimeMillis())
    }
    override def close(errorOrNull: Throwable): Unit = ()
  }

  /**
   * The phases of a micro-batch that Spark times (`StreamingQueryProgress.durationMs`), in the
   * order they run.
   */
  val Phases: Seq[String] =
    Seq("latestOffset", "walCommit", "queryPlanning", "addBatch", "commitOffsets",
      "triggerExecution")
}
