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

"""Run by test_driver_kill.py with spark-submit --master local[2] --jars <assembly>: the driver that
the test kills with SIGKILL and starts again from the same checkpoint.

Usage: kill_driver_stream.py <name_server> <topic> <sink_dir> <checkpoint_dir> <max_offsets> run
       kill_driver_stream.py <name_server> <topic> <sink_dir> <checkpoint_dir> <max_offsets> drain
       <report.json>

<sink_dir> may be rocketmq://<topic>: then the stream writes to that topic with
deliveryGuarantee=exactly_once (test_exactly_once_kill.py), and ``drain`` reports only its batches.

``run``: a RocketMQ -> Parquet stream in rate-limited micro-batches, until the process is killed.
``drain``: the same query with Trigger.AvailableNow (what is in the topic now, then stop), then the
sink read back through its metadata log; writes every body and (queueId, queueOffset) it holds to
the report.
"""

from __future__ import annotations

import json
import sys
import time

from pyspark.sql import SparkSession

# A sink argument of rocketmq://<topic> writes there exactly-once instead of to a Parquet directory.
ROCKETMQ_SINK = "rocketmq://"


def main() -> None:
    name_server, topic, sink, checkpoint, max_offsets, mode = sys.argv[1:7]
    began = time.monotonic()
    spark = SparkSession.builder.appName(f"rocketmq-driver-kill-{mode}").getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    print(f"SESSION_READY after {time.monotonic() - began:.1f} s", flush=True)
    stream = (
        spark.readStream.format("rocketmq")
        .option("nameServer", name_server)
        .option("topic", topic)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", max_offsets)
        .load()
    )
    if sink.startswith(ROCKETMQ_SINK):
        # Exactly-once into another topic: the test reads that topic back with a plain consumer.
        writer = (
            stream.selectExpr("body")
            .writeStream.format("rocketmq")
            .option("nameServer", name_server)
            .option("topic", sink[len(ROCKETMQ_SINK) :])
            .option("deliveryGuarantee", "exactly_once")
            # test_exactly_once_kill.py has the broker check back every 2 s: at least twice that.
            .option("transactionTimeout", "10s")
            .option("checkpointLocation", checkpoint)
        )
    else:
        writer = (
            stream.selectExpr("CAST(body AS STRING) AS body", "queueId", "queueOffset")
            .writeStream.format("parquet")
            .option("path", sink)
            .option("checkpointLocation", checkpoint)
        )
    if mode == "run":
        query = writer.trigger(processingTime="200 milliseconds").start()
        print(f"QUERY_STARTED {query.id} after {time.monotonic() - began:.1f} s", flush=True)
        query.awaitTermination()  # until the test kills this process
        return
    if mode != "drain":
        raise SystemExit(f"unknown mode {mode!r}")
    query = writer.trigger(availableNow=True).start()
    query.awaitTermination()
    if query.exception() is not None:
        raise SystemExit(f"drain failed: {query.exception()}")
    if sink.startswith(ROCKETMQ_SINK):
        with open(sys.argv[7], "w", encoding="utf-8") as out:
            json.dump(
                {"drain_batches": len([p for p in query.recentProgress if p.numInputRows > 0])}, out
            )
        spark.stop()
        return
    # spark.read.parquet of a file sink's directory lists only the files its _spark_metadata log
    # holds: the part files of a killed batch that never reached the log are not read.
    rows = spark.read.parquet(sink).collect()
    report = {
        "bodies": [r.body for r in rows],
        "positions": [[r.queueId, r.queueOffset] for r in rows],
        "drain_batches": len([p for p in query.recentProgress if p.numInputRows > 0]),
    }
    with open(sys.argv[7], "w", encoding="utf-8") as out:
        json.dump(report, out)
    spark.stop()


if __name__ == "__main__":
    main()
