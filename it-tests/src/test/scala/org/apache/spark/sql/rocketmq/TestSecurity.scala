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

import java.nio.charset.StandardCharsets.US_ASCII
import java.nio.file.{Files, Path}
import java.security.KeyStore
import java.security.cert.X509Certificate
import java.util.{Base64, UUID}
import java.util.concurrent.TimeUnit

import scala.jdk.CollectionConverters._

import org.apache.rocketmq.acl.common.{AclClientRPCHook, SessionCredentials}
import org.apache.rocketmq.auth.authentication.enums.UserType
import org.apache.rocketmq.auth.authentication.model.{User => AuthUser}
import org.apache.rocketmq.auth.authorization.enums.{Decision, PolicyType}
import org.apache.rocketmq.auth.authorization.model.{Acl, Policy, PolicyEntry, Resource}
import org.apache.rocketmq.auth.config.AuthConfig
import org.apache.rocketmq.broker.BrokerController
import org.apache.rocketmq.common.action.Action
import org.apache.rocketmq.remoting.RPCHook

/**
 * Secured test brokers: RocketMQ 5 authentication and authorization (ACL 2.0) with users made by
 * the harness, and TLS with a certificate generated at test time by the JDK's `keytool`.
 */
object TestSecurity {

  /** A user of a secured broker: its access key and secret. */
  final case class User(accessKey: String, secretKey: String) {
    def rpcHook: RPCHook = new AclClientRPCHook(new SessionCredentials(accessKey, secretKey))

    /** The connector options that sign in as this user. */
    def options: Map[String, String] = Map("accessKey" -> accessKey, "secretKey" -> secretKey)
  }

  /** The super user a secured broker starts with; the harness's own clients sign in as it. */
  val Admin: User = User("harness-admin", s"admin-secret-${UUID.randomUUID()}")

  /** A fresh user name and secret (the secret is distinctive, so a leak test can search for it). */
  def newUser(prefix: String): User =
    User(s"$prefix-${UUID.randomUUID().toString.take(8)}", s"secret-${UUID.randomUUID()}")

  /** What a user may do on every topic and group: read, or read and write. */
  val ReadOnly: Seq[Action] = Seq(Action.SUB, Action.GET)
  val ReadWrite: Seq[Action] = Seq(Action.PUB, Action.SUB, Action.GET)

  /**
   * Authentication and authorization on, users and ACLs kept under `root/auth`, [[Admin]] as super
   * user.
   */
  def authConfig(root: Path, clusterName: String): AuthConfig = {
    val config = new AuthConfig()
    // RocketMQ keeps one set of auth providers (and their RocksDB) per config name, JVM-wide: a
    // shared name let a stopped broker close the users of the next secured broker in this JVM (or
    // of itself, started again).
    config.setConfigName(s"broker-${UUID.randomUUID()}")
    config.setClusterName(clusterName)
    config.setAuthConfigPath(root.resolve("auth").toString)
    config.setAuthenticationEnabled(true)
    config.setAuthenticationProvider(
      "org.apache.rocketmq.auth.authentication.provider.DefaultAuthenticationProvider")
    config.setAuthenticationMetadataProvider(
      "org.apache.rocketmq.auth.authentication.provider.LocalAuthenticationMetadataProvider")
    config.setAuthorizationEnabled(true)
    config.setAuthorizationProvider(
      "org.apache.rocketmq.auth.authorization.provider.DefaultAuthorizationProvider")
    config.setAuthorizationMetadataProvider(
      "org.apache.rocketmq.auth.authorization.provider.LocalAuthorizationMetadataProvider")
    config.setInitAuthenticationUser(
      s"""{"username":"${Admin.accessKey}","password":"${Admin.secretKey}"}""")
    config.setInnerClientAuthenticationCredentials(
      s"""{"accessKey":"${Admin.accessKey}","secretKey":"${Admin.secretKey}"}""")
    config
  }

  /**
   * Creates `user` on a secured broker, allowed `actions` on every topic and group (none: nothing).
   */
  def createUser(broker: BrokerController, user: User, actions: Seq[Action]): Unit = {
    broker.getAuthenticationMetadataManager
      .createUser(AuthUser.of(user.accessKey, user.secretKey, UserType.NORMAL)).get(30,
        TimeUnit.SECONDS)
    if (actions.nonEmpty) {
      val policy =
        Policy.of(Seq(Resource.of("Topic:*"), Resource.of("Group:*")).asJava, actions.asJava, null,
          Decision.ALLOW)
      broker.getAuthorizationMetadataManager.createAcl(Acl.of(AuthUser.of(user.accessKey), policy))
        .get(30, TimeUnit.SECONDS)
    }
  }

  /**
   * Creates `user` on a secured broker with exactly `rights`: each resource (`Topic:orders`,
   * `Group:etl`, `Topic:*`) with the actions allowed on it, as an operator grants an application
   * least privilege.
   */
  def createUserWithRights(broker: BrokerController, user: User, rights: Seq[(String, Seq[Action])])
      : Unit = {
    broker.getAuthenticationMetadataManager
      .createUser(AuthUser.of(user.accessKey, user.secretKey, UserType.NORMAL)).get(30,
        TimeUnit.SECONDS)
    // One policy of entries: an ACL holds one policy of each type.
    val entries = rights.map { case (resource, actions) =>
      PolicyEntry.of(Resource.of(resource), actions.asJava, null, Decision.ALLOW)
    }
    broker.getAuthorizationMetadataManager
      .createAcl(Acl.of(AuthUser.of(user.accessKey), Policy.of(PolicyType.CUSTOM, entries.asJava)))
      .get(30, TimeUnit.SECONDS)
  }

  /** `Topic:t=Sub+Get,Group:g=Sub` as resources and their actions (RocketMQ's own action names). */
  def parseRights(text: String): Seq[(String, Seq[Action])] = text.split(',').toSeq.map { entry =>
    val Array(resource, actions) = entry.split('=')
    resource -> actions.split('+').toSeq.map(a => Action.getByName(a))
  }

  /**
   * The JVM system properties of a RocketMQ process whose name server and broker accept TLS only,
   * with the certificate and key of [[generateCertificate]] in `dir`; its own clients use TLS too.
   * RocketMQ reads them once, when its TLS settings class loads, so they are set before anything
   * starts.
   */
  def tlsServerProperties(dir: Path): Seq[(String, String)] = Seq(
    "tls.server.mode" -> "enforcing",
    "tls.test.mode.enable" -> "false",
    "tls.server.certPath" -> dir.resolve("broker-cert.pem").toString,
    "tls.server.keyPath" -> dir.resolve("broker-key.pem").toString,
    "tls.server.need.client.auth" -> "none",
    "tls.enable" -> "true",
    "tls.client.authServer" -> "false")

  /**
   * A self-signed certificate for 127.0.0.1 made by `keytool`, written as the PEM files RocketMQ's
   * TLS server reads: the certificate and its private key in PKCS#8.
   */
  def generateCertificate(dir: Path): Unit = {
    Files.createDirectories(dir)
    val keystore = dir.resolve("broker.p12")
    Files.deleteIfExists(keystore)
    val password = "harness"
    val keytool = Path.of(System.getProperty("java.home"), "bin", "keytool").toString
    val process =
      new ProcessBuilder(keytool, "-genkeypair", "-alias", "broker", "-keyalg", "RSA", "-keysize",
        "2048", "-validity", "7", "-dname", "CN=127.0.0.1", "-ext", "SAN=ip:127.0.0.1",
        "-storetype", "PKCS12",
        "-keystore", keystore.toString, "-storepass", password, "-keypass", password)
        .redirectErrorStream(true).start()
    val output = new String(process.getInputStream.readAllBytes(), US_ASCII)
    require(process.waitFor(60, TimeUnit.SECONDS) && process.exitValue() == 0,
      s"keytool failed: $output")
    val store = KeyStore.getInstance("PKCS12")
    val in = Files.newInputStream(keystore)
    try store.load(in, password.toCharArray)
    finally in.close()
    val key = store.getKey("broker", password.toCharArray)
    val cert = store.getCertificate("broker").asInstanceOf[X509Certificate]
    Files.writeString(dir.resolve("broker-key.pem"), pem("PRIVATE KEY", key.getEncoded))
    Files.writeString(dir.resolve("broker-cert.pem"), pem("CERTIFICATE", cert.getEncoded))
  }

  private def pem(kind: String, der: Array[Byte]): String =
    s"-----BEGIN $kind-----\n" +
      s"${Base64.getMimeEncoder(64, "\n".getBytes(US_ASCII)).encodeToString(der)}\n" +
      s"-----END $kind-----\n"
}
