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

import scala.jdk.CollectionConverters._

import org.apache.logging.log4j.{Level, LogManager}
import org.apache.logging.log4j.core.{LogEvent, LoggerContext}
import org.apache.logging.log4j.core.appender.AbstractAppender
import org.apache.logging.log4j.core.config.{Configurator, Property}

/**
 * Watches this JVM's log for what the connector says of its writes to `topic`: a send that failed
 * in a way that may have stored it (the message sender's warning, after which it asks the broker),
 * and the counts `save()` reports when it is done. Conditions a test can wait on, and figures it
 * can check.
 */
final class SendLog(topic: String) extends AutoCloseable {
  private val lines = new java.util.concurrent.ConcurrentLinkedQueue[String]()
  private val appender = new AbstractAppender("send-log", null, null, true, Property.EMPTY_ARRAY) {
    override def append(event: LogEvent): Unit = {
      val text = event.getMessage.getFormattedMessage
      if (text.startsWith(s"Send to topic $topic failed") ||
        text.startsWith(s"The write to $topic ")) {
        lines.add(text)
      }
    }
  }
  private val context = LogManager.getContext(false).asInstanceOf[LoggerContext]
  appender.start()
  context.getConfiguration.getRootLogger.addAppender(appender, Level.INFO, null)
  // save()'s counts are logged at INFO when no message may be stored twice.
  Configurator.setLevel(RocketMQRelationWrite.getClass.getName, Level.INFO)
  context.updateLoggers()

  /** A send failed in a way that may have stored it (a timeout, a connection lost mid-request). */
  def seen: Boolean = lines.asScala.exists(_.contains("asking whether it was stored"))

  /**
   * The counts of the last `save()` to the topic that finished (`possibleDuplicates` and others).
   */
  def saveCounts: Map[String, Long] =
    lines.asScala.filter(_.startsWith(s"The write to $topic ")).lastOption.toSeq
      .flatMap(_.split(": ", 2).last.split(", ")).map(_.split("=", 2))
      .collect { case Array(name, value) => name -> value.toLong }.toMap

  override def close(): Unit = {
    Configurator.setLevel(RocketMQRelationWrite.getClass.getName, Level.WARN)
    context.getConfiguration.getRootLogger.removeAppender(appender.getName)
    context.updateLoggers()
    appender.stop()
  }
}
