package org.apache.spark.sql.rocketmq;

import java.util.Map;

/**
 * Offsets a read was planned to cover can no longer be read: the messages expired, or their queue
 * or topic was removed or recreated. A streaming query opts out with option failOnDataLoss=false.
 */
public final class RocketMQDataLossException extends RocketMQException {
  RocketMQDataLossException(String condition, String sqlState, Map<String, String> parameters, String message,
      Throwable cause) {
    super(condition, sqlState, parameters, message, cause);
  }
}
