package org.apache.spark.sql.rocketmq.consumer

import java.util.concurrent.{ConcurrentHashMap, Executors, ThreadFactory, TimeUnit}

import scala.annotation.nowarn
import scala.collection.mutable

import org.apache.rocketmq.client.consumer.DefaultMQPullConsumer
import org.slf4j.LoggerFactory

import org.apache.spark.SparkEnv
import org.apache.spark.sql.rocketmq.{RocketMQClients, RocketMQReadSettings}

/**
 * The pull consumers of one executor JVM: one per connection settings (name server, group),
 * shared by every task and batch that reads with those settings. A pull consumer is stateless per
 * pull and safe for concurrent use, so tasks share it instead of each starting a client (in
 * RocketMQ 5 every client start builds its own connections and some fifteen threads).
 *
 * A consumer no task has borrowed for `spark.rocketmq.consumer.cache.timeout` (default 5m) is shut
 * down; one whose pull failed is shut down as soon as no task holds it; all are shut down when the
 * JVM exits.
 */
private[rocketmq] object RocketMQConsumerPool {
  private val log = LoggerFactory.getLogger(getClass)

  /** What makes two reads able to share a consumer. */
  final case class Key(nameServer: String, group: String)

  @nowarn("cat=deprecation")
  private final class Entry(val key: Key, val consumer: DefaultMQPullConsumer) {
    var borrowers = 0
    var idleSinceMs: Long = System.currentTimeMillis()
    var broken = false
    /** Topics this consumer's client was prepared for SQL92 pulls on. */
    val sqlReadyTopics: java.util.Set[String] = ConcurrentHashMap.newKeySet[String]()
  }

  /** A consumer borrowed by one partition reader; `release()` exactly once. */
  @nowarn("cat=deprecation")
  final class Lease private[RocketMQConsumerPool] (private val entry: Entry) {
    private var released = false
    def consumer: DefaultMQPullConsumer = entry.consumer

    /** Prepares the shared client once per topic for SQL92 pulls. */
    def prepareForSqlFilter(topic: String): Unit =
      if (entry.sqlReadyTopics.add(topic)) RocketMQClients.prepareForSqlFilter(entry.consumer, topic)

    /** After a failed pull: the consumer is replaced once no task holds it. */
    def markBroken(): Unit = RocketMQConsumerPool.synchronized { entry.broken = true }

    def release(): Unit = RocketMQConsumerPool.synchronized {
      if (!released) {
        released = true
        entry.borrowers -= 1
        entry.idleSinceMs = System.currentTimeMillis()
        if (entry.broken && entry.borrowers == 0) remove(entry)
      }
    }
  }

  private val entries = mutable.HashMap.empty[Key, Entry]

  private lazy val idleTimeoutMs: Long =
    Option(SparkEnv.get).map(_.conf.getTimeAsMs("spark.rocketmq.consumer.cache.timeout", "5m"))
      .getOrElse(5L * 60 * 1000)

  private lazy val evictor = {
    val threads: ThreadFactory = r => {
      val t = new Thread(r, "rocketmq-consumer-pool-evictor")
      t.setDaemon(true)
      t
    }
    val executor = Executors.newSingleThreadScheduledExecutor(threads)
    val period = math.max(1000L, math.min(idleTimeoutMs / 2, 60000L))
    executor.scheduleWithFixedDelay(() => evictIdle(), period, period, TimeUnit.MILLISECONDS)
    Runtime.getRuntime.addShutdownHook(new Thread(() => closeAll(), "rocketmq-consumer-pool-shutdown"))
    executor
  }

  def borrow(settings: RocketMQReadSettings): Lease = synchronized {
    evictor
    val key = Key(settings.nameServer, settings.group)
    val entry = entries.get(key).filterNot(_.broken).getOrElse {
      val created = new Entry(key, RocketMQClients.newPullConsumer(settings, instanceNameOf(key)))
      entries.put(key, created)
      created
    }
    entry.borrowers += 1
    new Lease(entry)
  }

  /** Stable per key, so that a restarted consumer reuses its instance name. */
  private def instanceNameOf(key: Key): String =
    s"spark-rocketmq-reader-${Integer.toHexString(key.hashCode)}"

  private def remove(entry: Entry): Unit = {
    if (entries.get(entry.key).contains(entry)) entries.remove(entry.key)
    RocketMQClients.shutdownQuietly(entry.consumer)
  }

  private[rocketmq] def evictIdle(nowMs: Long = System.currentTimeMillis()): Unit = synchronized {
    entries.values.toList.filter(e => e.borrowers == 0 && nowMs - e.idleSinceMs >= idleTimeoutMs).foreach { e =>
      log.info(s"Closing RocketMQ consumer for ${e.key}: idle for ${nowMs - e.idleSinceMs} ms")
      remove(e)
    }
  }

  private[rocketmq] def closeAll(): Unit = synchronized {
    entries.values.toList.foreach(remove)
  }

  /** Consumers held now (for tests and metrics). */
  private[rocketmq] def size: Int = synchronized(entries.size)
}
