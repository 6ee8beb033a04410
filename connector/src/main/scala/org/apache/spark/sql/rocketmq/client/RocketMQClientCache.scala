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

package org.apache.spark.sql.rocketmq.client

import java.util.concurrent.{Executors, ThreadFactory, TimeUnit}

import scala.collection.mutable

import org.slf4j.LoggerFactory

import org.apache.spark.{SparkContext, SparkEnv}
import org.apache.spark.scheduler.{SparkListener, SparkListenerApplicationEnd}

/**
 * RocketMQ clients of one executor JVM, one per key (the connection settings), shared by every
 * task and batch that uses those settings: in RocketMQ 5 each client start builds its own
 * connections and some fifteen threads, so tasks borrow instead of starting their own.
 *
 * A client no task holds for `spark.rocketmq.<kind>.cache.timeout` (default 5m) is closed; one
 * marked broken (after a failed request) is closed as soon as no task holds it, and the next borrow
 * creates a fresh one; all are closed when the JVM exits, and, in the driver's JVM (where
 * local-mode tasks run too), when the Spark application ends: RocketMQ's client threads are not
 * daemons, so a cached client would otherwise keep a finished `spark-submit` alive until the idle
 * timeout.
 */
private[rocketmq] final class RocketMQClientCache[K, C](kind: String, create: K => C,
    close: C => Unit) {
  private val log = LoggerFactory.getLogger(getClass)

  private final class Entry(val key: K, val client: C) {
    var borrowers = 0
    var idleSinceMs: Long = System.currentTimeMillis()
    var broken = false
    /** Set-up steps already done on this client (see `Lease.once`). */
    val done: mutable.Set[String] = mutable.Set.empty[String]
  }

  /** A client borrowed by one task; `release()` it exactly once. */
  final class Lease private[RocketMQClientCache] (entry: Entry) {
    private var released = false

    def client: C = entry.client

    /**
     * Runs `setUp` the first time `step` is asked for on this client, and returns only once it has
     * succeeded: a task sharing the client that asks for the same step meanwhile waits for it (it
     * must not go on before the set-up is done), and one that failed is tried again by the next.
     */
    def once(step: String)(setUp: => Unit): Unit = entry.done.synchronized {
      if (!entry.done.contains(step)) {
        setUp
        entry.done.add(step)
      }
    }

    /** After a failed request: the client is replaced once no task holds it. */
    def markBroken(): Unit = RocketMQClientCache.this.synchronized { entry.broken = true }

    /**
     * A broken client is closed in the background: its close may wait on a broker that does not
     * answer (RocketMQ unregisters from each), which must hold up neither the task nor the cache.
     */
    def release(): Unit = {
      val toClose = RocketMQClientCache.this.synchronized {
        if (released) None
        else {
          released = true
          entry.borrowers -= 1
          entry.idleSinceMs = System.currentTimeMillis()
          if (entry.broken && entry.borrowers == 0) Some(forget(entry)) else None
        }
      }
      toClose.foreach(e => closeEach(List(e), waitMs = 0L))
    }
  }

  private val entries = mutable.HashMap.empty[K, Entry]

  private lazy val idleTimeoutMs: Long =
    Option(SparkEnv.get).map(_.conf.getTimeAsMs(s"spark.rocketmq.$kind.cache.timeout", "5m"))
      .getOrElse(5L * 60 * 1000)

  private lazy val evictor = {
    val threads: ThreadFactory = r => {
      val t = new Thread(r, s"rocketmq-$kind-cache-evictor")
      t.setDaemon(true)
      t
    }
    val executor = Executors.newSingleThreadScheduledExecutor(threads)
    val period = math.max(1000L, math.min(idleTimeoutMs / 2, 60000L))
    executor.scheduleWithFixedDelay(() => evictIdle(), period, period, TimeUnit.MILLISECONDS)
    Runtime.getRuntime.addShutdownHook(
      new Thread(() => closeAll(), s"rocketmq-$kind-cache-shutdown"))
    executor
  }

  /**
   * The SparkContext whose end closes every client; re-registered if a new one starts in this JVM.
   */
  private var closesWithApplication: Option[SparkContext] = None

  private def closeWhenApplicationEnds(): Unit = SparkContext.getActive.foreach { sc =>
    if (!closesWithApplication.exists(_ eq sc)) {
      closesWithApplication = Some(sc)
      sc.addSparkListener(new SparkListener {
        // Spark's stop waits for its listeners, and a client's close takes seconds: the clients
        // close in the background, and the next application's are new ones.
        override def onApplicationEnd(end: SparkListenerApplicationEnd): Unit =
          closeEach(takeAll(), waitMs = 0L)
      })
    }
  }

  def borrow(key: K): Lease = synchronized {
    evictor
    closeWhenApplicationEnds()
    val entry = entries.get(key).filterNot(_.broken).getOrElse {
      val created = new Entry(key, create(key))
      entries.put(key, created)
      created
    }
    entry.borrowers += 1
    new Lease(entry)
  }

  /** Takes `entry` out of the cache (the caller holds its lock) and returns it, to be closed. */
  private def forget(entry: Entry): Entry = {
    if (entries.get(entry.key).exists(_ eq entry)) entries.remove(entry.key)
    entry
  }

  private def closeClient(entry: Entry): Unit =
    try close(entry.client)
    catch { case e: Throwable => log.warn(s"Closing a RocketMQ $kind failed: $e") }

  def evictIdle(nowMs: Long = System.currentTimeMillis()): Unit = {
    val idle = synchronized {
      entries.values.toList.filter(e =>
        e.borrowers == 0 && nowMs - e.idleSinceMs >= idleTimeoutMs).map { e =>
        log.info(s"Closing RocketMQ $kind ${e.key}: unused for ${nowMs - e.idleSinceMs} ms")
        forget(e)
      }
    }
    idle.foreach(closeClient)
  }

  /**
   * Closes every client, all at once, and waits for them (at most a minute): a RocketMQ client's
   * shutdown waits for its own service threads, which look for the stop every few seconds, so one
   * client after the other took seconds each.
   */
  def closeAll(): Unit = closeEach(takeAll(), waitMs = 60000L)

  /** Forgets every client (a borrow from now on makes a new one) and returns them. */
  private def takeAll(): List[Entry] = synchronized {
    val held = entries.values.toList
    entries.clear()
    held
  }

  /** Closes `all` on threads of their own, waiting up to `waitMs` for them. */
  private def closeEach(all: List[Entry], waitMs: Long): Unit = {
    val closing = all.map { entry =>
      val thread = new Thread(() => closeClient(entry), s"rocketmq-$kind-close")
      thread.setDaemon(true)
      thread.start()
      thread
    }
    val deadline = System.currentTimeMillis() + waitMs
    closing.foreach(t =>
      if (deadline > System.currentTimeMillis()) t.join(deadline - System.currentTimeMillis()))
  }

  /** Clients held now. */
  def size: Int = synchronized(entries.size)

  /** Clients lent out now (a task reading or writing holds one). */
  def lent: Int = synchronized(entries.values.count(_.borrowers > 0))

  /** The keys of the clients lent out now (tests). */
  def lentKeys: Set[K] = synchronized(entries.values.filter(_.borrowers > 0).map(_.key).toSet)
}

private[rocketmq] object RocketMQClientCache {
  private val created = new java.util.concurrent.atomic.AtomicLong()
  // The JVM's name is "pid@host" (ProcessHandle would say it directly, but Java 8 has none).
  private val pid =
    java.lang.management.ManagementFactory.getRuntimeMXBean.getName.takeWhile(_ != '@')

  /**
   * A RocketMQ instance name no other client of any JVM on this host has: RocketMQ shares one
   * client instance per `ip@instanceName`, and that instance accepts one registration per group, so
   * a client built to replace a broken one that tasks still hold must not reuse the broken one's
   * name.
   */
  def uniqueInstanceName(prefix: String): String = s"$prefix-$pid-${created.incrementAndGet()}"
}
