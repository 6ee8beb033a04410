package org.apache.spark.sql.rocketmq

import java.util.UUID

import scala.annotation.nowarn

import scala.util.control.NonFatal

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

  private def instanceName(role: String): String = s"spark-rocketmq-$role-${UUID.randomUUID()}"

  def newPullConsumer(settings: RocketMQReadSettings, instance: String): DefaultMQPullConsumer = {
    val consumer = new DefaultMQPullConsumer(settings.group)
    consumer.setNamesrvAddr(settings.nameServer)
    consumer.setInstanceName(instance)
    consumer.setVipChannelEnabled(false)
    consumer.setConsumerPullTimeoutMillis(settings.pullTimeoutMs)
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

  def newProducer(settings: RocketMQWriteSettings): DefaultMQProducer = {
    val producer = new DefaultMQProducer(WriterGroup)
    producer.setNamesrvAddr(settings.nameServer)
    producer.setInstanceName(instanceName("writer"))
    producer.setVipChannelEnabled(false)
    producer.setSendMsgTimeout(settings.sendTimeoutMs.toInt)
    producer.start()
    producer
  }

  def shutdownQuietly(consumer: DefaultMQPullConsumer): Unit =
    try consumer.shutdown() catch { case NonFatal(_) => }

  def shutdownQuietly(producer: DefaultMQProducer): Unit =
    try producer.shutdown() catch { case NonFatal(_) => }
}
