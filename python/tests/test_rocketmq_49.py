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

"""The connector against a RocketMQ 4.9.7 broker, the line many production clusters still run: batch
and streaming reads and writes, tags filtered by the broker, offsets in the checkpoint. The client
is the connector's own (5.5.0, remoting protocol); the broker is Maven Central's 4.9.7, run as its
own process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import pytest

from embedded_rocketmq import unique_topic
from rocketmq49 import RocketMQ49
from rocketmq_spark import (
    EARLIEST,
    GROUP,
    read_rocketmq,
    read_rocketmq_stream,
    write_rocketmq,
    write_rocketmq_stream,
)


@pytest.fixture(scope="module")
def broker49(tmp_path_factory):
    broker = RocketMQ49(tmp_path_factory.mktemp("rocketmq49")).start()
    try:
        yield broker
    finally:
        broker.stop()


def test_batch_write_and_read_with_tags_on_a_4_9_broker(spark, broker49) -> None:
    topic = unique_topic("b49")
    broker49.create_topic(topic, queues=4)
    rows = [(f"order-{i}", "even" if i % 2 == 0 else "odd") for i in range(200)]
    write_rocketmq(
        spark.createDataFrame(rows, "body STRING, tags STRING"), broker49.name_server, topic
    )
    # And one request per row, which spreads them over the queues.
    more = [(f"single-{i}", "odd") for i in range(40)]
    write_rocketmq(
        spark.createDataFrame(more, "body STRING, tags STRING"),
        broker49.name_server,
        topic,
        send_batch_messages=1,
    )

    got = (
        read_rocketmq(spark, broker49.name_server, topic)
        .selectExpr("CAST(body AS STRING) AS body", "properties", "brokerName", "queueId")
        .collect()
    )
    assert sorted(r.body for r in got) == sorted(b for b, _ in rows + more)
    assert {json.loads(r.properties)["TAGS"] for r in got} == {"even", "odd"}
    assert {r.brokerName for r in got} == {"broker-49"}
    assert len({r.queueId for r in got}) > 1
    evens = read_rocketmq(spark, broker49.name_server, topic, sub_expression="even")
    assert sorted(
        r.body for r in evens.selectExpr("CAST(body AS STRING) AS body").collect()
    ) == sorted(b for b, t in rows if t == "even")


def test_streaming_topic_to_topic_on_a_4_9_broker_resumes_from_its_checkpoint(
    spark, broker49, tmp_path: Path
) -> None:
    source, sink = unique_topic("s49"), unique_topic("k49")
    broker49.create_topic(source, queues=4)
    broker49.create_topic(sink, queues=2)
    checkpoint = str(tmp_path / "cp")

    def copy_available() -> None:
        stream = read_rocketmq_stream(
            spark,
            broker49.name_server,
            source,
            starting_offsets=EARLIEST,
            max_offsets_per_trigger=50,
        )
        query = write_rocketmq_stream(
            stream.selectExpr("upper(CAST(body AS STRING)) AS body"),
            broker49.name_server,
            sink,
            checkpoint_location=checkpoint,
            available_now=True,
        )
        query.awaitTermination(180)
        assert not query.isActive and query.exception() is None

    write_rocketmq(
        spark.createDataFrame([(f"e-{i}",) for i in range(120)], "body STRING"),
        broker49.name_server,
        source,
    )
    copy_available()
    write_rocketmq(
        spark.createDataFrame([(f"e-{i}",) for i in range(120, 150)], "body STRING"),
        broker49.name_server,
        source,
    )
    copy_available()  # from the checkpoint: only the 30 new ones

    copied = (
        read_rocketmq(spark, broker49.name_server, sink)
        .selectExpr("CAST(body AS STRING) AS body")
        .collect()
    )
    assert sorted(r.body for r in copied) == sorted(f"E-{i}" for i in range(150))


def test_exactly_once_batch_write_on_a_4_9_broker(spark, broker49) -> None:
    """Half messages, the driver's pipelined commits and the sharding keys' order work on a 4.9
    broker too."""
    topic = unique_topic("eo49")
    broker49.create_topic(topic, queues=4)
    rows = [(f"{i % 4}:{i:05d}", str(i % 4)) for i in range(4000)]
    write_rocketmq(
        spark.createDataFrame(rows, "body STRING, shardingKey STRING").coalesce(1),
        broker49.name_server,
        topic,
        delivery_guarantee="exactly_once",
    )
    got = (
        read_rocketmq(spark, broker49.name_server, topic)
        .selectExpr("CAST(body AS STRING) AS body", "queueId", "queueOffset")
        .collect()
    )
    assert sorted(r.body for r in got) == sorted(b for b, _ in rows)
    # One task wrote them: each key's rows are in its queue in the order written.
    by_key: dict = {}
    for r in sorted(got, key=lambda r: (r.queueId, r.queueOffset)):
        by_key.setdefault(r.body.split(":")[0], []).append(r.body)
    assert all(bodies == sorted(bodies) for bodies in by_key.values())


def test_store_time_filters_pushed_to_a_4_9_broker_return_what_spark_alone_returns(
    spark, broker49
) -> None:
    """A 4.9 broker's time index answers the offset stored nearest a time, not the first stored at
    or after it: each cut is checked by the store time of the message beside it, so a pushed filter
    loses no row."""
    topic = unique_topic("t49")
    broker49.create_topic(topic, queues=2)
    for burst in range(
        3
    ):  # bursts: many messages share a millisecond, with gaps between the bursts
        rows = [(f"b{burst}-{i}",) for i in range(400)]
        write_rocketmq(spark.createDataFrame(rows, "body STRING"), broker49.name_server, topic)
    every = read_rocketmq(spark, broker49.name_server, topic).selectExpr(
        "CAST(body AS STRING) AS body", "unix_millis(storeTimestamp) AS ms"
    )
    stored = [(r.body, r.ms) for r in every.collect()]
    assert len(stored) == 1200
    counts: dict = {}
    for _, ms in stored:
        counts[ms] = counts.get(ms, 0) + 1
    times = sorted(counts)
    crowded = sorted(times, key=lambda ms: -counts[ms])[:3]  # a cut inside a run of one millisecond
    gaps = [a + 1 for a, b in zip(times, times[1:], strict=False) if b - a > 2][
        :3
    ]  # a time nobody was stored at
    for t in sorted(set(crowded + gaps + [times[0], times[-1]])):
        for op in (">=", "<"):
            pushed = read_rocketmq(spark, broker49.name_server, topic).where(
                f"storeTimestamp {op} timestamp_millis({t})"
            )
            plan = pushed._jdf.queryExecution().executedPlan().toString()
            assert "storeTimestamp" in plan.split("pushedFilters=")[1], plan
            got = sorted(
                r.body for r in pushed.selectExpr("CAST(body AS STRING) AS body").collect()
            )
            want = sorted(b for b, ms in stored if (ms >= t if op == ">=" else ms < t))
            assert got == want, f"storeTimestamp {op} {t}: {len(got)} rows, {len(want)} expected"


def _bodies(df) -> list:
    return sorted(r.body for r in df.selectExpr("CAST(body AS STRING) AS body").collect())


def test_group_start_for_a_group_that_never_committed_on_a_4_9_broker(spark, broker49) -> None:
    """A 4.9 broker answers 0 for a queue a group never committed while the first message is
    in memory: the read tells that from a committed 0, so the fallback applies."""
    topic = unique_topic("g49")
    broker49.create_topic(topic, queues=4)
    bodies = [f"old-{i}" for i in range(200)]
    rows = spark.createDataFrame([(b,) for b in bodies], "body STRING")
    write_rocketmq(rows, broker49.name_server, topic)
    group = f"never-{topic}"
    # None: groupOffsetFallback's default, latest.
    for fallback, expected in ((None, []), (EARLIEST, sorted(bodies))):
        assert _bodies(_read_from_group(spark, broker49, topic, group, fallback)) == expected, (
            fallback
        )


def test_group_start_at_committed_offsets_0_included_on_a_4_9_broker(spark, broker49, tmp_path):
    """A stream with consumer_group commits where it stopped; a read from the group starts there,
    at 0 where the group committed 0 (a 4.9 broker answers it as a queue never committed)."""
    topic = unique_topic("c49")
    broker49.create_topic(topic, queues=2)
    group = f"etl-{topic}"
    # One sharding key: all in one queue, the other queue stays empty.
    first = [(f"first-{i}", "k") for i in range(30)]
    keyed_rows = spark.createDataFrame(first, "body STRING, shardingKey STRING")
    write_rocketmq(keyed_rows, broker49.name_server, topic)
    stream = read_rocketmq_stream(
        spark,
        broker49.name_server,
        topic,
        starting_offsets=EARLIEST,
        consumer_group=group,
    )
    query = (
        stream.writeStream.format("noop")
        .option("checkpointLocation", str(tmp_path / "cp"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(180)
    assert not query.isActive and query.exception() is None
    # The group committed the keyed queue's end and 0 in the empty one; now both get messages.
    second = [f"second-{i}" for i in range(40)]
    write_rocketmq(
        spark.createDataFrame([(b,) for b in second], "body STRING"),
        broker49.name_server,
        topic,
        send_batch_messages=1,
    )
    stored = (
        read_rocketmq(spark, broker49.name_server, topic)
        .selectExpr("CAST(body AS STRING) AS body", "queueId", "queueOffset")
        .collect()
    )
    keyed = {r.queueId for r in stored if r.body.startswith("first-")}
    assert len(keyed) == 1
    # The queue where the group committed 0 holds messages from 0 on: the case a 4.9 broker blurs.
    assert any(r.queueId not in keyed and r.queueOffset == 0 for r in stored)
    for fallback in (None, EARLIEST):
        assert _bodies(_read_from_group(spark, broker49, topic, group, fallback)) == sorted(second)


def _read_from_group(spark, broker49, topic: str, group: str, fallback: Optional[str]):
    """A batch read of ``topic`` from where ``group`` committed, ``fallback`` where it did not."""
    return read_rocketmq(
        spark,
        broker49.name_server,
        topic,
        starting_offsets=GROUP,
        consumer_group=group,
        group_offset_fallback=fallback,
    )
