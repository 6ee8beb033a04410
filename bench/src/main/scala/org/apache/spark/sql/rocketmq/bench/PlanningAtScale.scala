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

import java.lang.management.ManagementFactory
import java.nio.charset.StandardCharsets.UTF_8

import org.apache.rocketmq.common.message.Message

import org.apache.spark.SparkEnv
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.rocketmq.RocketMQPlainClients

/**
 * Planning of large reads (`--planning-queues`), RocketMQ only: how long the driver takes to plan a
 * read of thousands of queues, possibly over several topics, and how much of its heap a plan holds.
 * Every queue holds one message, so each becomes a Spark input partition, as in a real read.
 *
 * Times are taken as [[PlanningBench]] takes them (sizes in turns, after untimed rounds). The heap
 * a plan holds is the driver's live heap after a full collection with `Held` plans of a size kept
 * (each its DataFrame and its RDD, partitions listed) less the live heap without them, divided by
 * `Held`: several plans at once, so that one plan's share stands above what a collection leaves
 * from one measurement to the next.
 */
final class PlanningAtScale(
    spark: SparkSession,
    results: BenchResults,
    sizes: Seq[PlanningBench.Size],
    rounds: Int,
    warmupRounds: Int) {

  private val Held = 4

  def measure(system: RocketMQSystem, plain: RocketMQPlainClients): Unit = {
    val topicsOf = sizes.map { size =>
      val topics = (1 to size.topics).map { i =>
        val topic = s"bench-plan-${size.topics}x${size.queues}-$i-${System.nanoTime()}"
        system.createTopic(topic, size.queues)
        plain.sendSpread(topic, Seq.fill(size.queues)(new Message(topic, "x".getBytes(UTF_8))))
        topic
      }
      size -> topics
    }
    system.awaitReadable()
    def plan(size: PlanningBench.Size, topics: Seq[String]): (DataFrame, RDD[_]) = {
      val frame = spark.read.format(system.format)
        .options(system.sourceOptions(topics.mkString(","))).load()
      val rdd = frame.queryExecution.toRdd
      require(rdd.getNumPartitions == size.total,
        s"a read of ${size.label} planned ${rdd.getNumPartitions} partitions")
      (frame, rdd)
    }
    def planMs(size: PlanningBench.Size, topics: Seq[String]): Double = {
      val start = System.nanoTime()
      plan(size, topics)
      (System.nanoTime() - start) / 1e6
    }
    (1 to warmupRounds).foreach(_ => topicsOf.foreach { case (s, t) => planMs(s, t) })
    val timed = (1 to rounds).map(_ => topicsOf.map { case (s, t) => planMs(s, t) })
    sizes.indices.foreach { i =>
      results.add(Figure("planning",
        s"plan a read of ${sizes(i).label}, a message in each", system.name, "ms",
        timed.map(_(i))))
    }
    topicsOf.foreach { case (size, topics) =>
      val before = liveHeapBytes()
      val plans = (1 to Held).map(_ => plan(size, topics))
      val after = liveHeapBytes()
      val perPlan = (after - before).toDouble / Held
      results.add(Figure("planning", s"driver heap a plan of ${size.label} holds", system.name,
        "MiB", Seq(perPlan / 1048576)))
      results.add(Figure("planning", s"driver heap a plan of ${size.label} holds, per queue",
        system.name, "bytes", Seq(perPlan / size.total)))
      // What the driver ships with each task, beside Spark's own task fields.
      val partition = plans.head._2.partitions.head
      val serialized = SparkEnv.get.closureSerializer.newInstance().serialize(partition).limit()
      results.add(Figure("planning", s"one input partition serialized, ${size.label}",
        system.name, "bytes", Seq(serialized.toDouble)))
      java.lang.ref.Reference.reachabilityFence(plans)
    }
  }

  /** The heap in use after full collections, once two in a row leave about the same. */
  private def liveHeapBytes(): Long = {
    val memory = ManagementFactory.getMemoryMXBean
    var last = Long.MaxValue
    var used = 0L
    var attempts = 0
    do {
      last = used
      System.gc()
      used = memory.getHeapMemoryUsage.getUsed
      attempts += 1
    } while (attempts < 10 && (attempts < 2 || math.abs(used - last) > 1048576))
    used
  }
}
