package org.apache.spark.sql.rocketmq

/** Renders [[RocketMQOptionKeys.all]] as the README's option table. */
private[rocketmq] object RocketMQOptionsDoc {

  private def cell(s: String): String = s.replace("|", "\\|")

  def markdownTable: String = {
    val header = Seq("| Option | Value | Default | Query type | Meaning |", "|---|---|---|---|---|")
    val rows = RocketMQOptionKeys.all.map { d =>
      s"| `${d.key}` | ${cell(d.value)} | ${cell(d.default)} | ${d.queryType.text} | ${cell(d.meaning)} |"
    }
    (header ++ rows).mkString("\n")
  }
}
