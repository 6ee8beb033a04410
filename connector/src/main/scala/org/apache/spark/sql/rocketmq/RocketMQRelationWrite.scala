package org.apache.spark.sql.rocketmq

import org.apache.spark.TaskContext
import org.apache.spark.sql.{DataFrame, SaveMode, SQLContext}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.sources.BaseRelation
import org.apache.spark.sql.types.StructType

/**
 * `DataFrameWriter.save()` into RocketMQ: checks the save mode, the options and the columns on the
 * driver, then runs [[RocketMQDataWriter]] on every partition. A task that fails is retried by
 * Spark (at-least-once); the job fails if any task finally fails.
 */
private[rocketmq] object RocketMQRelationWrite {

  def write(sqlContext: SQLContext, mode: SaveMode, options: RocketMQOptions, data: DataFrame): BaseRelation = {
    mode match {
      case SaveMode.Append | SaveMode.ErrorIfExists =>
      case other => throw RocketMQErrors.saveModeNotSupported(other.name())
    }
    val write = RocketMQWrite.plan(options, data.schema)
    val factory = new RocketMQDataWriterFactory(write.settings, write.columns)
    data.queryExecution.toRdd.foreachPartition { rows: Iterator[InternalRow] =>
      val context = TaskContext.get()
      val writer = factory.createWriter(context.partitionId(), context.taskAttemptId())
      try {
        rows.foreach(writer.write)
        writer.commit()
      } catch {
        case e: Throwable =>
          writer.abort()
          throw e
      } finally writer.close()
    }
    new WrittenRelation(sqlContext, data.schema)
  }

  /** What `save()` returns; Spark does not read it. */
  private class WrittenRelation(override val sqlContext: SQLContext, override val schema: StructType)
    extends BaseRelation
}
