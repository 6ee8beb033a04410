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

"""Real-time queries topic to topic, as a PySpark user writes them: the Python half of the bench's
``realtime`` section.

The bench's JVM (``RealTimeBench``) owns the brokers and the producer; this process runs the queries
on the pyspark of its virtualenv (4.3, where real-time queries may be stateful), one Spark session
for all runs. They talk over stdin and stdout, a line each way per step:

- ``RUN {json}`` asks for one query: ``system`` (rocketmq: this package's reader and
  ``write_rocketmq_stream``; kafka: Spark's Kafka source and sink; ``sinkSystem``, when given, the
  sink's, for a query reading one system and writing the other), ``query`` (``stateless``: each
  message's body goes through with its producer's time in front; ``stateful``: a count per key in
  update mode, each update carrying the producer's time of the message that made it; ``relay``: no
  query, the bench's JVM copies each message as ``stateless`` would with the system's own plain
  clients, and this process only reads the target), the source and target topics and the batch
  duration. Answers ``READY``.
- ``DONE {json}``: how many messages were sent (each acknowledged by the broker), how many the
  source topic holds (``sourceHeld``: a send the producer's client retried may be there twice) and
  from when they count (the warm-up left out). This process waits for a batch to end past the
  source's end (the copy is then complete: a batch ends once its sends are acknowledged), stops the
  query, reads the target and answers ``RESULT {json}``: p50 / p95 / p99 of the stored time (the
  broker's) minus the producer's time over the counted copies, whether every message reached the
  target, the pauses in the stored times, and from the progress reports the batch-end phases, the
  latency metrics and what tells where copies stored twice came from (rows the source read, offsets
  its batches spanned and read twice, sends the sink saw acknowledged). A relay has no query to wait
  for (the bench's JVM waited for every copy to be acknowledged) and no progress reports.
- ``EXIT`` ends it.

The body a producer sends is ``<sequence number> xxx…``; the key of the stateful query is that
number modulo ``keys``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from python_latency import (
    bench_session,
    reply,
    serve,
    source,
    target_table,
)  # the bench's folder is this program's first import path

from rocketmq_spark import (
    real_time_trigger,
    write_rocketmq_stream,
)

# Stored times further apart than this are a pause of the query (at 200 msg/s a message comes every
# 5 ms).
PAUSE_MS = 50
# The connector's latency metrics in progress reports: `<name>MsP50`, `<name>MsP99`, `<name>MsMax`,
# `<name>Count`.
LATENCY_METRICS = ("queueWait", "sendAck")


def transform(rows: DataFrame, run: Dict[str, Any]) -> DataFrame:
    """The query: one string column ``value``, the producer's time first."""
    if run["query"] == "stateless":
        return rows.selectExpr("concat_ws(' ', CAST(producedAt AS STRING), body) AS value")
    # In update mode each message updates its key's row, and `last` is the producer's time of that
    # message.
    counts = (
        rows.withColumn(
            "key", F.expr(f"CAST(substring_index(body, ' ', 1) AS BIGINT) % {int(run['keys'])}")
        )
        .groupBy("key")
        .agg(F.count(F.lit(1)).alias("n"), F.last("producedAt").alias("producedAt"))
    )
    return counts.selectExpr(
        "concat_ws(' ', CAST(producedAt AS STRING), CAST(key AS STRING), CAST(n AS STRING)) AS "
        "value"
    )


def start(spark: SparkSession, run: Dict[str, Any]) -> Any:
    rows = transform(source(spark, run, with_body=True), run)
    if run.get("sinkSystem", run["system"]) == "rocketmq":
        return write_rocketmq_stream(
            rows.withColumnRenamed("value", "body"),
            run["nameServer"],
            run["target"],
            checkpoint_location=run["cp"],
            real_time=run["batch"],
        )
    writer = (
        rows.writeStream.format("kafka")
        .outputMode("update")
        .option("kafka.bootstrap.servers", run["bootstrapServers"])
        .option("topic", run["target"])
        .option("checkpointLocation", run["cp"])
    )
    return real_time_trigger(writer, run["batch"]).start()


def stored_copies(spark: SparkSession, run: Dict[str, Any]) -> DataFrame:
    """The target topic as ``produced``, ``id`` (the sequence number or the key), ``n`` (the key's
    count) and ``stored``: RocketMQ's store time, or Kafka's log append time (the target topic's
    timestamp type)."""
    return target_table(spark, run).selectExpr(
        "CAST(split(value, ' ')[0] AS BIGINT) AS produced",
        "CAST(split(value, ' ')[1] AS BIGINT) AS id",
        "CAST(split(value, ' ')[2] AS BIGINT) AS n",
        "stored",
    )


def latencies(copies: DataFrame, run: Dict[str, Any], measured_from: int) -> Dict[str, Any]:
    """Percentiles of the counted copies, how many sent messages the target accounts for, and its
    pauses."""
    counted = copies.where(F.col("produced") >= measured_from).withColumn(
        "ms", F.col("stored") - F.col("produced")
    )
    row = counted.agg(
        F.count(F.lit(1)).alias("counted"),
        F.expr("percentile(ms, array(0.5, 0.95, 0.99))").alias("p"),
        F.max("ms").alias("max"),
    ).first()
    assert row is not None
    duplicates = None
    twice_apart = None
    if run["query"] != "stateful":  # stateless and relay: each sequence number once at least
        accounted = copies.select("id").distinct().count()
        duplicates = copies.count() - accounted
        # A message stored more than once: how far apart its first and last copies were stored (a
        # resend comes after a send timeout; a batch reading offsets again, a batch later).
        apart = (
            copies.groupBy("id")
            .agg(
                F.count(F.lit(1)).alias("copies"),
                (F.max("stored") - F.min("stored")).alias("apart"),
            )
            .where("copies > 1")
            .agg(F.expr("percentile(apart, array(0.5, 0.99))").alias("p"))
            .first()
        )
        twice_apart = apart.p if apart is not None else None
    else:  # the last count of every key, summed: every message counted
        last_counts = (
            copies.groupBy("id").agg(F.max("n").alias("n")).agg(F.sum("n").alias("n")).first()
        )
        accounted = (last_counts.n if last_counts else None) or 0
    # The time from one stored copy to the next, over the measured part: a pause shows as a gap.
    times = [r.stored for r in counted.select("stored").distinct().orderBy("stored").collect()]
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    pauses = [g for g in gaps if g > PAUSE_MS]
    p = row.p or [None, None, None]
    return {
        "stored": copies.count(),
        "duplicates": duplicates,
        "duplicateApartMsP50": twice_apart[0] if twice_apart else None,
        "duplicateApartMsP99": twice_apart[1] if twice_apart else None,
        "counted": row.counted,
        "accounted": int(accounted),
        "p50": p[0],
        "p95": p[1],
        "p99": p[2],
        "max": row.max,
        "pauses": len(pauses),
        "longestPauseMs": max(gaps) if gaps else 0,
        "pauseMsMedian": statistics.median(pauses) if pauses else 0,
    }


def queue_offsets(offsets: Any) -> Dict[str, int]:
    """A source offset of a progress report (JSON text or a parsed tree), by queue: RocketMQ's
    ``{"version": 1, "offsets": {topic: {broker: {queue: n}}}}`` and Kafka's
    ``{topic: {partition: n}}`` alike, keyed by the path. None (the first batch's start: no batch
    before it) is no queue."""
    tree = json.loads(offsets) if isinstance(offsets, str) else offsets
    if isinstance(tree, dict) and "version" in tree and isinstance(tree.get("offsets"), dict):
        tree = tree["offsets"]  # the version is not a queue
    flat: Dict[str, int] = {}

    def walk(node: Any, path: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                walk(value, f"{path}/{key}")
        elif isinstance(node, int):
            flat[path] = node

    walk(tree or {}, "")
    return flat


def source_reads(events: List[Any]) -> Dict[str, int]:
    """What the source read over the reports: its rows, the offsets its batches spanned, and the
    offsets a batch started before where the batch before it ended (read twice); and the sends the
    sink saw acknowledged.

    The first batch's report has no start offset (null: no batch before it); the query starts at the
    earliest offsets of a topic made for the run, 0 in every queue, so that batch spans its end
    offsets from 0."""
    rows = sum(int(e.numInputRows) for e in events)
    spanned = replayed = 0
    previous_end: Dict[str, int] = {}
    for e in events:
        source = e.sources[0]
        start, end = queue_offsets(source.startOffset), queue_offsets(source.endOffset)
        spanned += sum(n - start.get(q, previous_end.get(q, 0)) for q, n in end.items())
        replayed += sum(max(0, previous_end[q] - n) for q, n in start.items() if q in previous_end)
        previous_end = end
    acked = sum(int((e.sink.metrics or {}).get("sendAckCount", "0")) for e in events)
    return {
        "inputRows": rows,
        "offsetsSpanned": spanned,
        "offsetsReadAgain": replayed,
        "sendsAcknowledged": acked,
    }


def progress_summary(events: List[Any]) -> Dict[str, Optional[float]]:
    """Over the query's progress reports: the median of each batch-end phase Spark times, and of the
    latency metrics this connector reports (source: ``queueWaitMs…``, sink: ``sendAckMs…``) the mean
    of p50 and p99 over the reports that measured any, the largest maximum and the total count."""

    def mean(values: List[float]) -> Optional[float]:
        return sum(values) / len(values) if values else None

    summary: Dict[str, Optional[float]] = {"batches": float(len(events))}
    for phase in ("walCommit", "commitOffsets", "queryPlanning"):
        values = [float(e.durationMs[phase]) for e in events if phase in (e.durationMs or {})]
        summary[phase] = statistics.median(values) if values else None
    for name in LATENCY_METRICS:
        metrics = [
            m for e in events for m in [*(s.metrics or {} for s in e.sources), e.sink.metrics or {}]
        ]
        measured = [m for m in metrics if int(m.get(f"{name}Count", "0")) > 0]
        summary[f"{name}MsP50"] = mean([float(m[f"{name}MsP50"]) for m in measured])
        summary[f"{name}MsP99"] = mean([float(m[f"{name}MsP99"]) for m in measured])
        summary[f"{name}MsMax"] = max((float(m[f"{name}MsMax"]) for m in measured), default=None)
        summary[f"{name}Count"] = (
            float(sum(int(m[f"{name}Count"]) for m in measured)) if measured else None
        )
    return summary


def await_caught_up(query: Any, held: int, batch: str) -> bool:
    """Waits for a batch to end with the source read up to ``held`` messages (summed over its
    queues), or for three batches and two minutes to pass (a batch ends once its sends are
    acknowledged): whether it did."""
    seconds = int(batch.split()[0])
    deadline = time.monotonic() + 3 * seconds + 120
    while time.monotonic() < deadline:
        last = query.lastProgress
        if query.exception() is not None:
            raise RuntimeError(f"the query failed: {query.exception()}")
        if last is not None and sum(queue_offsets(last.sources[0].endOffset).values()) >= held:
            return True
        time.sleep(0.5)
    return False


def dump_batch_ends(
    spark: SparkSession, run: Dict[str, Any], measured_from: int, events: List[Any]
) -> None:
    """With ``BENCH_REALTIME_DUMP`` set to a folder: writes the run's progress reports and, for each
    counted copy, its producer's and stored times there (``<system>-<query>-<target>.json``), for
    ``bench/batch_ends.py``."""
    folder = os.environ.get("BENCH_REALTIME_DUMP")
    if not folder:
        return
    copies = (
        stored_copies(spark, run)
        .where(F.col("produced") >= measured_from)
        .select("produced", "stored")
    )
    dump = {
        "run": {
            k: run[k] for k in ("system", "sinkSystem", "query", "batch", "target") if k in run
        },
        "progress": [json.loads(e.json) for e in events],
        "copies": [[r.produced, r.stored] for r in copies.collect()],
    }
    os.makedirs(folder, exist_ok=True)
    systems = (
        run["system"]
        if run.get("sinkSystem", run["system"]) == run["system"]
        else f"{run['system']}-to-{run['sinkSystem']}"
    )
    with open(os.path.join(folder, f"{systems}-{run['query']}-{run['target']}.json"), "w") as f:
        json.dump(dump, f)


def await_done() -> Dict[str, Any]:
    """The next line of stdin, ``DONE {json}``, as its JSON."""
    return json.loads(sys.stdin.readline().split(" ", 1)[1])


def one_run(spark: SparkSession, run: Dict[str, Any], scratch: str) -> None:
    events: List[Any] = []  # the query's progress reports; a relay has none
    if (
        run["query"] == "relay"
    ):  # no query: the bench's JVM has every copy acknowledged before it says DONE
        reply("READY")
        done, caught_up = await_done(), True
    else:
        run["cp"] = tempfile.mkdtemp(dir=scratch)
        query = start(spark, run)
        try:
            reply("READY")
            done = await_done()
            caught_up = await_caught_up(query, int(done["sourceHeld"]), run["batch"])
            if query.exception() is not None:
                raise RuntimeError(f"the query failed: {query.exception()}")
            events = list(query.recentProgress)
        finally:
            query.stop()
    result = latencies(stored_copies(spark, run), run, done["measuredFrom"])
    result["caughtUp"] = caught_up
    result["progress"] = progress_summary(events)
    result["reads"] = source_reads(events)
    if run["query"] != "relay":  # a relay has no progress reports
        dump_batch_ends(spark, run, done["measuredFrom"], events)
    reply("RESULT " + json.dumps(result))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--kafka-jars", required=True, help="comma-separated jars of Spark's Kafka connector"
    )
    parser.add_argument(
        "--slots", type=int, required=True, help="N of local[N]: the task slots of the session"
    )
    parser.add_argument("--shuffle-partitions", type=int, required=True)
    args = parser.parse_args()
    master = f"local[{args.slots}]"
    spark = bench_session(
        "rocketmq-spark-bench-real-time",
        {
            "spark.jars": args.kafka_jars,
            "spark.sql.shuffle.partitions": str(args.shuffle_partitions),
        },
        master,
    )
    jvm_pid = (
        spark.sparkContext._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getPid()
    )
    started = json.dumps(
        {"pyspark": spark.version, "cpuCount": os.cpu_count(), "master": master, "jvmPid": jvm_pid}
    )
    serve(spark, started, one_run, "rocketmq-spark-bench-real-time-")


if __name__ == "__main__":
    main()
