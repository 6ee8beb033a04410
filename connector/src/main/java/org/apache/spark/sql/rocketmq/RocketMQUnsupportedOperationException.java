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
 * An operation a RocketMQ topic cannot take, asked of the RocketMQ catalog: changing or renaming a
 * table, columns or partitioning of a new one, or dropping one where the catalog does not allow it.
 * The message says what to do instead; retrying fails the same way.
 *
 * <p>Written in Java, as {@link RocketMQException} says why.
 */
public final class RocketMQUnsupportedOperationException extends UnsupportedOperationException
    implements SparkThrowable {
  private final String condition;
  private final String sqlState;
  private final Map<String, String> parameters;

  RocketMQUnsupportedOperationException(String condition, String sqlState,
      Map<String, String> parameters, String message, Throwable cause) {
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
