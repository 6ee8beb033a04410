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

"""Batch ETL: read raw order events from one RocketMQ topic, clean them, publish them to another.

    python batch_etl.py --name-server 127.0.0.1:9876 --source-topic orders-raw --target-topic
    orders-paid

Every message of the source topic is read (earliest to latest), its JSON body parsed, paid orders
kept and normalised (amount in cents, upper-case currency), and each written to the target topic
with the currency as its tag and the order id as its key. Prints one JSON line with the counts.
"""

from __future__ import annotations

import argparse
import json

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from rocketmq_spark import configure_spark_with_rocketmq, read_rocketmq, write_rocketmq

ORDER_SCHEMA = "order_id STRING, amount DOUBLE, currency STRING, status STRING"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--name-server", required=True)
    parser.add_argument("--source-topic", required=True)
    parser.add_argument("--target-topic", required=True)
    args = parser.parse_args()

    spark = configure_spark_with_rocketmq(
        SparkSession.builder.appName("rocketmq-batch-etl")
    ).getOrCreate()

    raw = read_rocketmq(spark, args.name_server, args.source_topic)
    orders = raw.select(F.from_json(F.col("body").cast("string"), ORDER_SCHEMA).alias("o")).select(
        "o.*"
    )
    paid = orders.where(F.col("status") == "paid").select(
        "order_id",
        F.round(F.col("amount") * 100).cast("long").alias("amount_cents"),
        F.upper("currency").alias("currency"),
    )
    out = paid.select(
        F.to_json(F.struct("order_id", "amount_cents", "currency")).alias("body"),
        F.col("currency").alias("tags"),
        F.col("order_id").alias("keys"),
    )
    out.cache()
    write_rocketmq(out, args.name_server, args.target_topic)

    print(json.dumps({"read": raw.count(), "written": out.count()}))
    spark.stop()


if __name__ == "__main__":
    main()
