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

package org.apache.spark.sql.rocketmq

import java.nio.charset.StandardCharsets.UTF_8
import java.util.UUID

import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.rocketmq.RocketMQClusterProcess.{GroupA, GroupB, GroupC}

/**
 * The shared cluster ([[RocketMQClusterProcess.shared]]) and one local Spark session per suite,
 * with what the cluster suites need: topics on chosen groups, readers, and brokers killed for the
 * length of a block.
 */
trait RocketMQClusterSuiteBase extends AnyFunSuite with BeforeAndAfterAll {

  protected var cluster: RocketMQClusterProcess = _
  protected var spark: SparkSession = _

  override protected def beforeAll(): Unit = {
    super.beforeAll()
    cluster = RocketMQClusterProcess.shared
    spark = RocketMQSparkSuiteBase.localSession(sparkMaster, getClass.getSimpleName)
  }

  /** The suite's Spark master: two task slots in this JVM. */
  protected def sparkMaster: String = "local[2]"

  /**
   * Status requests a broker answers before its held-back index is let go: planning asks for the
   * status once before it waits, then once a poll, so this makes it wait at least three polls.
   */
  protected val StatusPolls = 4

  override protected def afterAll(): Unit = {
    try {
      if (spark != null) spark.stop()
    } finally super.afterAll()
  }

  /** A new topic with `queues` queues on each of `groups`. */
  protected def newTopic(prefix: String, groups: Seq[String] = Seq(GroupA, GroupB, GroupC),
      queues: Int = 4)
      : String = {
    val topic = s"$prefix-${UUID.randomUUID().toString.take(8)}"
    cluster.createTopic(topic, queues = queues, groups = groups)
    topic
  }

  protected def read(topic: String, options: (String, String)*): DataFrame =
    spark.read.format("rocketmq").option("nameServer", cluster.nameServer).option("topic", topic)
      .options(options.toMap).load()

  protected def bodies(df: DataFrame): Seq[String] =
    df.select("body").collect().map(r => new String(r.getAs[Array[Byte]](0), UTF_8)).toSeq

  /** The chain of messages of `body`'s failure. */
  protected def errorMessage(body: => Any): String = {
    val e = intercept[Throwable](body)
    Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString("\n")
  }

  /** Runs `body` with `label` killed, and starts it again afterwards whatever happens. */
  protected def withKilled[T](label: String)(body: => T): T = {
    cluster.kill(label)
    try body
    finally cluster.restart(label)
  }

  protected def stream(topic: String, options: (String, String)*): DataFrame =
    spark.readStream.format("rocketmq").option("nameServer", cluster.nameServer).option("topic",
      topic)
      .options(options.toMap).load()
}
