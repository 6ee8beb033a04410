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

import java.net.ServerSocket

import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.rocketmq.options.RocketMQOptions
import org.apache.spark.sql.types.{StringType, StructType}

/** Whether a write's endpoint is a RocketMQ 5 proxy, when nothing answers the question. */
class RocketMQProxyCheckSuite extends AnyFunSuite {

  private def plan(nameServer: String, deliveryGuarantee: String): RocketMQWrite = {
    val options = new RocketMQOptions(Map("nameServer" -> nameServer, "topic" -> "t",
      "deliveryGuarantee" -> deliveryGuarantee, "requestTimeoutMs" -> "500",
      "metadataRetries" -> "2", "metadataRetryIntervalMs" -> "50"))
    // The topic check is left out: it asks the same endpoint, and this is about the proxy check.
    RocketMQWrite.plan(options, new StructType().add("body", StringType), "q",
      checkpointLocation = None, requireTopic = (_, _) => ())
  }

  test("an exactly-once write fails before sending anything when its endpoint cannot be checked") {
    val closed = {
      val socket = new ServerSocket(0)
      try socket.getLocalPort
      finally socket.close()
    }
    val silent = new ServerSocket(0) // connections are accepted by the kernel, never answered
    try {
      for (endpoint <- Seq(s"127.0.0.1:$closed", s"127.0.0.1:${silent.getLocalPort}")) {
        val e = intercept[RocketMQRequestException](plan(endpoint, "exactly_once"))
        assert(e.getCondition === "ROCKETMQ_ENDPOINT_UNCHECKED", e.getMessage)
        assert(e.getMessage.contains(endpoint), e.getMessage)
        assert(e.getMessage.contains("2 attempt(s)"), e.getMessage)
        assert(e.getMessage.contains("Nothing was sent"), e.getMessage)
      }
    } finally silent.close()
    // At least once is the same through a proxy: the write goes on as to a cluster.
    assert(!plan(s"127.0.0.1:$closed", "at_least_once").settings.throughProxy)
  }
}
