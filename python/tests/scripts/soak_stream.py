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

"""The streaming query of dev/soak, run with spark-submit --master local[2] --jars <assembly>.

Usage: soak_stream.py <name_server> <source_topic> <sink> <checkpoint_dir> <max_offsets> <trigger>
<stop>
       [source:KEY=VALUE | sink:KEY=VALUE ...]

<sink> is ``rocketmq:<topic>`` (a RocketMQ -> RocketMQ copy) or ``parquet:<dir>``. Runs until the
file <stop> exists (spark-submit gives a Python driver no stdin), then stops the query and the
session; prints ``QUERY_STARTED`` once the query runs, then every 2 s a line of JSON with the last
batch and how many offsets the query has consumed (from the source's end offsets).
"""

from __future__ import annotations

import json
import os
import sys
import threading
from typing import Any, Dict

from pyspark.sql import SparkSession

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from waiting import wait_until  # noqa: E402  (python/tests, next to this script's folder)


def main() -> None:
    name_server, source, sink, checkpoint, max_offsets, trigger, stop_file = sys.argv[1:8]
    extra: Dict[str, Dict[str, str]] = {"source": {}, "sink": {}}
    for arg in sys.argv[8:]:
        side, _, option = arg.partition(":")
        key, _, value = option.partition("=")
        extra[side][key] = value
    spark = SparkSession.builder.appName("rocketmq-soak").getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    stream = (
        spark.readStream.format("rocketmq")
        .option("nameServer", name_server)
        .option("topic", source)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", max_offsets)
        .options(**extra["source"])
        .load()
    )
    kind, _, target = sink.partition(":")
    if kind == "rocketmq":
        writer = (
            stream.selectExpr("body", "'soak' AS tags")
            .writeStream.format("rocketmq")
            .option("nameServer", name_server)
            .option("topic", target)
            .options(**extra["sink"])
        )
    elif kind == "parquet":
        writer = (
            stream.selectExpr("CAST(body AS STRING) AS body", "queueId", "queueOffset")
            .writeStream.format("parquet")
            .option("path", target)
        )
    else:
        raise SystemExit(f"unknown sink {sink!r}: rocketmq:<topic> or parquet:<dir>")
    query = writer.option("checkpointLocation", checkpoint).trigger(processingTime=trigger).start()
    print(f"QUERY_STARTED {query.id}", flush=True)

    stop = threading.Event()

    def consumed(end_offset: Any) -> int:
        """How many offsets the source has read up to: the sum of its next offsets over all
        queues."""
        offsets = json.loads(end_offset) if isinstance(end_offset, str) else end_offset
        return sum(
            n
            for brokers in offsets["offsets"].values()
            for queues in brokers.values()
            for n in queues.values()
        )

    def report() -> None:
        last = -1
        while not stop.wait(2):
            progress = query.lastProgress
            if progress is not None and progress["batchId"] != last and progress["sources"]:
                last = progress["batchId"]
                line = {k: progress[k] for k in ("batchId", "numInputRows")}
                line["consumed"] = consumed(progress["sources"][0]["endOffset"])
                print(json.dumps(line), flush=True)

    reporter = threading.Thread(target=report, daemon=True)
    reporter.start()
    # Until dev/soak asks to stop (or the query fails); no soak dev/soak runs lasts a day.
    wait_until(
        "dev/soak to ask to stop",
        lambda: os.path.exists(stop_file) or not query.isActive,
        86400,
        0.5,
    )
    stop.set()
    failure = query.exception()
    query.stop()
    spark.stop()
    if failure is not None:
        raise SystemExit(f"the query failed: {failure}")
    print("STOPPED", flush=True)


if __name__ == "__main__":
    main()
