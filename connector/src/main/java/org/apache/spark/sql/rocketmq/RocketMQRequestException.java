package org.apache.spark.sql.rocketmq;

import java.util.Map;

/**
 * A request to a RocketMQ name server or broker failed (unreachable, timed out, or answered with an
 * error) after the attempts the options allow. The message carries the broker's own reason.
 */
public final class RocketMQRequestException extends RocketMQException {
  RocketMQRequestException(String condition, String sqlState, Map<String, String> parameters, String message,
      Throwable cause) {
    super(condition, sqlState, parameters, message, cause);
  }
}
