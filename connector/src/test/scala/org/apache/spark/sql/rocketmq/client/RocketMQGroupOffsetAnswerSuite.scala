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

package org.apache.spark.sql.rocketmq.client

import java.nio.charset.StandardCharsets

import org.apache.rocketmq.client.exception.MQBrokerException
import org.apache.rocketmq.common.MQVersion.Version
import org.apache.rocketmq.remoting.protocol.{RemotingCommand, ResponseCode}
import org.apache.rocketmq.remoting.protocol.RemotingSysResponseCode
import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.rocketmq.client.RocketMQGroupOffsetAnswer._

/** What a broker's answer to a group offset query means, by its release: one row per case. */
class RocketMQGroupOffsetAnswerSuite extends AnyFunSuite {
  private val v497 = Version.V4_9_7.ordinal()
  private val v500 = Version.V5_0_0.ordinal()
  private val v533 = Version.V5_3_3.ordinal()

  /** (case, code, offset, broker version, meaning). */
  private val table: Seq[(String, Int, Long, Int, Option[Kind])] = Seq(
    ("4.9: an offset past 0", RemotingSysResponseCode.SUCCESS, 17L, v497, Some(Committed(17L))),
    ("4.9: 0, committed or not", RemotingSysResponseCode.SUCCESS, 0L, v497, Some(ZeroOrNever)),
    ("no version stamped: 0 in doubt", RemotingSysResponseCode.SUCCESS, 0L, 0, Some(ZeroOrNever)),
    ("5.0: a 0 is committed", RemotingSysResponseCode.SUCCESS, 0L, v500, Some(Committed(0L))),
    ("5.3: a 0 is committed", RemotingSysResponseCode.SUCCESS, 0L, v533, Some(Committed(0L))),
    ("not found", ResponseCode.QUERY_NOT_FOUND, -1L, v497, Some(NotCommitted)),
    ("any other answer", RemotingSysResponseCode.SYSTEM_ERROR, -1L, v533, None))

  table.foreach { case (name, code, offset, version, meaning) =>
    test(s"classify: $name") {
      assert(classify(code, offset, version) === meaning)
    }
  }

  test("the offset is read only from a found answer (a not found carries none)") {
    assert(classify(ResponseCode.QUERY_NOT_FOUND, fail("read"), v497) === Some(NotCommitted))
  }

  test("a response: its offset and its version; any other code fails as the client's call does") {
    val broker = "broker-a.example" // only named in errors: nothing is connected
    val found = RemotingCommand.createResponseCommand(RemotingSysResponseCode.SUCCESS, null)
    found.addExtField("offset", "0")
    found.setVersion(v497)
    assert(of(found, broker) === ZeroOrNever)
    found.setVersion(v533)
    assert(of(found, broker) === Committed(0L))
    val busy = RemotingCommand.createResponseCommand(RemotingSysResponseCode.SYSTEM_BUSY, "busy")
    val e = intercept[MQBrokerException](of(busy, broker))
    assert(e.getResponseCode === RemotingSysResponseCode.SYSTEM_BUSY)
  }

  test("a 4.9 broker's table of every group's offsets (fastjson 1 text: queue ids unquoted)") {
    val body =
      ("""{"offsetTable":{"orders@etl":{0:0,1:17},"orders@other":{0:3},""" +
        """"%RETRY%etl@etl":{0:0}}}""").getBytes(StandardCharsets.UTF_8)
    assert(committedIn(body, "orders", "etl") === Map(0 -> 0L, 1 -> 17L))
    assert(committedIn(body, "orders", "never") === Map.empty)
    val empty = """{"offsetTable":{}}""".getBytes(StandardCharsets.UTF_8)
    assert(committedIn(empty, "orders", "etl") === Map.empty)
  }
}
