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

import org.apache.spark.sql.connector.metric.CustomTaskMetric
import org.apache.spark.sql.connector.write.Write

/**
 * A write whose node's SQL metrics Spark sets from the driver once its job is done: the Spark 3.5
 * build compiles against 3.5.0's `Write`, which lacks the call, so they are only kept here.
 */
private[rocketmq] trait RocketMQDriverMetrics extends Write {
  def driverMetrics: Array[CustomTaskMetric]
}
