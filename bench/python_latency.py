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

"""Real-time latency as a PySpark user sees it: the Python half of the bench's ``python`` section.

The bench's JVM (``PythonLatencyBench``) owns the brokers and the producer; this process is the
user's PySpark program, with the wheel installed in ``.venv``. They talk over stdin and stdout, one
line each way per step:

- ``RUN {json}`` asks for one run: ``system`` (rocketmq or kafka), ``path`` (``foreach``: a Python
  ``foreach`` function notes each arrival; ``sink``: the system's own sink writes each row to a
  target topic), the source and target topics and the batch duration (with ``continuous``:
  continuous processing, its epoch interval). This process starts the query and answers ``READY``.
- ``DONE {json}`` says how many messages were sent and from when they count (the warm-up left out).
  This process waits until every sent message has arrived, stops the query and answers
  ``RESULT {json}`` with each counted message's latency in milliseconds: arrival in the ``foreach``
  function, or storage in the target topic (the broker's store time for RocketMQ, the sink
  producer's record time for Kafka), minus the producer's time.
- ``EXIT`` ends it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, List

from pyspark.sql import DataFrame, SparkSession

from rocketmq_spark import (
    EARLIEST,
    configure_spark_with_rocketmq,
    read_rocketmq,
    read_rocketmq_stream,
    real_time_trigger,
    write_rocketmq_stream,
)

ARRIVALS_WAIT_S = 120
CHECKPOINT_FILE_MANAGER = "spark.sql.streaming.checkpointFileManagerClass"


def reply(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def source(spark: SparkSession, run: Dict[str, Any], with_body: bool = False) -> Any:
    """The run's source topic as a stream of ``producedAt`` (the producer's time, epoch ms) and,
    ``with_body``, ``body`` (a string)."""
    if run["system"] == "rocketmq":
        stream = read_rocketmq_stream(
            spark, run["nameServer"], run["topic"], starting_offsets=EARLIEST
        )
        produced, body = "unix_millis(bornTimestamp) AS producedAt", "CAST(body AS STRING) AS body"
    else:
        stream = (
            spark.readStream.format("kafka")
            .option("kafka.bootstrap.servers", run["bootstrapServers"])
            .option("subscribe", run["topic"])
            .option("startingOffsets", "earliest")
            .load()
        )
        produced, body = "unix_millis(timestamp) AS producedAt", "CAST(value AS STRING) AS body"
    return stream.selectExpr(produced, body) if with_body else stream.selectExpr(produced)


def start_foreach(spark: SparkSession, run: Dict[str, Any], folder: str) -> Any:
    def note(
        row: Any,
    ) -> None:  # in Spark's Python worker: one file per worker thread, a line per arrival
        arrived = int(time.time() * 1000)
        name = f"{os.getpid()}-{threading.get_ident()}.txt"
        with open(os.path.join(folder, name), "a") as f:
            f.write(f"{row.producedAt}\t{arrived}\n")

    writer = (
        source(spark, run)
        .writeStream.outputMode("update")
        .foreach(note)
        .option("checkpointLocation", run["cp"])
    )
    return real_time_trigger(writer, run["batch"]).start()


def start_sink(spark: SparkSession, run: Dict[str, Any]) -> Any:
    """The produced time travels as the target message's body. Real-time batches of ``batch``, or
    with ``continuous`` continuous processing recording its progress every ``batch``."""
    rows = source(spark, run).selectExpr("CAST(producedAt AS STRING) AS body")
    continuous = bool(run.get("continuous"))
    if run["system"] == "rocketmq":
        trigger: Dict[str, Any] = (
            {"continuous": run["batch"]} if continuous else {"real_time": run["batch"]}
        )
        return write_rocketmq_stream(
            rows, run["nameServer"], run["target"], checkpoint_location=run["cp"], **trigger
        )
    writer = (
        rows.withColumnRenamed("body", "value")
        .writeStream.format("kafka")
        .outputMode("append" if continuous else "update")
        .option("kafka.bootstrap.servers", run["bootstrapServers"])
        .option("topic", run["target"])
        .option("checkpointLocation", run["cp"])
    )
    if continuous:
        return writer.trigger(continuous=run["batch"]).start()
    return real_time_trigger(writer, run["batch"]).start()


def foreach_latencies(folder: str) -> Callable[[], List[List[int]]]:
    def read() -> List[List[int]]:
        pairs = []
        for f in Path(folder).glob("*.txt"):
            for line in f.read_text().splitlines():
                produced, arrived = line.split("\t")
                pairs.append([int(produced), int(arrived)])
        return pairs

    return read


def target_table(spark: SparkSession, run: Dict[str, Any]) -> DataFrame:
    """The run's target topic as ``value`` (the body as a string) and ``stored``, in ms: RocketMQ's
    store time, or Kafka's record time (the broker's when the target topic's timestamp type is
    LogAppendTime). The target is in ``sinkSystem`` when the run names one, else in ``system``."""
    if run.get("sinkSystem", run["system"]) == "rocketmq":
        return read_rocketmq(spark, run["nameServer"], run["target"]).selectExpr(
            "CAST(body AS STRING) AS value", "unix_millis(storeTimestamp) AS stored"
        )
    return (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", run["bootstrapServers"])
        .option("subscribe", run["target"])
        .load()
        .selectExpr("CAST(value AS STRING) AS value", "unix_millis(timestamp) AS stored")
    )


def sink_latencies(spark: SparkSession, run: Dict[str, Any]) -> Callable[[], List[List[int]]]:
    def read() -> List[List[int]]:
        target = target_table(spark, run).selectExpr("CAST(value AS BIGINT) AS produced", "stored")
        return [[r.produced, r.stored] for r in target.collect()]

    return read


def one_run(spark: SparkSession, run: Dict[str, Any], scratch: str) -> None:
    folder = tempfile.mkdtemp(dir=scratch)
    run["cp"] = tempfile.mkdtemp(dir=scratch)
    # A run may name Spark's checkpoint file manager for its query (read when the query starts).
    manager = run.get("checkpointFileManager")
    if manager:
        spark.conf.set(CHECKPOINT_FILE_MANAGER, manager)
    try:
        if run["path"] == "foreach":
            query, latencies = start_foreach(spark, run, folder), foreach_latencies(folder)
        else:
            query, latencies = start_sink(spark, run), sink_latencies(spark, run)
    finally:
        if manager:
            spark.conf.unset(CHECKPOINT_FILE_MANAGER)
    try:
        reply("READY")
        done = json.loads(sys.stdin.readline().split(" ", 1)[1])
        deadline = time.time() + ARRIVALS_WAIT_S
        pairs = latencies()
        while len(pairs) < done["sent"]:
            if query.exception() is not None or time.time() > deadline:
                raise RuntimeError(
                    f"{len(pairs)} of {done['sent']} messages arrived; query: {query.exception()}"
                )
            time.sleep(0.2)
            pairs = latencies()
        counted = [
            arrived - produced for produced, arrived in pairs if produced >= done["measuredFrom"]
        ]
        reply("RESULT " + json.dumps({"latenciesMs": counted, "arrived": len(pairs)}))
    finally:
        query.stop()
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--kafka-jars", required=True, help="comma-separated jars of Spark's Kafka connector"
    )
    args = parser.parse_args()
    spark = bench_session("rocketmq-spark-bench-python", {"spark.jars": args.kafka_jars})
    serve(spark, spark.version, one_run, "rocketmq-spark-bench-python-")


def bench_session(app: str, conf: Dict[str, str], master: str = "local[2]") -> SparkSession:
    """A user's session on the machine: ``master`` with the connector, no UI, and ``conf``."""
    builder = (
        SparkSession.builder.master(master)
        .appName(app)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.host", "127.0.0.1")
    )
    for key, value in conf.items():
        builder = builder.config(key, value)
    return configure_spark_with_rocketmq(builder).getOrCreate()


def serve(
    spark: SparkSession,
    started: str,
    run_one: Callable[[SparkSession, Dict[str, Any], str], None],
    scratch_prefix: str,
) -> None:
    """Says ``STARTED <started>``, then runs each ``RUN <json>`` line of stdin with ``run_one`` in a
    scratch folder until ``EXIT``; stops the session and removes the folder in the end."""
    spark.sparkContext.setLogLevel("ERROR")
    scratch = tempfile.mkdtemp(prefix=scratch_prefix)
    try:
        reply("STARTED " + started)
        for line in sys.stdin:
            if line.startswith("EXIT"):
                break
            run_one(spark, json.loads(line.split(" ", 1)[1]), scratch)
    finally:
        spark.stop()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
