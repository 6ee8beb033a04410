# Copyright the rocketmq-spark authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     https://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""Run by class_archive.py with spark-submit: what most test drivers do first (a session, SQL, a
Parquet round trip, a stateful micro-batch stream to the end of its input), so that the classes
they load are in the archive. Argument: a directory to write in."""

import sys
from pathlib import Path

from pyspark.sql import SparkSession

work = Path(sys.argv[1])
spark = SparkSession.builder.appName("class-archive-warm-up").getOrCreate()
rows = spark.range(2000).selectExpr("id", "CAST(id % 7 AS STRING) AS key", "uuid() AS body")
rows.write.parquet(str(work / "rows"))
back = spark.read.parquet(str(work / "rows"))
assert back.join(rows.select("id"), "id").groupBy("key").count().count() == 7
counts = (
    spark.readStream.schema(back.schema)
    .parquet(str(work / "rows"))
    .groupBy("key")
    .count()
    .writeStream.format("memory")
    .queryName("counts")
    .outputMode("complete")
    .option("checkpointLocation", str(work / "checkpoint"))
    .trigger(availableNow=True)
    .start()
)
counts.awaitTermination()
assert spark.table("counts").count() == 7
spark.stop()
