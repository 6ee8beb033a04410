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

import java.lang.management.{ManagementFactory, MemoryType}
import java.util.concurrent.ConcurrentLinkedQueue
import javax.management.{NotificationEmitter, NotificationListener}
import javax.management.openmbean.CompositeData

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import com.sun.management.GarbageCollectionNotificationInfo

import org.apache.spark.sql.SparkSession

/**
 * The reading side of [[HeapBench]], a JVM of its own: reads a whole topic through the connector in
 * `local[2]` and prints one report line: the read's length, and after every collection the heap it
 * left (seconds into the read, bytes), an upper bound of the live heap.
 *
 * Usage: HeapReader <nameServer> <topic> <expected messages>
 */
object HeapReader {
  val ReportPrefix = "HEAP-REPORT "

  def main(args: Array[String]): Unit = {
    val Array(nameServer, topic, expected) = args
    val spark = SparkSession.builder().master("local[2]").appName("rocketmq-bench-heap")
      .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    val afterGc = new ConcurrentLinkedQueue[(Double, Long)]()
    val heapPools =
      ManagementFactory.getMemoryPoolMXBeans.asScala.filter(_.getType == MemoryType.HEAP)
        .map(_.getName).toSet
    @volatile var start = System.nanoTime()
    val listener: NotificationListener = (notification, _) =>
      if (notification.getType ==
          GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION) {
        val info = GarbageCollectionNotificationInfo.from(
          notification.getUserData.asInstanceOf[CompositeData])
        val left = info.getGcInfo.getMemoryUsageAfterGc.asScala.collect {
          case (pool, usage) if heapPools(pool) => usage.getUsed
        }.sum
        afterGc.add(((System.nanoTime() - start) / 1e9, left))
      }
    ManagementFactory.getGarbageCollectorMXBeans.asScala.foreach {
      case emitter: NotificationEmitter => emitter.addNotificationListener(listener, null, null)
      case _ =>
    }
    try {
      start = System.nanoTime()
      val row =
        spark.read.format("rocketmq").option("nameServer", nameServer).option("topic", topic).load()
          .selectExpr("count(*)", "sum(length(body))").collect().head
      val seconds = (System.nanoTime() - start) / 1e9
      require(row.getLong(0) == expected.toLong, s"read ${row.getLong(0)} messages, not $expected")
      val samples = afterGc.asScala.filter(_._1 <= seconds).map { case (t, b) =>
        Seq(t, b.toDouble).asJava
      }
      val report =
        Map("seconds" -> seconds, "messages" -> row.getLong(0), "bodyBytes" -> row.getLong(1),
          "maxHeap" -> Runtime.getRuntime.maxMemory(), "liveAfterGc" -> samples.toSeq.asJava).asJava
      println(ReportPrefix + new ObjectMapper().writeValueAsString(report))
    } finally spark.stop()
  }
}
