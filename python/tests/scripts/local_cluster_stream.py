"""Run by test_local_cluster.py in its own process: a streaming read on local-cluster[2,1,1024].

Usage: local_cluster_stream.py <name_server> <topic> <output_dir> <checkpoint_dir>
Prints one JSON line: executors registered, rows written and distinct executor processes.
"""

from __future__ import annotations

import json
import os
import sys
import time

from pyspark.sql import SparkSession
from pyspark.sql.functions import countDistinct, udf

from rocketmq_spark import configure_spark_with_rocketmq


def main() -> None:
    name_server, topic, output, checkpoint = sys.argv[1:5]
    spark = configure_spark_with_rocketmq(
        SparkSession.builder.master("local-cluster[2,1,1024]").appName("rocketmq-local-cluster")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.executor.memory", "768m")
    ).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    jsc = spark.sparkContext._jsc  # test-only: wait for both executor JVMs to register
    deadline = time.monotonic() + 120
    while jsc.sc().getExecutorMemoryStatus().size() < 3 and time.monotonic() < deadline:
        time.sleep(0.2)  # polling the condition, bounded by the deadline
    executors = jsc.sc().getExecutorMemoryStatus().size() - 1

    # PySpark workers are forked by one daemon per executor: the daemon's pid names the executor.
    executor_process = udf(lambda: os.getppid(), "int")
    query = (
        spark.readStream.format("rocketmq").option("nameServer", name_server).option("topic", topic)
        .option("startingOffsets", "earliest").option("maxOffsetsPerTrigger", "1000").load()
        .select(executor_process().alias("executor"), "queueId", "queueOffset")
        .writeStream.format("parquet").option("path", output).option("checkpointLocation", checkpoint)
        .trigger(availableNow=True).start()
    )
    query.awaitTermination(300)
    rows = spark.read.parquet(output)
    print(json.dumps({
        "executors": executors,
        "rows": rows.count(),
        "distinct_positions": rows.select("queueId", "queueOffset").distinct().count(),
        "queues": rows.select("queueId").distinct().count(),
        "executor_processes": rows.select("executor").distinct().count(),
        # A queue read whole prefers the same executor in every batch.
        "queues_on_one_executor": rows.groupBy("queueId").agg(countDistinct("executor").alias("n"))
        .where("n = 1").count(),
        "batches": len([p for p in query.recentProgress if p["numInputRows"] > 0]),
    }))
    spark.stop()


if __name__ == "__main__":
    main()
