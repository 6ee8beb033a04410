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

"""End to end through the installed wheel: its bundled jar in a plain pip-installed PySpark."""

from __future__ import annotations

import json
import time
import zipfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

import rocketmq_spark
from embedded_rocketmq import unique_topic
from rocketmq_spark import (
    EARLIEST,
    LATEST_OFFSET,
    decode_properties,
    jar_path,
    read_rocketmq,
    read_rocketmq_stream,
    write_rocketmq,
    write_rocketmq_stream,
)
from waiting import wait_until

SCHEMA = [
    ("topic", "string"),
    ("flag", "int"),
    ("body", "binary"),
    ("properties", "string"),
    ("brokerName", "string"),
    ("queueId", "int"),
    ("queueOffset", "bigint"),
    ("bornTimestamp", "timestamp"),
    ("storeTimestamp", "timestamp"),
]


def test_the_installed_wheel_carries_the_shaded_jar() -> None:
    jar = Path(jar_path())
    assert jar.is_file()
    assert "site-packages" in jar.parts, f"tests must run against the installed wheel, not {jar}"
    assert jar.name == f"rocketmq-spark-connector-assembly_2.13-{rocketmq_spark.__version__}.jar"
    with zipfile.ZipFile(jar) as z:
        classes = [n for n in z.namelist() if n.endswith(".class")]
    assert any(
        n.startswith("org/apache/spark/sql/rocketmq/RocketMQSourceProvider") for n in classes
    )
    assert any(n.startswith("org/apache/rocketmq/client/") for n in classes)
    # Everything third-party is relocated: nothing can clash with Spark's netty, guava or jackson.
    foreign = [
        n
        for n in classes
        if not n.startswith(
            ("org/apache/spark/sql/rocketmq/", "org/apache/rocketmq/", "io/github/aliyunmq/")
        )
    ]
    assert foreign == [], foreign[:20]
    assert any(n.startswith("org/apache/spark/sql/rocketmq/shaded/io/netty/") for n in classes)


def test_spark_sees_only_our_jar(spark) -> None:
    assert spark.conf.get("spark.jars") == jar_path()


@pytest.mark.e2e
def test_write_then_read_back(spark, rocketmq) -> None:
    topic = unique_topic()
    rocketmq.create_topic(topic, queues=4)
    rows = [(f"order-{i}", "even" if i % 2 == 0 else "odd") for i in range(100)]
    # One message per request: the producer spreads the rows over every queue, so the read below
    # covers all four (in message batches, a write this small lands in one queue).
    write_rocketmq(
        spark.createDataFrame(rows, "body STRING, tags STRING"),
        name_server=rocketmq.name_server,
        topic=topic,
        send_batch_messages=1,
    )

    assert sorted(rocketmq.bodies(topic)) == sorted(b for b, _ in rows)

    df = read_rocketmq(spark, name_server=rocketmq.name_server, topic=topic)
    assert df.dtypes == SCHEMA
    got = df.selectExpr("CAST(body AS STRING) AS body", "properties", "queueId").collect()
    assert sorted(r.body for r in got) == sorted(b for b, _ in rows)
    assert {r.queueId for r in got} == {0, 1, 2, 3}
    tags = {r.body: json.loads(r.properties)["TAGS"] for r in got}
    assert tags == dict(rows)

    evens = read_rocketmq(
        spark, name_server=rocketmq.name_server, topic=topic, sub_expression="even"
    )
    assert evens.count() == 50


@pytest.mark.e2e
@pytest.mark.cross_version  # Spark's commit protocol and continuous mode: checked on each release
def test_exactly_once_batch_and_streaming_writes_store_every_row_once(
    spark, rocketmq, tmp_path: Path
) -> None:
    """delivery_guarantee="exactly_once" from Python, in a batch write (rows with and without a
    sharding key) and a RocketMQ -> RocketMQ stream; RocketMQ's own consumer (committed messages
    only) finds every row once. Runs in the Connect pass and on every pyspark of the matrix too."""
    source, batch_out, stream_out = (
        unique_topic("eo-in"),
        unique_topic("eo-batch"),
        unique_topic("eo-stream"),
    )
    for topic in (source, batch_out, stream_out):
        rocketmq.create_topic(topic, queues=4)
    rows = [(f"row-{i}", f"key-{i % 8}" if i % 2 else None) for i in range(2000)]
    # An exactly-once task whose half message gets no answer in time fails by design, and local[N]
    # runs no task twice (a cluster would): this test is about delivery, not a lost answer
    # (RocketMQNetworkFaultSuite's is), so its sends wait out a broker slowed by a busy machine.
    patient = 15_000
    write_rocketmq(
        spark.createDataFrame(rows, "body STRING, shardingKey STRING"),
        rocketmq.name_server,
        batch_out,
        delivery_guarantee="exactly_once",
        send_timeout_ms=patient,
    )
    assert sorted(rocketmq.bodies(batch_out)) == sorted(b for b, _ in rows)

    rocketmq.send(source, 1500, "s-")
    stream = read_rocketmq_stream(
        spark, rocketmq.name_server, source, starting_offsets=EARLIEST, max_offsets_per_trigger=500
    )
    query = write_rocketmq_stream(
        stream.selectExpr("CAST(body AS STRING) AS body"),
        rocketmq.name_server,
        stream_out,
        checkpoint_location=str(tmp_path / "checkpoint"),
        delivery_guarantee="exactly_once",
        send_timeout_ms=patient,
        # The brokers' check-back settings stated, as a least-privilege user would (nothing asked).
        broker_transaction_check_interval="30s",
        broker_transaction_check_max=15,
        available_now=True,
    )
    query.awaitTermination(180)
    assert query.exception() is None
    assert sorted(rocketmq.bodies(stream_out)) == sorted(f"s-{i}" for i in range(1500))
    # How the sink committed each batch is in the query's progress.
    metrics = [p["sink"]["metrics"] for p in query.recentProgress]
    assert sum(int(m["epochHalfMessages"]) for m in metrics) == 1500
    assert {m["epochLeftToCheckBack"] for m in metrics} == {"0"}
    assert {m["brokerChecks"] for m in metrics} == {"stated: 15 x 30000 ms"}


@pytest.mark.e2e
def test_read_what_a_plain_client_sent_with_offsets(spark, rocketmq) -> None:
    topic = unique_topic()
    rocketmq.create_topic(topic, queues=1)
    rocketmq.send(topic, 20, "plain-")
    latest = rocketmq.latest_offsets(topic)
    assert latest == {topic: {"broker-a": {"0": 20}}}
    df = read_rocketmq(
        spark,
        name_server=rocketmq.name_server,
        topic=topic,
        starting_offsets=json.dumps({topic: {"broker-a": {"0": 5}}}),
        ending_offsets=json.dumps({topic: {"broker-a": {"0": 15}}}),
        pull_batch_size=4,
    )
    got = [(r.queueOffset, bytes(r.body).decode()) for r in df.orderBy("queueOffset").collect()]
    assert got == [(i, f"plain-{i}") for i in range(5, 15)]


@pytest.mark.e2e
def test_jvm_errors_name_the_option(spark, rocketmq) -> None:
    # JSON strings pass through Python unparsed: the connector checks them and names the option.
    with pytest.raises(Exception, match=r"ROCKETMQ_INVALID_OPTION_VALUE.*'startingOffsets'"):
        read_rocketmq(
            spark,
            name_server=rocketmq.name_server,
            topic="any",
            starting_offsets='{"any": {"broker-a": {"0": -1}}}',
        ).collect()
    with pytest.raises(Exception, match=r"ROCKETMQ_TOPIC_NOT_FOUND.*'no-such-topic'"):
        read_rocketmq(spark, name_server=rocketmq.name_server, topic="no-such-topic").collect()


@pytest.mark.e2e
def test_a_duration_the_connector_refuses_is_a_value_error_naming_the_keyword(
    spark, rocketmq
) -> None:
    # One duration grammar, the connector's: Python converts a timedelta ("1s") and passes text as
    # given; the connector refuses both (a transaction timeout is at least 2 s) before anything is
    # sent, and the package re-raises its refusal naming the keyword as well as the option.
    rows = spark.createDataFrame([("never-sent",)], "body STRING")
    for short in ("1s", timedelta(seconds=1)):
        with pytest.raises(ValueError) as caught:
            write_rocketmq(rows, rocketmq.name_server, "never-written", transaction_timeout=short)
        text = str(caught.value)
        assert text.startswith("transaction_timeout (option transactionTimeout): "), text[:2000]
        assert "ROCKETMQ_INVALID_OPTION_VALUE.TRANSACTION_TIMEOUT]" in text and "'1s'" in text, (
            text[:2000]
        )
        assert caught.value.__cause__ is not None
    with pytest.raises(
        ValueError, match=r"^transaction_timeout \(option transactionTimeout\): .*\.DURATION\]"
    ):
        write_rocketmq(rows, rocketmq.name_server, "never-written", transaction_timeout="soon")


@pytest.mark.e2e
def test_helpers_offsets_from_dicts_timestamps_from_datetime_and_decoded_properties(
    spark, rocketmq
) -> None:
    first, second = unique_topic("h1"), unique_topic("h2")
    for t in (first, second):
        rocketmq.create_topic(t, queues=2)
    # One message per request, so the ten spread over both queues (queue 0 is read from offset 2
    # below); in batches they could all land in one queue.
    write_rocketmq(
        spark.createDataFrame([(f"a{i}", "x") for i in range(10)], "body STRING, tags STRING"),
        rocketmq.name_server,
        first,
        send_batch_messages=1,
    )
    write_rocketmq(
        spark.createDataFrame([(f"b{i}", second) for i in range(6)], "body STRING, topic STRING"),
        rocketmq.name_server,
        max_in_flight_messages=2,
        send_retries=0,
    )

    both = read_rocketmq(
        spark,
        rocketmq.name_server,
        [first, second],
        include_extra_columns=True,
        min_partitions=4,
        pull_batch_size=3,
    )
    rows = both.select("topic", "tags", decode_properties().alias("props")).collect()
    assert sorted((r.topic, r.tags) for r in rows) == sorted(
        [(first, "x")] * 10 + [(second, None)] * 6
    )
    assert all(r.props["TAGS"] == "x" for r in rows if r.topic == first)

    # From a dict: queue 0 of the first topic from offset 2, every other queue from its start.
    latest = rocketmq.latest_offsets(first)[first]["broker-a"]
    skipped = read_rocketmq(
        spark,
        rocketmq.name_server,
        first,
        starting_offsets={first: {"broker-a": {0: 2, 1: EARLIEST}}},
        ending_offsets={first: {"broker-a": {0: LATEST_OFFSET}}},
    )
    assert skipped.count() == sum(latest.values()) - 2

    # Store times are in the past: a start time in the future reads nothing, one in the past
    # everything.
    now = datetime.now(timezone.utc)
    assert (
        read_rocketmq(
            spark, rocketmq.name_server, first, starting_timestamp=now + timedelta(hours=1)
        ).count()
        == 0
    )
    assert (
        read_rocketmq(
            spark,
            rocketmq.name_server,
            first,
            starting_timestamp=now - timedelta(hours=1),
            ending_offsets_by_timestamp={first: {"broker-a": {0: now + timedelta(hours=1)}}},
        ).count()
        == 10
    )


@pytest.mark.e2e
def test_filters_on_store_time_and_queue_are_pushed_down_and_read_only_their_messages(
    spark, rocketmq
) -> None:
    from pyspark.sql import functions as F

    topic = unique_topic()
    rocketmq.create_topic(topic, queues=2)
    rocketmq.send(topic, 20, "early-")

    def last_store_ms() -> int:
        df = read_rocketmq(spark, name_server=rocketmq.name_server, topic=topic)
        return df.agg(F.max(F.unix_millis("storeTimestamp"))).collect()[0][0]

    boundary = last_store_ms() + 1
    wait_until(
        "the clock past the first messages' store time",
        lambda: time.time() * 1000 > boundary,
        timeout_s=5,
    )
    rocketmq.send(topic, 20, "late-")

    late = read_rocketmq(spark, name_server=rocketmq.name_server, topic=topic).where(
        F.col("storeTimestamp") >= F.timestamp_millis(F.lit(boundary))
    )
    assert sorted(bytes(r.body).decode() for r in late.collect()) == sorted(
        f"late-{i}" for i in range(20)
    )
    late.where(F.col("queueId") == 0).createOrReplaceTempView("late_queue_0")
    plan = spark.sql("EXPLAIN SELECT body FROM late_queue_0").collect()[0][0]
    assert "pushedFilters=[" in plan and "narrowedTo=[queueId IN (0), storeTimestamp >= " in plan, (
        plan
    )
