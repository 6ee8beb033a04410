package org.apache.spark.sql.rocketmq.producer

import org.apache.rocketmq.client.producer.DefaultMQProducer

import org.apache.spark.sql.rocketmq.RocketMQClientCache

/**
 * The producers of one executor JVM, one per (name server, producer group, compression threshold),
 * shared by every task and batch writing with those settings (see [[RocketMQClientCache]]). A
 * producer is safe for concurrent sends; send timeouts and retries are per send, not per producer.
 */
private[rocketmq] object RocketMQProducerPool {

  /** What makes two writes able to share a producer. */
  final case class Key(nameServer: String, group: String, compressionThreshold: Int)

  val cache = new RocketMQClientCache[Key, DefaultMQProducer]("producer", newProducer, _.shutdown())

  def borrow(settings: RocketMQWriteSettings): cache.Lease =
    cache.borrow(Key(settings.nameServer, settings.producerGroup, settings.compressionThreshold))

  /** Producers held now (tests). */
  private[rocketmq] def size: Int = cache.size

  /** A producer that sends once per call: the message sender does its own counted retries. */
  private def newProducer(key: Key): DefaultMQProducer = {
    val producer = new DefaultMQProducer(key.group)
    producer.setNamesrvAddr(key.nameServer)
    producer.setInstanceName(RocketMQClientCache.uniqueInstanceName("spark-rocketmq-writer"))
    producer.setVipChannelEnabled(false)
    producer.setCompressMsgBodyOverHowmuch(key.compressionThreshold)
    producer.setRetryTimesWhenSendFailed(0)
    producer.setRetryTimesWhenSendAsyncFailed(0)
    producer.start()
    producer
  }
}
