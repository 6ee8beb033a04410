package org.apache.spark.sql.rocketmq.producer

import org.apache.rocketmq.client.producer.DefaultMQProducer

import org.apache.spark.sql.rocketmq.{RocketMQClientCache, RocketMQClients, RocketMQWriteSettings}

/**
 * The producers of one executor JVM, one per (name server, producer group, compression threshold),
 * shared by every task and batch writing with those settings (see [[RocketMQClientCache]]). A
 * producer is safe for concurrent sends; send timeouts and retries are per send, not per producer.
 */
private[rocketmq] object RocketMQProducerPool {

  final case class Key(nameServer: String, group: String, compressionThreshold: Int) {
    def instanceName: String = s"spark-rocketmq-writer-${Integer.toHexString(hashCode)}"
  }

  val cache = new RocketMQClientCache[Key, DefaultMQProducer]("producer",
    key => RocketMQClients.newProducer(key.nameServer, key.group, key.compressionThreshold, key.instanceName),
    producer => producer.shutdown())

  def borrow(settings: RocketMQWriteSettings): cache.Lease =
    cache.borrow(Key(settings.nameServer, settings.producerGroup, settings.compressionThreshold))

  /** Producers held now (tests). */
  private[rocketmq] def size: Int = cache.size
}
