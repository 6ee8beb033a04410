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

import java.util.UUID
import java.util.concurrent.{ConcurrentHashMap, CountDownLatch, TimeUnit, TimeoutException}
import java.util.concurrent.atomic.{AtomicInteger, AtomicLong}
import java.util.concurrent.locks.LockSupport

import scala.concurrent.{Await, Future}
import scala.concurrent.ExecutionContext.Implicits.global
import scala.concurrent.duration._

import org.apache.rocketmq.remoting.RPCHook
import org.apache.rocketmq.remoting.protocol.{RemotingCommand, RequestCode, ResponseCode}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.TaskContext
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.expressions.UserDefinedFunction
import org.apache.spark.sql.functions.{col, count, count_distinct, lit, udf}

/**
 * The broker process and `local[2,4]` Spark session of [[RocketMQBrokerRestartSuite]], and its
 * helpers: crashing and restarting the broker, holding tasks at a row ([[Gate]]), awaiting jobs.
 */
trait RocketMQBrokerRestartSuiteBase extends AnyFunSuite with BeforeAndAfterAll {
  import RocketMQBrokerRestartSuiteBase._

  protected val OutageMs = 5000L

  protected var broker: RocketMQBrokerProcess = _
  protected var spark: SparkSession = _

  override protected def beforeAll(): Unit = {
    super.beforeAll()
    broker = new RocketMQBrokerProcess().start()
    spark = RocketMQSparkSuiteBase.localSession("local[2,4]", getClass.getSimpleName)
    assert(spark.sparkContext.master == "local[2,4]", "another Spark session is still active")
  }

  override protected def afterAll(): Unit = {
    try if (spark != null) spark.stop()
    finally
      try if (broker != null) broker.close()
      finally super.afterAll()
  }

  protected def newTopic(prefix: String): String = s"$prefix-${UUID.randomUUID().toString.take(8)}"

  protected def read(topic: String): DataFrame = spark.read.format("rocketmq")
    .option("nameServer", broker.nameServer).option("topic", topic).option("startingOffsets",
      "earliest").load()

  /** Rows read and distinct ids among them, in one job. */
  protected def countAndDistinct(ids: DataFrame): (Long, Long) = {
    val row = ids.agg(count(lit(1)), count_distinct(col("id"))).head()
    (row.getLong(0), row.getLong(1))
  }

  /**
   * Runs `beforeKill`, kills the broker at once, runs `whileDown` (given the outage's end, a
   * `System.nanoTime`), leaves the broker down until [[OutageMs]] after the kill and restarts it.
   */
  protected def crashAndRestart(beforeKill: () => Unit = () => (),
      whileDown: Long => Unit = _ => ())
      : Unit = {
    beforeKill()
    val killedAt = System.nanoTime()
    val outageEnd = killedAt + OutageMs * 1000000L
    broker.kill()
    info(s"name server dropped the broker ${broker.lastDropMillis} ms after SIGKILL")
    whileDown(outageEnd)
    while (System.nanoTime() < outageEnd) LockSupport.parkNanos(outageEnd - System.nanoTime())
    broker.restart()
    info(s"broker back after ${(System.nanoTime() - killedAt) / 1000000} ms (restart took " +
      s"${broker.lastStartMillis} ms, listening after ${broker.lastReadyMillis} ms, ports free " +
      s"after ${broker.lastPortWaitMillis} ms)")
  }

  /**
   * Checks, once the broker is down, that `job` did not finish before: the crash hit it mid-way.
   */
  protected def assertNotDone(job: Future[_]): Unit =
    assert(!job.value.exists(_.isSuccess), "the job finished before the broker was killed")

  /**
   * The result of `job`, or a failure naming `what` after `timeout` (its Spark jobs are then
   * cancelled).
   */
  protected def await[T](job: Future[T], what: String, timeout: FiniteDuration = 3.minutes): T =
    try Await.result(job, timeout)
    catch {
      case _: TimeoutException =>
        spark.sparkContext.cancelAllJobs()
        fail(s"$what did not finish within $timeout")
    }

  protected def awaitLatch(latch: CountDownLatch, what: String): Unit =
    assert(latch.await(2, TimeUnit.MINUTES), s"timed out waiting for $what")

  /** Whatever a failed test left: tasks released, the broker up for the next test. */
  protected def cleanUp(): Unit = {
    Gate.open()
    if (!broker.isRunning) broker.restart()
  }

  /**
   * On the name server: once it has answered a route request for `topic` with "no route", restarts
   * the broker, and holds the next live-broker request until the broker is back (the order of a
   * crash and restart between the two requests). `get` counts the restarts begun; `set(0)` arms it
   * again.
   */
  protected final class RestartAfterNoRoute(topic: String) extends RPCHook {
    private val begun = new AtomicInteger(0)
    @volatile private var restart: Future[Unit] = Future.successful(())

    def get: Int = begun.get
    def set(value: Int): Unit = begun.set(value)

    override def doBeforeRequest(address: String, request: RemotingCommand): Unit =
      if (request.getCode == RequestCode.GET_BROKER_CLUSTER_INFO) Await.ready(restart, 2.minutes)

    override def doAfterResponse(address: String, request: RemotingCommand,
        response: RemotingCommand): Unit =
      if (request.getCode == RequestCode.GET_ROUTEINFO_BY_TOPIC && response != null &&
        response.getCode == ResponseCode.TOPIC_NOT_EXIST &&
        Option(request.getExtFields).exists(_.get("topic") == topic) &&
        begun.getAndIncrement() == 0) {
        restart = Future(broker.restart())
      }
  }
}

object RocketMQBrokerRestartSuiteBase {

  /**
   * Holds every task attempt at its `rowsBeforeGate`-th row until [[open]]: the test kills the
   * broker once a task got there (it has pulled or handed over its first rows and needs the broker
   * again).
   */
  object Gate {
    @volatile private var threshold = Long.MaxValue
    @volatile private var release = new CountDownLatch(0)
    @volatile var reached = new CountDownLatch(1)
    private val rowsPerAttempt = new ConcurrentHashMap[Long, AtomicLong]()
    val attempts = new AtomicInteger()

    def reset(rowsBeforeGate: Long): Unit = {
      rowsPerAttempt.clear()
      attempts.set(0)
      reached = new CountDownLatch(1)
      release = new CountDownLatch(1)
      threshold = rowsBeforeGate
    }

    def open(): Unit = release.countDown()

    private[RocketMQBrokerRestartSuiteBase] def pass(): Unit = {
      val attempt = TaskContext.get().taskAttemptId()
      val rows = rowsPerAttempt.computeIfAbsent(attempt,
        _ => { attempts.incrementAndGet(); new AtomicLong() })
      if (rows.incrementAndGet() == threshold) {
        reached.countDown()
        release.await(5, TimeUnit.MINUTES)
      }
    }
  }

  /** The string unchanged, each row passing the [[Gate]]. */
  val gated: UserDefinedFunction = udf { (s: String) => Gate.pass(); s }.asNondeterministic()
}
