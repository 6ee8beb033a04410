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

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.rocketmq.common.RocketMQQueue

/**
 * The task slots a real-time query counts before its tasks are launched (no query runs here, so no
 * later stage is counted).
 */
class RocketMQRealTimeSlotsSuite extends AnyFunSuite {

  private val queues = (0 until 3).map(RocketMQQueue("t", "b", _))

  private def withSession(cores: Int, taskCpus: Int)(body: SparkSession => Unit): Unit = {
    val session = SparkSession.builder().master(s"local[$cores]").appName("real-time-slots")
      .config("spark.task.cpus", taskCpus.toString).config("spark.ui.enabled", "false")
      .getOrCreate()
    try {
      assert(session.sparkContext.master === s"local[$cores]", "another SparkContext is running")
      body(session)
    } finally session.stop()
  }

  test("a task holds spark.task.cpus cores: the slots are the cores divided by it") {
    withSession(cores = 4, taskCpus = 2) { session =>
      val e =
        intercept[RocketMQInvalidInputException](RocketMQRealTimeSlots.check(session, queues))
      assert(e.getCondition === "ROCKETMQ_REAL_TIME_INSUFFICIENT_SLOTS")
      val parameters = e.getMessageParameters
      assert(parameters.get("needed") === "3" && parameters.get("slots") === "2")
      assert(e.getMessage.contains("spark.task.cpus"), e.getMessage)
      // Two tasks of two cores each fit four cores.
      RocketMQRealTimeSlots.check(session, queues.take(2))
    }
    withSession(cores = 4, taskCpus = 1)(RocketMQRealTimeSlots.check(_, queues))
  }
}
