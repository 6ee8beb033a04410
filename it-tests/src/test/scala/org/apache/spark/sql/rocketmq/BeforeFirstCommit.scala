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

import java.util.concurrent.atomic.AtomicBoolean

import scala.jdk.CollectionConverters._

import org.apache.rocketmq.client.impl.MQClientManager
import org.apache.rocketmq.remoting.RPCHook
import org.apache.rocketmq.remoting.protocol.{RemotingCommand, RequestCode}

import org.apache.spark.sql.expressions.UserDefinedFunction
import org.apache.spark.sql.functions.udf

/**
 * Runs a test's action on the driver right after an exactly-once batch write
 * (`DataFrameWriter.save`) has decided its epoch, before its first commit: as the first
 * END_TRANSACTION request of the write's transaction client is about to go out. That client is
 * started before the write's tasks run, so the first row through [[passing]] (tasks run in the
 * driver's JVM, `local` masters) hooks every transaction client started since [[arm]], with the
 * client's own request hook (RPCHook).
 */
object BeforeFirstCommit {
  /** The instance names of the connector's transaction clients start with this. */
  private val TransactionClients = "spark-rocketmq-transactions"

  @volatile private var action: Option[() => Unit] = None
  @volatile private var known = Set.empty[String]
  private val ran = new AtomicBoolean()

  /**
   * The next exactly-once batch write run through [[passing]] runs `run` before its first commit.
   */
  def arm(run: () => Unit): Unit = synchronized {
    known = clientIds
    ran.set(false)
    action = Some(run)
  }

  def disarm(): Unit = synchronized { action = None }

  /** Whether the action ran since [[arm]]. */
  def hasRun: Boolean = ran.get

  /** The string unchanged; hooks the transaction clients started since [[arm]]. */
  val passing: UserDefinedFunction = udf { (s: String) => hookNewClients(); s }.asNondeterministic()

  private def clientIds: Set[String] =
    MQClientManager.getInstance().getFactoryTable.keySet.asScala.toSet

  private def hookNewClients(): Unit = synchronized {
    action.foreach { run =>
      MQClientManager.getInstance().getFactoryTable.asScala.foreach { case (id, client) =>
        if (id.contains(TransactionClients) && !known(id)) {
          client.getMQClientAPIImpl.getRemotingClient.registerRPCHook(beforeFirstEnd(run))
          known += id
        }
      }
    }
  }

  private def beforeFirstEnd(run: () => Unit): RPCHook = new RPCHook {
    override def doBeforeRequest(remoteAddr: String, request: RemotingCommand): Unit =
      if (request.getCode == RequestCode.END_TRANSACTION && ran.compareAndSet(false, true)) run()
    override def doAfterResponse(remoteAddr: String, request: RemotingCommand,
        response: RemotingCommand): Unit =
      ()
  }
}
