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

"""Real-time mode from Python, stateless queries: ``real_time_trigger`` and
``write_rocketmq_stream(real_time=...)`` on every pyspark of the matrix (a real-time query where
pyspark can ask for one, 4.2 and later; the error naming the versions elsewhere), an exactly-once
write refused, progress tracked as for Kafka's sink, and starts from two threads at once. The
stateful ones (4.3; refused on 4.2): test_real_time_stateful.py."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, List, Optional

import pytest
from pyspark.errors import StreamingQueryException

from embedded_rocketmq import unique_topic
from real_time_checks import HAS_STATEFUL, execution_of, refused_before_4_2
from rocketmq_spark import EARLIEST, read_rocketmq_stream, real_time_trigger, write_rocketmq_stream
from waiting import wait_until

# Over Spark Connect too (e2e): the trigger and the foreach writer go through the Connect client.
pytestmark = [pytest.mark.cross_version, pytest.mark.e2e]


def _lines(folder: Path) -> List[str]:
    return [line for f in folder.glob("*.txt") for line in f.read_text().splitlines()]


def test_real_time_trigger_runs_a_query_or_names_the_pyspark_it_needs(
    spark, rocketmq, tmp_path: Path
) -> None:
    topic = unique_topic("rt")
    rocketmq.create_topic(topic, queues=2)
    rocketmq.send(topic, 10, "before-")
    out = tmp_path / "out"
    out.mkdir()
    folder = str(out)

    def keep(row) -> None:  # runs in Spark's Python workers
        name = f"{os.getpid()}-{threading.get_ident()}.txt"
        with open(os.path.join(folder, name), "a") as f:
            f.write(f"{row.body}\t{row.queueId}\t{row.queueOffset}\n")

    writer = (
        read_rocketmq_stream(spark, rocketmq.name_server, topic, starting_offsets=EARLIEST)
        .selectExpr("CAST(body AS STRING) AS body", "queueId", "queueOffset")
        .writeStream.outputMode("update")
        .foreach(keep)
        .option("checkpointLocation", str(tmp_path / "cp"))
    )
    if refused_before_4_2(lambda: real_time_trigger(writer, "5 seconds")):
        return
    query = real_time_trigger(writer, "5 seconds").start()
    try:
        wait_until(
            "the 10 messages sent before the start", lambda: len(set(_lines(out))) >= 10, 120
        )
        rocketmq.send(topic, 10, "during-")
        wait_until("the 10 messages sent while it runs", lambda: len(set(_lines(out))) >= 20, 120)
        assert query.exception() is None
    finally:
        query.stop()
    lines = _lines(out)
    assert len(lines) == len(set(lines)), "a message came out twice"
    bodies = sorted(line.split("\t")[0] for line in lines)
    assert bodies == sorted([f"before-{i}" for i in range(10)] + [f"during-{i}" for i in range(10)])


def test_write_rocketmq_stream_real_time_sends_each_row_while_the_batch_runs(
    spark, rocketmq, tmp_path: Path
) -> None:
    """RocketMQ -> RocketMQ in real-time mode with nothing set but ``real_time``: no allowlist
    setting, no sink setting. The batch lasts 10 minutes, so rows can only be in the target before
    its end if each is sent as it arrives."""
    source, target = unique_topic("rt-src"), unique_topic("rt-dst")
    rocketmq.create_topic(source, queues=2)
    rocketmq.create_topic(target, queues=2)
    stream = read_rocketmq_stream(
        spark, rocketmq.name_server, source, starting_offsets=EARLIEST
    ).select("body")
    key = "spark.sql.streaming.realTimeMode.allowlistCheck"
    before = spark.conf.get(key, None)
    if refused_before_4_2(
        lambda: write_rocketmq_stream(stream, rocketmq.name_server, target, real_time="10 minutes")
    ):
        return
    query = write_rocketmq_stream(
        stream,
        rocketmq.name_server,
        target,
        real_time="10 minutes",
        checkpoint_location=str(tmp_path / "cp"),
    )
    try:
        assert spark.conf.get(key, None) == before, (
            "the session's allowlist setting was left changed"
        )
        rocketmq.send(source, 10, "rt-")
        wait_until(
            "the 10 rows in the target topic", lambda: len(rocketmq.bodies(target)) >= 10, 60
        )
        assert query.isActive and query.exception() is None
        assert query.lastProgress is None, (
            "a real-time batch ended: the rows may have waited for its end"
        )
    finally:
        query.stop()
    assert sorted(rocketmq.bodies(target)) == sorted(f"rt-{i}" for i in range(10))


def test_an_exactly_once_real_time_write_is_refused_before_anything_is_sent(
    spark, rocketmq, tmp_path: Path
) -> None:
    """A real-time batch outlives the brokers' half messages: ``exactly_once`` is refused when the
    query plans its write, naming the option, and nothing reaches the target (before pyspark 4.2,
    ``real_time`` itself is refused)."""
    source, target = unique_topic("rt-eo-src"), unique_topic("rt-eo-dst")
    rocketmq.create_topic(source, queues=2)
    rocketmq.create_topic(target, queues=2)
    rocketmq.send(source, 5, "eo-")
    stream = read_rocketmq_stream(
        spark, rocketmq.name_server, source, starting_offsets=EARLIEST
    ).select("body")
    if refused_before_4_2(
        lambda: write_rocketmq_stream(stream, rocketmq.name_server, target, real_time="1 minute")
    ):
        return
    query = write_rocketmq_stream(
        stream,
        rocketmq.name_server,
        target,
        real_time="1 minute",
        delivery_guarantee="exactly_once",
        checkpoint_location=str(tmp_path / "cp"),
    )
    try:
        with pytest.raises(StreamingQueryException) as refused:
            query.awaitTermination(120)
    finally:
        query.stop()
    text = str(refused.value)
    assert (
        "ROCKETMQ_OPTION_NOT_ALLOWED.REAL_TIME_EXACTLY_ONCE" in text
        and "'deliveryGuarantee'" in text
    ), text
    assert rocketmq.bodies(target) == []


def test_a_stateless_real_time_write_tracks_progress_as_sparks_kafka_sink_does_and_resumes(
    spark, rocketmq, tmp_path: Path
) -> None:
    """Spark 4.3 writes a stateless real-time query's offset and commit logs while its next batch
    runs, for sinks on a list of its own (Kafka's); ``write_rocketmq_stream(real_time=...)`` gets
    the RocketMQ sink the same. Spark 4.2 writes both logs at each batch end (the option ignored).
    Over a batch end (5-second batches) and a stop and restart from the checkpoint, every message
    sent reaches the target (at least once: a stopped batch is read again)."""
    source, target = unique_topic("rt-apt-src"), unique_topic("rt-apt-dst")
    rocketmq.create_topic(source, queues=2)
    rocketmq.create_topic(target, queues=2)
    checkpoint = str(tmp_path / "cp")

    def start() -> Any:
        stream = read_rocketmq_stream(
            spark, rocketmq.name_server, source, starting_offsets=EARLIEST
        ).select("body")
        return write_rocketmq_stream(
            stream,
            rocketmq.name_server,
            target,
            real_time="5 seconds",
            checkpoint_location=checkpoint,
        )

    def running(query: Any, stored: int) -> bool:
        assert query.exception() is None, f"the query failed: {query.exception()}"
        return len(set(rocketmq.bodies(target))) >= stored

    if refused_before_4_2(start):
        return
    query = start()
    try:
        tracking = (
            "AsyncProgressTrackingMicroBatchExecution" if HAS_STATEFUL else "MicroBatchExecution"
        )
        assert execution_of(query) in (None, tracking)
        rocketmq.send(source, 10, "apt-a-")
        wait_until("the first 10 rows in the target topic", lambda: running(query, 10), 60)
        wait_until("a batch end", lambda: len(query.recentProgress) >= 1, 60)
        rocketmq.send(source, 10, "apt-b-")
        wait_until("the next 10 rows in the target topic", lambda: running(query, 20), 60)
    finally:
        query.stop()
    rocketmq.send(source, 10, "apt-c-")
    query = start()
    try:
        wait_until("the 10 rows sent while it was stopped", lambda: running(query, 30), 60)
    finally:
        query.stop()
    expected = {f"apt-{part}-{i}" for part in "abc" for i in range(10)}
    assert set(rocketmq.bodies(target)) == expected


def test_real_time_queries_started_at_once_from_two_threads_both_run(
    spark, rocketmq, tmp_path: Path
) -> None:
    """``write_rocketmq_stream(real_time=...)`` turns Spark's sink allowlist check off around
    ``start()`` and puts the session's value back. Two threads starting at once must both start
    (neither with the check already put back by the other) and leave the session's setting as it was
    (not the other's ``false``)."""
    key = "spark.sql.streaming.realTimeMode.allowlistCheck"
    pairs = [(unique_topic(f"rt2-src{i}"), unique_topic(f"rt2-dst{i}")) for i in range(2)]
    for source, target in pairs:
        # One queue each: a real-time query holds a task slot per queue for its whole batch; two fit
        # local[2].
        rocketmq.create_topic(source, queues=1)
        rocketmq.create_topic(target, queues=1)
    streams = [
        read_rocketmq_stream(spark, rocketmq.name_server, source, starting_offsets=EARLIEST).select(
            "body"
        )
        for source, _ in pairs
    ]
    if refused_before_4_2(
        lambda: write_rocketmq_stream(streams[0], rocketmq.name_server, pairs[0][1], real_time=True)
    ):
        return
    before = spark.conf.get(key, None)
    barrier = threading.Barrier(2)
    queries: List[Optional[Any]] = [None, None]
    errors: List[BaseException] = []

    def start(i: int) -> None:
        barrier.wait()
        try:
            queries[i] = write_rocketmq_stream(
                streams[i],
                rocketmq.name_server,
                pairs[i][1],
                real_time="10 minutes",
                checkpoint_location=str(tmp_path / f"cp{i}"),
            )
        except BaseException as e:  # noqa: B036 - handed to the test thread
            errors.append(e)

    threads = [threading.Thread(target=start, args=(i,), daemon=True) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(180)
    try:
        assert not any(thread.is_alive() for thread in threads), (
            "a start did not return within 180 s"
        )
        assert not errors, f"a concurrent real-time start failed: {errors[0]!r}"
        assert spark.conf.get(key, None) == before, (
            "the session's allowlist setting was left changed"
        )
        for source, _ in pairs:
            rocketmq.send(source, 5, "rt2-")
        for _, target in pairs:
            wait_until(f"the 5 rows in {target}", lambda t=target: len(rocketmq.bodies(t)) >= 5, 60)
        for query in queries:
            assert query is not None and query.isActive and query.exception() is None
    finally:
        for query in queries:
            if query is not None:
                query.stop()
    for _, target in pairs:
        assert sorted(rocketmq.bodies(target)) == sorted(f"rt2-{i}" for i in range(5))
