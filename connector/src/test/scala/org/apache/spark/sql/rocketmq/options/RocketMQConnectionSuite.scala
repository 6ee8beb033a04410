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

package org.apache.spark.sql.rocketmq.options

import org.apache.rocketmq.client.AccessChannel
import org.scalatest.funsuite.AnyFunSuite

import org.apache.spark.sql.rocketmq.RocketMQInvalidInputException
import org.apache.spark.sql.rocketmq.common.{RocketMQConnection, RocketMQCredentials, RocketMQQueue}
import org.apache.spark.sql.rocketmq.consumer.{RocketMQConsumerPool, RocketMQReadSettings}
import org.apache.spark.sql.rocketmq.producer.{RocketMQProducerPool, RocketMQWriteSettings}

class RocketMQConnectionSuite extends AnyFunSuite {

  private def options(kv: (String, String)*) =
    new RocketMQOptions((Seq("nameServer" -> "h:1") ++ kv).toMap)

  private def resolve(o: RocketMQOptions, conf: Map[String, String] = Map.empty,
      env: Map[String, String] = Map.empty)
      : RocketMQConnection = RocketMQConnectionOptions.resolve(o, conf.get, env.get)

  test(
    "credentials come whole from the options, else the Spark configuration, else the environment") {
    val conf = Map("spark.rocketmq.accessKey" -> "conf-ak", "spark.rocketmq.secretKey" -> "conf-sk")
    val env = Map("ROCKETMQ_ACCESS_KEY" -> "env-ak", "ROCKETMQ_SECRET_KEY" -> "env-sk",
      "ROCKETMQ_SECURITY_TOKEN" -> "env-token")
    assert(resolve(options()).credentials === None)
    assert(resolve(options(), env = env).credentials ===
      Some(RocketMQCredentials("env-ak", "env-sk", Some("env-token"))))
    // The configuration's pair, without the environment's token: places never mix.
    assert(resolve(options(), conf, env).credentials ===
      Some(RocketMQCredentials("conf-ak", "conf-sk", None)))
    assert(resolve(options("accessKey" -> "opt-ak", "secretKey" -> "opt-sk",
      "securityToken" -> "opt-t"), conf, env)
      .credentials === Some(RocketMQCredentials("opt-ak", "opt-sk", Some("opt-t"))))
    // Blank counts as unset.
    assert(resolve(options("accessKey" -> " "), conf.map { case (k, _) => k -> " " },
      env).credentials ===
      Some(RocketMQCredentials("env-ak", "env-sk", Some("env-token"))))
  }

  test(
    "half a credential is an error naming the place, what is set and what is missing, never the " +
      "secret") {
    val conf = Map("spark.rocketmq.accessKey" -> "conf-ak", "spark.rocketmq.secretKey" -> "conf-sk")
    // A key in the options does not borrow the configuration's secret.
    val noSecret =
      intercept[RocketMQInvalidInputException](resolve(options("accessKey" -> "ak"), conf))
    assert(noSecret.getCondition === "ROCKETMQ_INCOMPLETE_CREDENTIALS")
    assert(noSecret.getMessage.contains(
        "in the query's options are incomplete: accessKey is set but secretKey is not"),
      noSecret.getMessage)
    val noKey = intercept[RocketMQInvalidInputException](resolve(options(),
      env = Map("ROCKETMQ_SECRET_KEY" -> "s3")))
    assert(noKey.getMessage.contains(
        "in the environment are incomplete: ROCKETMQ_SECRET_KEY is set but ROCKETMQ_ACCESS_KEY " +
          "is not"),
      noKey.getMessage)
    assert(!noKey.getMessage.contains("s3"), noKey.getMessage)
    val tokenOnly = intercept[RocketMQInvalidInputException](
      resolve(options(), Map("spark.rocketmq.securityToken" -> "tk")))
    assert(tokenOnly.getMessage.contains(
        "spark.rocketmq.securityToken is set but spark.rocketmq.accessKey is not"),
      tokenOnly.getMessage)
  }

  test("the secret and the token never show in toString, settings or pool keys") {
    val o = options("accessKey" -> "ak-1", "secretKey" -> "sk-secret-1",
      "securityToken" -> "tok-secret-1",
      "topic" -> "t")
    val connection = resolve(o)
    val shown = Seq(connection.toString, connection.credentials.get.toString,
      RocketMQReadSettings(o).copy(connection = connection).toString,
      RocketMQWriteSettings(o).copy(connection = connection).toString,
      RocketMQConsumerPool.Key(connection, "g").toString,
      RocketMQProducerPool.Key(connection, "g", 1).toString)
    shown.foreach { text =>
      assert(!text.contains("sk-secret-1") && !text.contains("tok-secret-1"), text)
      assert(text.contains("ak-1"), text)
    }
  }

  test("clients are never shared across credentials, namespaces or TLS settings") {
    val base = resolve(options("accessKey" -> "ak", "secretKey" -> "s1"))
    val variants = Seq(
      resolve(options("accessKey" -> "ak", "secretKey" -> "s2")),
      resolve(options("accessKey" -> "ak2", "secretKey" -> "s1")),
      resolve(options("accessKey" -> "ak", "secretKey" -> "s1", "securityToken" -> "t")),
      resolve(options("accessKey" -> "ak", "secretKey" -> "s1", "namespace" -> "ns")),
      resolve(options("accessKey" -> "ak", "secretKey" -> "s1", "useTLS" -> "true")),
      resolve(options("accessKey" -> "ak", "secretKey" -> "s1", "accessChannel" -> "cloud")))
    variants.foreach { other =>
      assert(RocketMQConsumerPool.Key(base, "g") != RocketMQConsumerPool.Key(other, "g"), other)
      assert(RocketMQProducerPool.Key(base, "g", 1) != RocketMQProducerPool.Key(other, "g", 1),
        other)
    }
    assert(RocketMQConsumerPool.Key(base, "g") === RocketMQConsumerPool.Key(
      resolve(options("accessKey" -> "ak", "secretKey" -> "s1")), "g"))
    assert(variants.last.accessChannel === AccessChannel.CLOUD)
  }

  test("a namespace prefixes topics and groups on the brokers, and is stripped back") {
    val plain = resolve(options())
    val scoped = resolve(options("namespace" -> "tenant_1"))
    assert(plain.onBroker("t") === "t" && plain.inQuery("t") === "t")
    assert(scoped.onBroker("orders") === "tenant_1%orders")
    assert(scoped.inQuery("tenant_1%orders") === "orders")
    assert(RocketMQQueue("orders", "b", 3).toMessageQueue(scoped).getTopic === "tenant_1%orders")
    val bad = intercept[RocketMQInvalidInputException](resolve(options("namespace" -> "a%b")))
    assert(bad.getCondition === "ROCKETMQ_INVALID_OPTION_VALUE.NAMESPACE" &&
      bad.getMessage.contains("'a%b'"))
  }
}
