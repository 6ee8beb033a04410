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

import org.apache.logging.log4j.{Level, LogManager}
import org.apache.logging.log4j.core.{LogEvent, LoggerContext}
import org.apache.logging.log4j.core.appender.AbstractAppender
import org.apache.logging.log4j.core.config.Property

/**
 * Watches this JVM's log for a send to `topic` that failed in a way that may have stored it and was sent
 * again (the message sender's warning): a condition a test can wait on.
 */
final class SendLog(topic: String) extends AutoCloseable {
  private val resent = new AtomicBoolean()
  private val appender = new AbstractAppender("send-log", null, null, true, Property.EMPTY_ARRAY) {
    override def append(event: LogEvent): Unit = {
      val text = event.getMessage.getFormattedMessage
      if (text.startsWith(s"Send to topic $topic failed (resend") && text.toLowerCase.contains("timeout")) {
        resent.set(true)
      }
    }
  }
  private val context = LogManager.getContext(false).asInstanceOf[LoggerContext]
  appender.start()
  context.getConfiguration.getRootLogger.addAppender(appender, Level.WARN, null)
  context.updateLoggers()

  def seen: Boolean = resent.get

  override def close(): Unit = {
    context.getConfiguration.getRootLogger.removeAppender(appender.getName)
    context.updateLoggers()
    appender.stop()
  }
}
