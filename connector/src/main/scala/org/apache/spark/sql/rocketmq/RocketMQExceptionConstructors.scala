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

import java.util.{Map => JMap}

/**
 * The constructors of the connector's public exception types, for [[errors.RocketMQErrors]], the
 * one place that makes them. Those types are Java classes whose constructors are package-private,
 * so that users cannot make them; only code of this package may call them, and this object passes
 * the calls on for the packages below. Like the Java classes it names nothing else of the
 * connector: it belongs to their layer, the lowest (docs/development.md, Package layers).
 */
private[rocketmq] object RocketMQExceptionConstructors {

  def invalidInput(condition: String, sqlState: String, parameters: JMap[String, String],
      message: String,
      cause: Throwable): RocketMQInvalidInputException =
    new RocketMQInvalidInputException(condition, sqlState, parameters, message, cause)

  def unsupportedOperation(condition: String, sqlState: String, parameters: JMap[String, String],
      message: String,
      cause: Throwable): RocketMQUnsupportedOperationException =
    new RocketMQUnsupportedOperationException(condition, sqlState, parameters, message, cause)

  def dataLoss(condition: String, sqlState: String, parameters: JMap[String, String],
      message: String,
      cause: Throwable): RocketMQDataLossException =
    new RocketMQDataLossException(condition, sqlState, parameters, message, cause)

  def requestFailed(condition: String, sqlState: String, parameters: JMap[String, String],
      message: String,
      cause: Throwable): RocketMQRequestException =
    new RocketMQRequestException(condition, sqlState, parameters, message, cause)
}
