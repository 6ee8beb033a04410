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

import java.util

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{DataFrame, SaveMode, SQLContext}
import org.apache.spark.sql.connector.catalog.{Table, TableProvider}
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.rocketmq.options.RocketMQOptions
import org.apache.spark.sql.sources.{BaseRelation, CreatableRelationProvider, DataSourceRegister}
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/**
 * The entry point Spark finds by the format name `rocketmq` or by this class's name.
 *
 * Reads go through DataSource V2 (`RocketMQTable`). Batch writes arrive through
 * `CreatableRelationProvider`: Spark routes `DataFrameWriter.save()` there for every save mode
 * when the table does not claim batch writes, which lets the default mode (errorifexists) work as
 * the Kafka sink's does; `RocketMQRelationWrite` then runs the same data writer.
 */
class RocketMQSourceProvider extends TableProvider with DataSourceRegister
  with CreatableRelationProvider {

  override def shortName(): String = "rocketmq"

  override def inferSchema(options: CaseInsensitiveStringMap): StructType =
    RocketMQSourceSchema(
      new RocketMQOptions(options.asCaseSensitiveMap().asScala.toMap)(
        RocketMQOptions.IncludeExtraColumns))

  override def getTable(
      schema: StructType,
      partitioning: Array[Transform],
      properties: util.Map[String, String]): Table = {
    val options = new RocketMQOptions(properties.asScala.toMap)
    RocketMQSinkRun.resumeStream(
      options) // a restarted exactly-once stream answers check-backs from its start
    new RocketMQTable(options)
  }

  override def createRelation(
      sqlContext: SQLContext,
      mode: SaveMode,
      parameters: Map[String, String],
      data: DataFrame): BaseRelation =
    RocketMQRelationWrite.write(sqlContext, mode, new RocketMQOptions(parameters), data)
}
