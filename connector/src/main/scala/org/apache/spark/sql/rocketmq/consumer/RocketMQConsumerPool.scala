package org.apache.spark.sql.rocketmq.consumer

import scala.annotation.nowarn

import org.apache.rocketmq.client.consumer.DefaultMQPullConsumer

import org.apache.spark.sql.rocketmq.{RocketMQClientCache, RocketMQClients, RocketMQReadSettings}

/**
 * The pull consumers of one executor JVM, one per (name server, group). A pull consumer is stateless
 * per pull and safe for concurrent use, so every task and batch reading with the same settings
 * shares it (see [[RocketMQClientCache]] for reuse, eviction and shutdown).
 */
@nowarn("cat=deprecation")
private[rocketmq] object RocketMQConsumerPool {

  /** What makes two reads able to share a consumer. */
  final case class Key(nameServer: String, group: String) {
    /** Stable per key, so that a replaced consumer reuses the instance name. */
    def instanceName: String = s"spark-rocketmq-reader-${Integer.toHexString(hashCode)}"
  }

  val cache = new RocketMQClientCache[Key, DefaultMQPullConsumer]("consumer",
    key => RocketMQClients.newPullConsumer(key.nameServer, key.group, key.instanceName),
    consumer => consumer.shutdown())

  def borrow(settings: RocketMQReadSettings): cache.Lease = cache.borrow(Key(settings.nameServer, settings.group))

  /** Consumers held now (tests). */
  private[rocketmq] def size: Int = cache.size
}
