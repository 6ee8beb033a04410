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

package org.apache.spark.sql.rocketmq.common

import org.apache.rocketmq.acl.common.{AclClientRPCHook, SessionCredentials}
import org.apache.rocketmq.client.{AccessChannel, ClientConfig}
import org.apache.rocketmq.remoting.RPCHook
import org.apache.rocketmq.remoting.protocol.NamespaceUtil

/**
 * RocketMQ ACL credentials: an access key, its secret and, for temporary credentials, a security
 * token. Every request a client sends is signed with them. The secret and the token never show in
 * `toString`, so neither does anything that holds them (pool keys, settings, errors).
 */
private[rocketmq] final case class RocketMQCredentials(
    accessKey: String,
    secretKey: String,
    securityToken: Option[String]) {

  def rpcHook: RPCHook =
    new AclClientRPCHook(new SessionCredentials(accessKey, secretKey, securityToken.orNull))

  override def toString: String =
    s"RocketMQCredentials(accessKey=$accessKey, secretKey=${RocketMQConnection.Hidden}" +
      securityToken.fold("")(_ => s", securityToken=${RocketMQConnection.Hidden}") + ")"
}

/**
 * How the clients of one query reach RocketMQ: the name servers, the credentials, the namespace,
 * TLS and the access channel. It is resolved on the driver when the query is planned (by
 * [[RocketMQConnectionOptions]]) and travels to the executors inside the read and write settings;
 * every client pool keys on it, so two queries with different credentials never share a client.
 *
 * A namespace is applied here, not by the RocketMQ client: topics and groups are named
 * `namespace%name` on the brokers (RocketMQ's own convention), while the query, its rows and its
 * offsets use the plain names.
 */
private[rocketmq] final case class RocketMQConnection(
    nameServer: String,
    credentials: Option[RocketMQCredentials] = None,
    namespace: Option[String] = None,
    useTLS: Boolean = false,
    accessChannel: AccessChannel = AccessChannel.LOCAL) {

  /**
   * Applies everything but the namespace to a client's configuration. Without `useTLS` the client
   * keeps RocketMQ's own default (the JVM's system property `tls.enable`).
   */
  def configure(config: ClientConfig): Unit = {
    config.setNamesrvAddr(nameServer)
    if (useTLS) config.setUseTLS(true)
    config.setAccessChannel(accessChannel)
    config.setVipChannelEnabled(false)
  }

  /** The hook that signs requests, or null without credentials (RocketMQ's clients take null). */
  def rpcHook: RPCHook = credentials.map(_.rpcHook).orNull

  /** The access key, for errors: never the secret. */
  def accessKey: Option[String] = credentials.map(_.accessKey)

  /** What a topic or group is called on the brokers. */
  def onBroker(name: String): String =
    namespace.fold(name)(ns => NamespaceUtil.wrapNamespace(ns, name))

  /** What a topic or group the brokers name is called in the query. */
  def inQuery(name: String): String =
    namespace.fold(name)(ns => NamespaceUtil.withoutNamespace(name, ns))
}

private[rocketmq] object RocketMQConnection {

  /** What stands for a secret wherever one would be shown. */
  val Hidden = "*********(redacted)"
}
