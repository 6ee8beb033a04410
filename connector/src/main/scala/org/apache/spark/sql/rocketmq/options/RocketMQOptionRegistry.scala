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

package org.apache.spark.sql.rocketmq.options

import scala.collection.mutable

import org.apache.spark.sql.rocketmq.options.RocketMQOption._

/**
 * Where the connector's options are declared: each declaration joins [[registry]], in the order
 * of the option reference.
 */
private[options] abstract class RocketMQOptionRegistry {

  private val declared = mutable.ArrayBuffer.empty[RocketMQOption[_]]

  protected def declare[O <: RocketMQOption[_]](option: O): O = {
    declared += option
    option
  }

  protected def required[T](key: String, kind: RocketMQOptionKind[T], queryType: QueryType,
      meaning: String,
      value: String = null): Required[T] =
    declare(Required(key, kind, queryType, meaning, Option(value).getOrElse(kind.description)))

  protected def defaulted[T](key: String, kind: RocketMQOptionKind[T], default: T,
      queryType: QueryType,
      meaning: String, value: String = null): Defaulted[T] =
    declare(Defaulted(key, kind, default, queryType, meaning,
      Option(value).getOrElse(kind.description)))

  protected def unset[T](key: String, kind: RocketMQOptionKind[T], queryType: QueryType,
      meaning: String,
      value: String = null, default: String = "(none)"): Unset[T] =
    declare(Unset(key, kind, queryType, meaning, Option(value).getOrElse(kind.description),
      default))

  /** Every option, in declaration order (the option reference's). */
  lazy val registry: Seq[RocketMQOption[_]] = declared.toList
}
