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

"""AvailableNow backfill into Parquet: copy everything a topic holds into a date-partitioned table.

    python backfill_to_parquet.py --name-server 127.0.0.1:9876 --topic orders \
        --output /data/orders --checkpoint /data/orders-checkpoint

Reads the topic from its earliest retained message in micro-batches of at most --batch-size
messages, writes Parquet partitioned by the message's store date, and stops when it has caught up.
Run it again (same checkpoint) and it copies only what arrived since. Prints one JSON line per run.
"""

from __future__ import annotations

import argparse
import json

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from rocketmq_spark import (
    EARLIEST,
    configure_spark_with_rocketmq,
    decode_properties,
    read_rocketmq_stream,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--name-server", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--output", required=True)
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--batch-size", type=int, default=100_000)
    args = parser.parse_args()

    spark = configure_spark_with_rocketmq(
        SparkSession.builder.appName("rocketmq-backfill")
    ).getOrCreate()

    messages = read_rocketmq_stream(
        spark,
        args.name_server,
        args.topic,
        starting_offsets=EARLIEST,
        max_offsets_per_trigger=args.batch_size,
    )
    rows = messages.select(
        "topic",
        "brokerName",
        "queueId",
        "queueOffset",
        "storeTimestamp",
        F.col("body").cast("string").alias("body"),
        decode_properties().getItem("TAGS").alias("tag"),
        F.to_date("storeTimestamp").alias("date"),
    )
    query = (
        rows.writeStream.format("parquet")
        .partitionBy("date")
        .option("path", args.output)
        .option("checkpointLocation", args.checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    batches = [p.numInputRows for p in query.recentProgress if p.numInputRows > 0]
    print(json.dumps({"batches": len(batches), "rows": sum(batches)}))
    spark.stop()


if __name__ == "__main__":
    main()
