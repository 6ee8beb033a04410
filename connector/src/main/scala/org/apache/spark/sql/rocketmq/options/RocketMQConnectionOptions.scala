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

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.rocketmq.common.{RocketMQConnection, RocketMQCredentials}
import org.apache.spark.sql.rocketmq.errors.RocketMQErrors

/**
 * The [[RocketMQConnection]] of a query, resolved from its options, the Spark configuration and the
 * environment.
 */
private[rocketmq] object RocketMQConnectionOptions {

  /**
   * The names credentials have in one place they are looked for, and how errors call that place.
   */
  final case class CredentialNames(accessKey: String, secretKey: String, securityToken: String,
      place: String)

  val InOptions: CredentialNames =
    CredentialNames(RocketMQOptions.AccessKey.key, RocketMQOptions.SecretKey.key,
      RocketMQOptions.SecurityToken.key, "the query's options")
  val InSparkConf: CredentialNames =
    CredentialNames("spark.rocketmq.accessKey", "spark.rocketmq.secretKey",
      "spark.rocketmq.securityToken", "the Spark configuration")
  val InEnvironment: CredentialNames = CredentialNames("ROCKETMQ_ACCESS_KEY", "ROCKETMQ_SECRET_KEY",
    "ROCKETMQ_SECURITY_TOKEN", "the environment")

  /**
   * The connection of a query. Credentials are taken whole from the first place that sets any of
   * them: the query's options, else the Spark configuration (`spark.rocketmq.accessKey` …), else
   * the environment (`ROCKETMQ_ACCESS_KEY` …); never a key from one place and a secret from
   * another. Half a credential there (a key without its secret, or the reverse) is an error naming
   * the place.
   */
  def resolve(options: RocketMQOptions, sparkConf: String => Option[String],
      environment: String => Option[String])
      : RocketMQConnection = {
    val optionsByKey =
      Seq(RocketMQOptions.AccessKey, RocketMQOptions.SecretKey, RocketMQOptions.SecurityToken)
        .map(o => o.key -> o).toMap
    def nonBlank(lookUp: String => Option[String]): String => Option[String] =
      name => lookUp(name).map(_.trim).filter(_.nonEmpty)
    val places = Seq(
      InOptions -> ((name: String) => options.rawValue(optionsByKey(name))),
      InSparkConf -> nonBlank(sparkConf),
      InEnvironment -> nonBlank(environment))
    val found = places.iterator.map { case (names, lookUp) =>
      (names, lookUp(names.accessKey), lookUp(names.secretKey), lookUp(names.securityToken))
    }.find { case (_, key, secret, token) => key.isDefined || secret.isDefined || token.isDefined }
    val credentials = found.map {
      case (_, Some(key), Some(secret), token) => RocketMQCredentials(key, secret, token)
      case (names, key, secret, _) =>
        val present = if (key.isDefined) names.accessKey
        else if (secret.isDefined) names.secretKey
        else names.securityToken
        throw RocketMQErrors.incompleteCredentials(names.place, present,
          missing = if (key.isEmpty) names.accessKey else names.secretKey)
    }
    RocketMQConnection(
      nameServer = options(RocketMQOptions.NameServer),
      credentials = credentials,
      namespace = options(RocketMQOptions.Namespace),
      useTLS = options(RocketMQOptions.UseTLS),
      accessChannel = options(RocketMQOptions.AccessChannelOption))
  }

  /** The active session's configuration (the driver's), if there is one. */
  def activeSparkConf(key: String): Option[String] =
    SparkSession.getActiveSession.orElse(SparkSession.getDefaultSession).flatMap(
      _.conf.getOption(key))
}
