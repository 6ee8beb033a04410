package org.apache.spark.sql.rocketmq

import java.nio.file.Files

import org.apache.rocketmq.client.impl.MQClientManager

import org.apache.spark.sql.connector.read.streaming.ReadLimit
import org.apache.spark.sql.rocketmq.consumer.RocketMQConsumerPool
import org.apache.spark.sql.streaming.Trigger

/** Executors reuse one consumer per connection settings; planning costs requests per broker. */
class RocketMQClientReuseSuite extends RocketMQSparkSuiteBase {

  private def clientInstances: Int = MQClientManager.getInstance().getFactoryTable.size

  /**
   * Live threads of RocketMQ clients (the thread names the client gives its own pools), by name
   * with digits removed. Spark's pools and the in-JVM broker's server threads are not counted:
   * they grow to their own caps regardless of the connector.
   */
  private def clientThreadKinds: Map[String, Int] =
    Thread.getAllStackTraces.keySet.toArray(Array.empty[Thread]).toSeq.map(_.getName)
      .filter(n => ClientThreadPrefixes.exists(n.startsWith))
      .groupBy(_.replaceAll("[0-9]+", "#")).map { case (k, v) => k -> v.size }

  private val ClientThreadPrefixes = Seq("NettyClient", "NettyClientScan", "MQClientFactory", "PullMessageService",
    "RebalanceService", "ClientHouseKeepingService", "AsyncSenderExecutor", "NettyClientPublicExecutor")

  private def clientThreads: Int = clientThreadKinds.values.sum

  private val OnDemandPool = "NettyClientScan_thread"

  test("100 micro-batches: RocketMQ client instances and threads stay flat") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 4)
    val q = spark.readStream.format("rocketmq")
      .option("nameServer", rocketmq.nameServer).option("topic", topic).load()
      .selectExpr("CAST(body AS STRING)")
      .writeStream.format("memory").queryName("reuse_out")
      .option("checkpointLocation", Files.createTempDirectory("rocketmq-reuse-").toString)
      .trigger(Trigger.ProcessingTime(0)).start()
    try {
      q.processAllAvailable()
      var warm = (0, 0)
      var warmPool = 0
      var warmKinds = Map.empty[String, Int]
      for (i <- 1 to 100) {
        rocketmq.sendBodies(topic, Seq(s"m$i"))
        q.processAllAvailable()
        if (i == 10) {
          warm = (clientInstances, clientThreads)
          warmKinds = clientThreadKinds
          warmPool = RocketMQConsumerPool.size
        }
      }
      val batches = q.recentProgress.count(_.numInputRows > 0) // recentProgress keeps the last 100
      assert(batches >= 90, s"expected about 100 batches with data, saw $batches")
      assert(spark.table("reuse_out").count() === 100)
      assert(clientInstances === warm._1, "RocketMQ client instances grew")
      // The remoting client's scan pool starts threads on demand up to its cap (10 per instance):
      // it may warm up, within that cap. Every other kind of client thread must not grow at all.
      val kinds = clientThreadKinds
      val grown = kinds.collect {
        case (k, n) if n > warmKinds.getOrElse(k, 0) && !k.startsWith(OnDemandPool) =>
          s"$k: ${warmKinds.getOrElse(k, 0)} -> $n"
      }
      assert(warm._2 > 0, "no RocketMQ client threads found: the thread name prefixes are stale")
      assert(grown.isEmpty, s"RocketMQ client threads grew: ${grown.mkString("; ")}")
      assert(kinds.filter(_._1.startsWith(OnDemandPool)).values.sum <= 10 * clientInstances)
      assert(RocketMQConsumerPool.size === warmPool, "pooled consumers grew")
    } finally q.stop()
  }

  test("planning a trigger on a 256-queue topic costs one request per broker, not per queue") {
    val topic = rocketmq.newTopic()
    rocketmq.createTopic(topic, queues = 256)
    rocketmq.sendBodies(topic, (0 until 50).map(i => s"m$i"))
    val options = new RocketMQOptions(Map("nameServer" -> rocketmq.nameServer, "topic" -> topic,
      "startingOffsets" -> "earliest"))
    val stream = new RocketMQMicroBatchStream(options, Files.createTempDirectory("rocketmq-plan-").toString)
    try {
      val start = stream.initialOffset()
      val before = stream.reader.requestCount
      var end = start
      for (_ <- 1 to 3) end = stream.latestOffset(start, ReadLimit.allAvailable())
      val perTrigger = (stream.reader.requestCount - before) / 3.0
      // One route lookup on the name server plus one stats request to the single broker.
      assert(perTrigger === 2.0)
      assert(RocketMQSourceOffset(end).queueOffsets.size === 256)
      assert(RocketMQSourceOffset(end).queueOffsets.values.sum === 50)
      assert(stream.planInputPartitions(start, end).length === 256.min(50))
    } finally stream.stop()
  }
}
