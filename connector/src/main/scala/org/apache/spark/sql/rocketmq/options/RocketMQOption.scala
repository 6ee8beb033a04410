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

/**
 * The declaration of one option: its key, the kind of value it takes, its default, the queries it
 * applies to and one line of documentation. Declarations live in [[RocketMQOptions]]; the option
 * reference's option table, the checks made when a query is planned and the Python keywords are
 * derived from them. How the default is declared says how it is read:
 *  - [[RocketMQOption.Required]]: there is none; a missing value is an error naming the option;
 *  - [[RocketMQOption.Defaulted]]: one value, the one the option reference shows;
 *  - [[RocketMQOption.DefaultPerQuery]]: one value for batch and one for streaming queries;
 * - [[RocketMQOption.Unset]]: none, and unset means something of its own (said in the option
 *   reference).
 */
private[rocketmq] sealed abstract class RocketMQOption[T] {
  def key: String
  def kind: RocketMQOptionKind[T]
  def queryType: RocketMQOption.QueryType
  def meaning: String

  /**
   * The option reference's "Value" column: the kind's description unless the declaration words it
   * itself.
   */
  def valueText: String

  /** The option reference's "Default" column. */
  def defaultText: String

  /** Whether a query cannot run without it (the Python functions then take it positionally). */
  def isRequired: Boolean = false
}

private[rocketmq] object RocketMQOption {

  /** Which queries an option applies to, as the option reference's "Query type" column says it. */
  sealed abstract class QueryType(val text: String, val batchRead: Boolean, val streamRead: Boolean,
      val write: Boolean)
  case object SourceBoth extends QueryType("streaming and batch", true, true, false)
  case object BatchOnly extends QueryType("batch query", true, false, false)
  case object StreamOnly extends QueryType("streaming query", false, true, false)
  case object SinkOnly extends QueryType("sink (batch and streaming)", false, false, true)
  case object Everywhere extends QueryType("source and sink", true, true, true)
  /** Options of the catalog itself (`spark.sql.catalog.<name>.<option>`), not of a query. */
  case object CatalogOnly extends QueryType("catalog", false, false, false)

  final case class Required[T](
      key: String,
      kind: RocketMQOptionKind[T],
      queryType: QueryType,
      meaning: String,
      valueText: String)
    extends RocketMQOption[T] {
    override def defaultText: String = "(required)"
    override def isRequired: Boolean = true
  }

  final case class Defaulted[T](
      key: String,
      kind: RocketMQOptionKind[T],
      default: T,
      queryType: QueryType,
      meaning: String,
      valueText: String)
    extends RocketMQOption[T] {
    override def defaultText: String = kind.render(default)
  }

  final case class DefaultPerQuery[T](
      key: String,
      kind: RocketMQOptionKind[T],
      batchDefault: T,
      streamDefault: T,
      queryType: QueryType,
      meaning: String,
      valueText: String)
    extends RocketMQOption[T] {
    override def defaultText: String =
      s"${kind.render(streamDefault)} for streaming, ${kind.render(batchDefault)} for batch"
  }

  final case class Unset[T](
      key: String,
      kind: RocketMQOptionKind[T],
      queryType: QueryType,
      meaning: String,
      valueText: String,
      defaultText: String)
    extends RocketMQOption[T]
}
