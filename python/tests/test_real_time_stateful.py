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

"""Real-time mode from Python, stateful queries into RocketMQ: ``dropDuplicates`` and a count per
key run on pyspark 4.3 and are refused by Spark 4.2 at their first batch;
``dropDuplicatesWithinWatermark`` is refused by both; a query that outgrows the task slots fails at
start. Before 4.2 the real-time start itself is refused. The stateless queries:
test_real_time_stateless.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Dict, Tuple

import pytest
from pyspark.errors import StreamingQueryException

from embedded_rocketmq import unique_topic
from real_time_checks import HAS_STATEFUL, execution_of, refused_before_4_2
from rocketmq_spark import EARLIEST, read_rocketmq_stream, write_rocketmq_stream
from waiting import wait_until

# Over Spark Connect too (e2e), as the stateless ones.
pytestmark = [pytest.mark.cross_version, pytest.mark.e2e]


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

    if refused_before_4_2(start):
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

    if refused_before_4_2(start):
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
    assert execution_of(query) in (None, "MicroBatchExecution")
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

    if refused_before_4_2(start):
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

    if refused_before_4_2(start):
        return
    query, source, target = start()
    text = _error_it_fails_with(query)
    assert "ROCKETMQ_REAL_TIME_INSUFFICIENT_SLOTS" in text, text
    assert "needs 3 task slots" in text and "has 2" in text, text
    assert f"{source}/broker-a/0" in text, text
    assert "Deduplicate (spark.sql.shuffle.partitions = 2)" in text, text
    assert rocketmq.bodies(target) == []
