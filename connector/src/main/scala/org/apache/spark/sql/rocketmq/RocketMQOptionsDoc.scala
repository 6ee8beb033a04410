package org.apache.spark.sql.rocketmq

/** Renders [[RocketMQOptions.registry]] as the README's option table. */
private[rocketmq] object RocketMQOptionsDoc {

  private def cell(s: String): String = s.replace("|", "\\|")

  def markdownTable: String = {
    val header = Seq("| Option | Value | Default | Query type | Meaning |", "|---|---|---|---|---|")
    val rows = RocketMQOptions.registry.map { o =>
      s"| `${o.key}` | ${cell(o.valueText)} | ${cell(o.defaultText)} | ${o.queryType.text} | ${cell(o.meaning)} |"
    }
    (header ++ rows).mkString("\n")
  }
}
