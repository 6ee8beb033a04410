package org.apache.spark.sql.rocketmq

import scala.annotation.nowarn

import org.apache.rocketmq.client.consumer.DefaultMQPullConsumer
import org.apache.rocketmq.client.impl.MQClientManager
import org.apache.rocketmq.client.producer.DefaultMQProducer

/**
 * Builds the RocketMQ clients executors use. Reads use `DefaultMQPullConsumer`, deprecated since
 * RocketMQ 4.6 but still shipped in 5.x: it alone pulls an exact offset range statelessly, with no
 * prefetch past the range (the lite pull consumer prefetches and owns offsets). Each gets a unique instance name, so that it owns its
 * connections and shutting it down never touches another client.
 */
@nowarn("cat=deprecation")
private[rocketmq] object RocketMQClients {

  /** Consumer group pulls name unless option consumerGroup is set; pulls never commit offsets. */
  val ReaderGroup = "spark-rocketmq-reader"

  /** Producer group of the writers. */
  val WriterGroup = "spark-rocketmq-writer"

  def newPullConsumer(nameServer: String, group: String, instance: String): DefaultMQPullConsumer = {
    val consumer = new DefaultMQPullConsumer(group)
    consumer.setNamesrvAddr(nameServer)
    consumer.setInstanceName(instance)
    consumer.setVipChannelEnabled(false)
    // Stateless pulls of assigned ranges: no rebalancing, no offset bookkeeping in the client.
    consumer.setEnableRebalance(false)
    consumer.start()
    consumer
  }

  /**
   * Makes the consumer's client know `topic`'s brokers and their versions before a first pull: the
   * client refuses SQL92 pulls to a broker whose version it has not yet learned from a heartbeat.
   */
  def prepareForSqlFilter(consumer: DefaultMQPullConsumer, topic: String): Unit = {
    val client = MQClientManager.getInstance().getOrCreateMQClientInstance(consumer)
    client.updateTopicRouteInfoFromNameServer(topic)
    client.sendHeartbeatToAllBrokerWithLock()
  }

  /** A producer that sends once per call: the writer does its own counted retries. */
  def newProducer(nameServer: String, group: String, compressionThreshold: Int, instance: String)
    : DefaultMQProducer = {
    val producer = new DefaultMQProducer(group)
    producer.setNamesrvAddr(nameServer)
    producer.setInstanceName(instance)
    producer.setVipChannelEnabled(false)
    producer.setCompressMsgBodyOverHowmuch(compressionThreshold)
    producer.setRetryTimesWhenSendFailed(0)
    producer.setRetryTimesWhenSendAsyncFailed(0)
    producer.start()
    producer
  }
}
