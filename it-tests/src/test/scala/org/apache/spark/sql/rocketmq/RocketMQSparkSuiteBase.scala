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

import java.nio.charset.StandardCharsets

import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.{DataFrame, SparkSession}

/**
 * The test JVM's shared embedded RocketMQ and one local Spark session per suite; each test makes
 * its own topics.
 */
trait RocketMQSparkSuiteBase extends AnyFunSuite with BeforeAndAfterAll {

  protected var rocketmq: EmbeddedRocketMQ = _
  protected var spark: SparkSession = _

  protected def sparkMaster: String = "local[2]"

  /**
   * The broker this suite uses; by default the one all suites of the test JVM share. A broker of
   * the suite's own is stopped after the suite (in the background: RocketMQ's shutdown waits some
   * 20 s).
   */
  protected def newRocketMQ(): EmbeddedRocketMQ = EmbeddedRocketMQ.shared

  /** `toDF` and friends on local collections. */
  protected lazy val testImplicits: org.apache.spark.sql.SQLImplicits = spark.implicits

  override protected def beforeAll(): Unit = {
    super.beforeAll()
    rocketmq = newRocketMQ()
    spark = RocketMQSparkSuiteBase.localSession(sparkMaster, getClass.getSimpleName)
  }

  override protected def afterAll(): Unit = {
    try {
      if (spark != null) spark.stop()
    } finally {
      try if (rocketmq != null && !EmbeddedRocketMQ.isShared(rocketmq))
          EmbeddedRocketMQ.stopInBackground(rocketmq)
      finally super.afterAll()
    }
  }

  /** A batch reader of `topic` with the name server set. */
  protected def readTopic(topic: String, options: (String, String)*): DataFrame =
    spark.read.format("rocketmq").options(topicOptions(topic, options)).load()

  /** A streaming reader of `topic` with the name server set. */
  protected def streamTopic(topic: String, options: (String, String)*): DataFrame =
    spark.readStream.format("rocketmq").options(topicOptions(topic, options)).load()

  private def topicOptions(topic: String, options: Seq[(String, String)]): Map[String, String] =
    Map("nameServer" -> rocketmq.nameServer, "topic" -> topic) ++ options

  protected def bodies(df: DataFrame): Seq[String] =
    df.select("body").collect().map(r =>
      new String(r.getAs[Array[Byte]](0), StandardCharsets.UTF_8)).toSeq

  /** Runs `body`, expecting it to throw; returns the message of the whole cause chain. */
  protected def errorMessage(body: => Any): String = {
    val e = intercept[Throwable](body)
    Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(t =>
      s"${t.getClass.getName}: ${t.getMessage}")
      .mkString("\n")
  }
}

object RocketMQSparkSuiteBase {

  /**
   * A local Spark session for a suite: `master`, the UI off, two shuffle partitions, on loopback.
   */
  def localSession(master: String, appName: String): SparkSession = SparkSession.builder()
    .master(master)
    .appName(appName)
    .config("spark.ui.enabled", "false")
    .config("spark.sql.shuffle.partitions", "2")
    .config("spark.driver.bindAddress", "127.0.0.1")
    .config("spark.driver.host", "127.0.0.1")
    .getOrCreate()
}
