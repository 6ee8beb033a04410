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

"""Real-time mode from Python: ``real_time_trigger`` on every pyspark of the matrix (a real-time
query where pyspark can ask for one, 4.2 and later; the error naming the versions elsewhere)."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import pyspark
import pytest
from pyspark.errors import StreamingQueryException

from embedded_rocketmq import unique_topic
from rocketmq_spark import EARLIEST, read_rocketmq_stream, real_time_trigger, write_rocketmq_stream
from waiting import wait_until

# Over Spark Connect too (e2e): the trigger and the foreach writer go through the Connect client.
pytestmark = [pytest.mark.cross_version, pytest.mark.e2e]

PYSPARK = tuple(int(p) for p in pyspark.__version__.split(".")[:2])
HAS_TRIGGER = PYSPARK >= (4, 2)
# Spark 4.3 runs stateful operators (aggregations, deduplication) in real-time mode, and tracks a
# stateless real-time query's progress asynchronously: the 4.3 leg of dev/test. Spark 4.2 refuses a
# shuffle or a stateful operator in real-time mode, and writes both logs at each batch end.
HAS_STATEFUL = PYSPARK >= (4, 3)


def _lines(folder: Path) -> List[str]:
    return [line for f in folder.glob("*.txt") for line in f.read_text().splitlines()]


def _refused_before_4_2(start: Callable[[], Any]) -> bool:
    """On pyspark before 4.2: asserts that ``start`` (a real-time start) fails naming the pyspark it
    needs, and returns True. On 4.2 and later: returns False, ``start`` not called."""
    if HAS_TRIGGER:
        return False
    with pytest.raises(RuntimeError) as refused:
        start()
    needs = f"needs pyspark 4.2 or later; this is pyspark {pyspark.__version__}"
    assert needs in str(refused.value), str(refused.value)
    return True


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
    if _refused_before_4_2(lambda: real_time_trigger(writer, "5 seconds")):
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
    if _refused_before_4_2(
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
    if _refused_before_4_2(
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


def _execution_of(query: Any) -> Optional[str]:
    """The class that runs ``query`` in the Spark driver (None over Spark Connect, whose client
    cannot see it)."""
    jsq = getattr(query, "_jsq", None)
    return None if jsq is None else jsq.streamingQuery().getClass().getSimpleName()


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

    if _refused_before_4_2(start):
        return
    query = start()
    try:
        tracking = (
            "AsyncProgressTrackingMicroBatchExecution" if HAS_STATEFUL else "MicroBatchExecution"
        )
        assert _execution_of(query) in (None, tracking)
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


def _stateful_copy(
    spark,
    rocketmq,
    tmp_path: Path,
    name: str,
    transform: Callable[[Any], Any],
    shuffle_partitions: int = 1,
) -> Tuple[Any, str, str]:
    """Starts ``transform`` of a one-queue source topic into a new target topic under
    ``real_time="10 minutes"``, on one shuffle partition: the batch holds a task slot for the
    source's queue and one for the shuffle partition for all its 10 minutes (``local[2]``). Returns
    the query, the source and the target."""
    source, target = unique_topic(f"rt-{name}-src"), unique_topic(f"rt-{name}-dst")
    rocketmq.create_topic(source, queues=1)
    rocketmq.create_topic(target, queues=1)
    partitions = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", str(shuffle_partitions))
    try:
        stream = transform(
            read_rocketmq_stream(spark, rocketmq.name_server, source, starting_offsets=EARLIEST)
        )
        query = write_rocketmq_stream(
            stream,
            rocketmq.name_server,
            target,
            real_time="10 minutes",
            checkpoint_location=str(tmp_path / "cp"),
        )
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", partitions)
    return query, source, target


def _error_it_fails_with(query: Any) -> str:
    """The error ``query`` fails with (within two minutes: it must fail); the query is stopped
    either way."""
    try:
        with pytest.raises(StreamingQueryException) as failed:
            query.awaitTermination(120)
    finally:
        query.stop()
    return str(failed.value)


def _fails_with_sparks_allowlist_error(query, rocketmq, target: str, *operators: str) -> None:
    """``query`` fails at its first batch with Spark's real-time allowlist error naming each of
    ``operators``, and stores nothing in ``target``."""
    text = _error_it_fails_with(query)
    assert "STREAMING_REAL_TIME_MODE.OPERATOR_OR_SINK_NOT_IN_ALLOWLIST" in text, text
    for operator in operators:
        assert operator in text, text
    assert rocketmq.bodies(target) == []


def _distinct_bodies(df: Any) -> Any:
    """The bodies of a RocketMQ stream as strings, each once (``dropDuplicates``: a stateful
    operator)."""
    return df.selectExpr("CAST(body AS STRING) AS body").dropDuplicates(["body"])


def _await_marker_while_the_batch_runs(query, rocketmq, target: str, marker: str) -> None:
    """Waits for ``marker`` in ``target``; the query must still run its first 10-minute batch
    (nothing waited for a batch end). Stops the query whatever happens."""
    try:

        def stored() -> bool:
            # A query that failed never stores the marker: fail now, with its error, not after the
            # deadline.
            assert query.exception() is None, f"the query failed: {query.exception()}"
            return marker in rocketmq.bodies(target)

        wait_until(f"{marker} in the target topic", stored, 120)
        assert query.isActive and query.exception() is None
        assert query.lastProgress is None, (
            "a real-time batch ended: the rows may have waited for its end"
        )
    finally:
        query.stop()


def test_a_stateful_real_time_query_sends_each_row_after_its_shuffle_while_the_batch_runs(
    spark, rocketmq, tmp_path: Path
) -> None:
    """RocketMQ -> dropDuplicates -> RocketMQ under ``real_time``: the sink runs after the shuffle,
    in a task that reads nothing from RocketMQ, and still sends each row as it comes (the batch
    lasts 10 minutes). Each body is sent twice, in order, into a one-queue topic, then an end
    marker: once the marker is in the target, so is every body before it, each once. Spark 4.2
    refuses the query at its first batch: neither its shuffle nor the deduplication runs in
    real-time mode there."""

    def start() -> Tuple[Any, str, str]:
        return _stateful_copy(spark, rocketmq, tmp_path, "dedup", _distinct_bodies)

    if _refused_before_4_2(start):
        return
    query, source, target = start()
    # The harness sends bodies prefix0, prefix1, ...: one message per command, each command twice.
    for prefix in [f"dup-{i}-" for i in range(20)] + ["dup-end-"]:
        rocketmq.send(source, 1, prefix)
        rocketmq.send(source, 1, prefix)
    if not HAS_STATEFUL:
        _fails_with_sparks_allowlist_error(
            query, rocketmq, target, "ShuffleExchangeExec", "StreamingDeduplicateExec"
        )
        return
    _await_marker_while_the_batch_runs(query, rocketmq, target, "dup-end-0")
    assert sorted(rocketmq.bodies(target)) == sorted(
        [f"dup-{i}-0" for i in range(20)] + ["dup-end-0"]
    )


def test_a_real_time_count_per_key_sends_each_update_while_the_batch_runs(
    spark, rocketmq, tmp_path: Path
) -> None:
    """RocketMQ -> count per body -> RocketMQ under ``real_time`` (update output): each updated
    count is sent as it comes, after the shuffle, while the 10-minute batch runs; the last count
    stored per key is the number sent. Spark 4.2 refuses the query at its first batch: neither its
    shuffle nor the aggregation's state store runs in real-time mode there."""

    def start() -> Tuple[Any, str, str]:
        return _stateful_copy(
            spark,
            rocketmq,
            tmp_path,
            "count",
            lambda df: (
                df.selectExpr("CAST(body AS STRING) AS key")
                .groupBy("key")
                .count()
                .selectExpr("concat(key, ':', CAST(count AS STRING)) AS body")
            ),
        )

    if _refused_before_4_2(start):
        return
    query, source, target = start()
    for prefix, times in [("k-a-", 5), ("k-b-", 3), ("k-c-", 1), ("k-end-", 1)]:
        for _ in range(times):
            rocketmq.send(source, 1, prefix)
    if not HAS_STATEFUL:
        _fails_with_sparks_allowlist_error(
            query,
            rocketmq,
            target,
            "HashAggregateExec",
            "ShuffleExchangeExec",
            "StateStoreRestoreExec",
            "StateStoreSaveExec",
        )
        return
    # Spark 4.3 tracks a stateful query's progress at each batch end, whatever the sink: the option
    # write_rocketmq_stream sets for the stateless ones leaves that to Spark.
    assert _execution_of(query) in (None, "MicroBatchExecution")
    _await_marker_while_the_batch_runs(query, rocketmq, target, "k-end-0:1")
    last: Dict[str, int] = {}
    for body in rocketmq.bodies(target):
        key, count = body.rsplit(":", 1)
        last[key] = max(last.get(key, 0), int(count))
    assert last == {"k-a-0": 5, "k-b-0": 3, "k-c-0": 1, "k-end-0": 1}


def test_drop_duplicates_within_watermark_in_real_time_fails_with_sparks_error_naming_the_operator(
    spark, rocketmq, tmp_path: Path
) -> None:
    """Spark 4.3's real-time mode does not run ``dropDuplicatesWithinWatermark`` (its operator is
    not in Spark's real-time allowlist), nor does 4.2's: the query fails at its first batch with
    Spark's error naming the operator, and stores nothing; the connector neither hides the refusal
    nor turns the check off for it."""

    def start() -> Tuple[Any, str, str]:
        return _stateful_copy(
            spark,
            rocketmq,
            tmp_path,
            "within-wm",
            lambda df: (
                df.selectExpr("CAST(body AS STRING) AS body", "storeTimestamp")
                .withWatermark("storeTimestamp", "10 minutes")
                .dropDuplicatesWithinWatermark(["body"])
                .select("body")
            ),
        )

    if _refused_before_4_2(start):
        return
    query, source, target = start()
    rocketmq.send(source, 2, "wm-")
    _fails_with_sparks_allowlist_error(
        query, rocketmq, target, "StreamingDeduplicateWithinWatermarkExec"
    )


def test_a_stateful_real_time_query_that_outgrows_the_slots_fails_at_start_naming_them(
    spark, rocketmq, tmp_path: Path
) -> None:
    """One source queue and dropDuplicates on two shuffle partitions need three task slots at once;
    ``local[2]`` has two: the query fails before its tasks run, naming the queue, the stateful stage
    and both numbers (on Spark 4.2 too: the connector checks as Spark plans the batch, before
    Spark's operator allowlist check)."""

    def start() -> Tuple[Any, str, str]:
        return _stateful_copy(
            spark, rocketmq, tmp_path, "slots", _distinct_bodies, shuffle_partitions=2
        )

    if _refused_before_4_2(start):
        return
    query, source, target = start()
    text = _error_it_fails_with(query)
    assert "ROCKETMQ_REAL_TIME_INSUFFICIENT_SLOTS" in text, text
    assert "needs 3 task slots" in text and "has 2" in text, text
    assert f"{source}/broker-a/0" in text, text
    assert "Deduplicate (spark.sql.shuffle.partitions = 2)" in text, text
    assert rocketmq.bodies(target) == []


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
    if _refused_before_4_2(
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
