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

import org.apache.spark.sql.rocketmq.errors.RocketMQErrors
import org.apache.spark.sql.rocketmq.options.RocketMQOptions

/**
 * The documentation's reference tables, generated from the code: the options from
 * [[RocketMQOptions.registry]], the error conditions as [[RocketMQErrors]] reads them from
 * `error/rocketmq-error-conditions.json`.
 */
private[rocketmq] object RocketMQReferenceDocs {

  private def cell(s: String): String = s.replace("|", "\\|")

  /**
   * An option's keyword in the Python package: its key in snake_case, an acronym being one word
   * (useTLS).
   */
  def pythonKeyword(key: String): String = key.replaceAll("(?<=[a-z0-9])(?=[A-Z])", "_").toLowerCase

  def optionsTable: String = {
    val header =
      Seq("| Option | Python keyword | Value | Default | Query type | Meaning |",
        "|---|---|---|---|---|---|")
    val rows = RocketMQOptions.registry.map { o =>
      s"| `${o.key}` | `${pythonKeyword(o.key)}` | ${cell(o.valueText)} | ${cell(o.defaultText)} " +
        s"| ${o.queryType.text} | ${cell(o.meaning)} |"
    }
    (header ++ rows).mkString("\n")
  }

  /**
   * Every condition and sub-condition with its SQLSTATE and message (parameters in angle brackets).
   */
  def errorsTable: String = {
    def escaped(text: String): String = cell(text.replace("<", "&lt;").replace(">", "&gt;"))
    val header = Seq("| Condition | SQLSTATE | Message |", "|---|---|---|")
    val rows = RocketMQErrors.allConditions.map { condition =>
      s"| `$condition` | ${RocketMQErrors.sqlState(condition)} | " +
        s"${escaped(RocketMQErrors.template(condition))} |"
    }
    (header ++ rows).mkString("\n")
  }
}
