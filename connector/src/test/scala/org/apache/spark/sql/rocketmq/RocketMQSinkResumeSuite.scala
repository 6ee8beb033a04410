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

import java.lang.ref.WeakReference
import java.nio.file.Files

import org.apache.hadoop.conf.Configuration
import org.scalatest.concurrent.Eventually._
import org.scalatest.exceptions.TestFailedDueToTimeoutException
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.time.SpanSugar._

import org.apache.spark.sql.SparkSession

/**
 * How a restarted exactly-once stream's sink resumes ([[RocketMQSinkRun]]): where it finds its
 * state, the writer's options a stream into a catalog table records for its next run, and how the
 * catalog listens to its sessions' query starts.
 */
class RocketMQSinkResumeSuite extends AnyFunSuite {

  test("the sink's state: beside the writer's checkpoint, else its own directory under the " +
    "session's default root, else none") {
    val spark = SparkSession.builder().master("local[1]").appName("sink-state")
      .config("spark.ui.enabled", "false").getOrCreate()
    try {
      val session = spark.newSession()
      assert(RocketMQSinkRun.stateDir(None, "q", Some(session)) === None)
      assert(RocketMQSinkRun.stateDir(None, "q", None) === None)
      assert(RocketMQSinkRun.stateDir(Some("/cp/q"), "q", Some(session)) === Some("/cp/q"))
      session.conf.set("spark.sql.streaming.checkpointLocation", "/root")
      assert(RocketMQSinkRun.stateDir(Some("/cp/q"), "q", Some(session)) === Some("/cp/q"))
      assert(RocketMQSinkRun.stateDir(None, "q", Some(session)) === Some("/root/rocketmq-sink-q"))
    } finally {
      spark.stop()
      SparkSession.clearActiveSession()
      SparkSession.clearDefaultSession()
    }
  }

  test(
    "recorded without the checkpoint or credentials; recorded again when a run's options change") {
    val dir = Files.createTempDirectory("rocketmq-sink-resume-").toString
    val conf = new Configuration()
    val first =
      Map("nameServer" -> "old-name-server", "deliveryGuarantee" -> "exactly_once",
        "checkpointLocation" -> dir)
    RocketMQSinkRun.record(dir, first, conf)
    assert(RocketMQSinkRun.recorded(dir, conf) === Some(first - "checkpointLocation"))
    // A later run moved to another name server and producer group: its next run must use them.
    val second = first ++ Map("nameServer" -> "new-name-server", "producerGroup" -> "pg")
    RocketMQSinkRun.record(dir, second, conf)
    assert(RocketMQSinkRun.recorded(dir, conf) === Some(second - "checkpointLocation"))
    RocketMQSinkRun.record(dir, second ++ Map("secretKey" -> "s"), conf)
    assert(RocketMQSinkRun.recorded(dir, conf) === Some(second - "checkpointLocation"))
  }

  /** Listens to a new session of `spark` that nothing else holds. */
  private def listenInNewSession(spark: SparkSession): WeakReference[SparkSession] = {
    val session = spark.newSession()
    RocketMQSinkRun.listen(session)
    new WeakReference(session)
  }

  /** Whether `ref` is cleared within 20 s of collections asked for. */
  private def collected(ref: WeakReference[_]): Boolean =
    try {
      eventually(timeout(20.seconds), interval(50.millis)) {
        System.gc()
        assert(ref.get == null)
      }
      true
    } catch { case _: TestFailedDueToTimeoutException => false }

  test("sessions a catalog listens to are held weakly: a server's many sessions can be collected") {
    val spark = SparkSession.builder().master("local[1]").appName("sink-resume")
      .config("spark.ui.enabled", "false").getOrCreate()
    try {
      val others = (0 until 3).map(_ => listenInNewSession(spark))
      assert(others.forall(collected), "a session listened to stayed reachable")
    } finally {
      spark.stop()
      SparkSession.clearActiveSession()
      SparkSession.clearDefaultSession()
    }
  }
}
