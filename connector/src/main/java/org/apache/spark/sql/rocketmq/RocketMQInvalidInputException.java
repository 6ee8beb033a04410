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

package org.apache.spark.sql.rocketmq;

import java.util.Collections;
import java.util.Map;

import org.apache.spark.SparkThrowable;

/**
 * Input the connector cannot use: an option, a column or a row value of the data written, a topic
 * or queue that does not exist, or a checkpoint it cannot read. The message names what was given
 * and what is allowed; retrying the same input fails the same way.
 *
 * <p>Written in Java, as {@link RocketMQException} says why.
 */
public final class RocketMQInvalidInputException extends IllegalArgumentException
    implements SparkThrowable {
  private final String condition;
  private final String sqlState;
  private final Map<String, String> parameters;

  RocketMQInvalidInputException(String condition, String sqlState, Map<String, String> parameters,
      String message, Throwable cause) {
    super(message, cause);
    this.condition = condition;
    this.sqlState = sqlState;
    this.parameters = Collections.unmodifiableMap(parameters);
  }

  /**
   * The condition, as Spark 4 asks for it (no {@code @Override}: Spark 3.5's interface lacks it).
   */
  public String getCondition() {
    return condition;
  }

  /** The condition, as Spark 3.5 asks for it (Spark 4 still calls it, deprecated). */
  @SuppressWarnings("deprecation")
  public String getErrorClass() {
    return condition;
  }

  @Override
  public String getSqlState() {
    return sqlState;
  }

  @Override
  public Map<String, String> getMessageParameters() {
    return parameters;
  }
}
