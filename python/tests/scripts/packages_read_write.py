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

"""Run by test_spark_submit_packages.py through ``spark-submit --packages``: plain PySpark, no
rocketmq_spark.

Usage: packages_read_write.py <name_server> <topic> <rows>

The connector reaches the JVM only as the Maven artifact that --packages resolved. Writes <rows>
rows (columns body, tags) to <topic> with format("rocketmq"), reads the topic back with
format("rocketmq"), stops Spark and prints one JSON line: what was written, what was read, where the
JVM loaded the connector, the RocketMQ client and netty from, and the wall-clock time the script
finished.

JVM options (such as -Drocketmq.log.root) belong on the spark-submit command line: the driver JVM is
already running when this script builds its session.
"""

from __future__ import annotations

import json
import sys
import time

from pyspark.sql import SparkSession


def loaded_from(spark: SparkSession, class_name: str) -> str:
    """The jar (or directory) the driver's class loader loads ``class_name`` from."""
    jvm = spark.sparkContext._jvm
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    source = loader.loadClass(class_name).getProtectionDomain().getCodeSource()
    return "" if source is None else str(source.getLocation().toString())


def main() -> None:
    name_server, topic, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    spark = (
        SparkSession.builder.appName("rocketmq-packages-read-write")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("WARN")

    rows = [(f"pkg-{i}", "even" if i % 2 == 0 else "odd") for i in range(count)]
    (
        spark.createDataFrame(rows, "body STRING, tags STRING")
        .write.format("rocketmq")
        .option("nameServer", name_server)
        .option("topic", topic)
        # One message per request: the producer spreads the rows over every queue, so the read
        # covers all four (in message batches, a write this small lands in one queue).
        .option("sendBatchMessages", "1")
        .save()
    )

    df = (
        spark.read.format("rocketmq")
        .option("nameServer", name_server)
        .option("topic", topic)
        .load()
    )
    got = df.selectExpr("CAST(body AS STRING) AS body", "properties", "queueId").collect()

    result = {
        "written": len(rows),
        "read": len(got),
        "distinct_bodies": len({r.body for r in got}),
        "queues": sorted({r.queueId for r in got}),
        "tags": {r.body: json.loads(r.properties).get("TAGS") for r in got},
        "columns": df.columns,
        "spark_jars": spark.conf.get("spark.jars", ""),
        "connector_from": loaded_from(
            spark, "org.apache.spark.sql.rocketmq.RocketMQSourceProvider"
        ),
        "client_from": loaded_from(spark, "org.apache.rocketmq.client.producer.DefaultMQProducer"),
        "netty_from": loaded_from(spark, "io.netty.channel.Channel"),
    }
    spark.stop()
    result["finished_at"] = time.time()
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
