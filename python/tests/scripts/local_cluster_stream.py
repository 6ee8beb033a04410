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

"""Run by test_local_cluster.py with spark-submit --master local-cluster[2,1,1024] --jars
<assembly>: the shaded jar alone, as a Databricks cluster library provides it. No rocketmq_spark
import here.

Usage: local_cluster_stream.py <name_server> <topic> <output_dir> <checkpoint_dir> <rows> Writes
<rows> messages from two executors, reads them back with a rate-limited stream, and prints one JSON
line of what happened.
"""

from __future__ import annotations

import json
import os
import sys

from pyspark.sql import SparkSession
from pyspark.sql.functions import col, countDistinct, udf

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from waiting import wait_until  # noqa: E402  (python/tests, next to this script's folder)


def main() -> None:
    name_server, topic, output, checkpoint, rows = sys.argv[1:6]
    spark = SparkSession.builder.appName("rocketmq-local-cluster").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    jsc = spark.sparkContext._jsc  # test-only: wait for both executor JVMs to register
    wait_until(
        "both executors to register",
        lambda: jsc.sc().getExecutorMemoryStatus().size() >= 3,
        120,
        0.2,
    )
    executors = jsc.sc().getExecutorMemoryStatus().size() - 1

    # PySpark workers are forked by one daemon per executor: the daemon's pid names the executor.
    executor_process = udf(lambda: os.getppid(), "int")

    # Write: 8 partitions over both executors, each message saying which executor process sent it.
    (
        spark.range(int(rows), numPartitions=8)
        .select(executor_process().alias("writer"), "id")
        .selectExpr("concat(CAST(id AS STRING), ':', CAST(writer AS STRING)) AS body")
        .write.format("rocketmq")
        .option("nameServer", name_server)
        .option("topic", topic)
        # 400 rows per task in batches of 25: the 16 batches of a task go to the 16 queues in turn,
        # so every queue has messages for the read below.
        .option("sendBatchMessages", str(int(rows) // 8 // 16))
        .save()
    )

    query = (
        spark.readStream.format("rocketmq")
        .option("nameServer", name_server)
        .option("topic", topic)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", str(int(rows) // 3))
        .load()
        .select(
            executor_process().alias("executor"),
            "queueId",
            "queueOffset",
            col("body").cast("string"),
        )
        .writeStream.format("parquet")
        .option("path", output)
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(300)
    read = spark.read.parquet(output)
    print(
        json.dumps(
            {
                "executors": executors,
                "rows": read.count(),
                "distinct_ids": read.selectExpr("split(body, ':')[0] AS id").distinct().count(),
                "writer_processes": read.selectExpr("split(body, ':')[1] AS w").distinct().count(),
                "distinct_positions": read.select("queueId", "queueOffset").distinct().count(),
                "queues": read.select("queueId").distinct().count(),
                "reader_processes": read.select("executor").distinct().count(),
                # A queue read whole prefers the same executor in every batch.
                "queues_on_one_executor": read.groupBy("queueId")
                .agg(countDistinct("executor").alias("n"))
                .where("n = 1")
                .count(),
                "batches": len([p for p in query.recentProgress if p.numInputRows > 0]),
            }
        )
    )
    spark.stop()


if __name__ == "__main__":
    main()
