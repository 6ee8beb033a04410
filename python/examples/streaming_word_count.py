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

"""Streaming word count back into RocketMQ: lines in, running counts out.

    python streaming_word_count.py --name-server 127.0.0.1:9876 --lines-topic lines \
        --counts-topic word-counts --checkpoint /tmp/word-count-checkpoint

Reads text messages as they arrive, splits them into words and publishes each word's running count
(`{"word": "spark", "count": 3}`, keyed by the word) whenever it changes (output mode update). Runs
until stopped; with --available-now it processes what the topic holds and exits, and a later run
resumes from the checkpoint.
"""

from __future__ import annotations

import argparse

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from rocketmq_spark import (
    EARLIEST,
    configure_spark_with_rocketmq,
    read_rocketmq_stream,
    write_rocketmq_stream,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--name-server", required=True)
    parser.add_argument("--lines-topic", required=True)
    parser.add_argument("--counts-topic", required=True)
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument(
        "--available-now", action="store_true", help="process what exists, then stop"
    )
    args = parser.parse_args()

    spark = configure_spark_with_rocketmq(
        SparkSession.builder.appName("rocketmq-word-count").config(
            "spark.sql.shuffle.partitions", "4"
        )
    ).getOrCreate()

    lines = read_rocketmq_stream(
        spark,
        args.name_server,
        args.lines_topic,
        starting_offsets=EARLIEST,
        max_offsets_per_trigger=10_000,
    )
    words = lines.select(
        F.explode(F.split(F.lower(F.col("body").cast("string")), r"\W+")).alias("word")
    )
    counts = words.where(F.col("word") != "").groupBy("word").count()
    messages = counts.select(
        F.to_json(F.struct("word", "count")).alias("body"), F.col("word").alias("keys")
    )

    query = write_rocketmq_stream(
        messages,
        args.name_server,
        args.counts_topic,
        output_mode="update",
        checkpoint_location=args.checkpoint,
        query_name="word_count",
        available_now=args.available_now,
        processing_time=None if args.available_now else "5 seconds",
    )
    assert query is not None
    query.awaitTermination()
    spark.stop()


if __name__ == "__main__":
    main()
