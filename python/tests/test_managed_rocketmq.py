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

"""Managed RocketMQ 5 from Python: every path through Apache's RocketMQ 5 proxy (cluster mode, in
front of the session's broker), with the proxy's Remoting endpoint as ``name_server``, as a managed
service gives it. The proxy refuses every admin request, so each step fails if a path still needs
one. Credentials and a namespace through a proxy with auth on: test_secured_clusters.py."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Iterator

import pytest

from embedded_rocketmq import unique_topic
from rocketmq_spark import (
    EARLIEST,
    GROUP,
    read_rocketmq,
    read_rocketmq_stream,
    write_rocketmq,
    write_rocketmq_stream,
)
from waiting import wait_until


@pytest.fixture(scope="module")
def proxy(rocketmq) -> Iterator[str]:
    endpoint = rocketmq.start_proxy()
    try:
        yield endpoint
    finally:
        rocketmq.stop_proxy()  # the session's later tests share the machine's two cores


def _bodies(df) -> list:
    return sorted(bytes(r.body).decode() for r in df.select("body").collect())


def test_batch_read_pushed_filters_stream_write_and_group_offsets_through_a_proxy(
    spark, rocketmq, proxy, tmp_path: Path
) -> None:
    from pyspark.sql import functions as F

    topic, copy = unique_topic("px"), unique_topic("px-copy")
    rocketmq.create_topic(topic, queues=2)
    rocketmq.create_topic(copy, queues=2)
    # Write through the proxy, read back through it.
    early = spark.createDataFrame([(f"early-{i}",) for i in range(30)], "body STRING")
    write_rocketmq(early, proxy, topic)
    # Through a proxy, planning cannot wait for the broker to index what it acknowledged.
    rocketmq.await_indexed()
    assert _bodies(read_rocketmq(spark, proxy, topic)) == sorted(f"early-{i}" for i in range(30))

    # A store-time filter is pushed down and reads only the later messages.
    boundary = (
        read_rocketmq(spark, proxy, topic)
        .agg(F.max(F.unix_millis("storeTimestamp")))
        .collect()[0][0]
        + 1
    )
    wait_until(
        "the clock past the first messages' store time",
        lambda: time.time() * 1000 > boundary,
        timeout_s=5,
    )
    rocketmq.send(topic, 20, "late-")
    rocketmq.await_indexed()
    late = read_rocketmq(spark, proxy, topic).where(
        F.col("storeTimestamp") >= F.timestamp_millis(F.lit(boundary))
    )
    assert _bodies(late) == sorted(f"late-{i}" for i in range(20))
    late.createOrReplaceTempView("late_through_proxy")
    plan = spark.sql("EXPLAIN SELECT body FROM late_through_proxy").collect()[0][0]
    assert "pushedFilters=[" in plan and "storeTimestamp >= " in plan, plan

    # A stream through the proxy copies everything to another topic through it, committing the
    # group's offsets.
    group = f"px-group-{topic[-8:]}"
    stream = read_rocketmq_stream(
        spark, proxy, topic, starting_offsets=EARLIEST, consumer_group=group
    )
    query = write_rocketmq_stream(
        stream.select("body"),
        proxy,
        copy,
        checkpoint_location=str(tmp_path / "chk"),
        available_now=True,
    )
    query.awaitTermination(180)
    assert query.exception() is None
    assert sorted(rocketmq.bodies(copy)) == sorted(
        [f"early-{i}" for i in range(30)] + [f"late-{i}" for i in range(20)]
    )

    # The group's offsets are where a later query starts: nothing new yet, then only what came
    # since.
    assert (
        _bodies(read_rocketmq(spark, proxy, topic, starting_offsets=GROUP, consumer_group=group))
        == []
    )
    rocketmq.send(topic, 5, "after-")
    rocketmq.await_indexed()
    since = read_rocketmq(spark, proxy, topic, starting_offsets=GROUP, consumer_group=group)
    assert _bodies(since) == sorted(f"after-{i}" for i in range(5))


def test_exactly_once_through_a_proxy_is_refused_before_anything_is_sent(
    spark, rocketmq, proxy
) -> None:
    topic = unique_topic("px-eo")
    rocketmq.create_topic(topic, queues=2, message_type="TRANSACTION")
    rows = spark.createDataFrame([(f"r{i}",) for i in range(10)], "body STRING")
    with pytest.raises(Exception) as refused:
        write_rocketmq(rows, proxy, topic, delivery_guarantee="exactly_once")
    assert "ROCKETMQ_OPTION_NOT_ALLOWED.PROXY_EXACTLY_ONCE" in str(refused.value)
    assert "Nothing was sent" in str(refused.value)
    assert rocketmq.bodies(topic) == []
    # The same write with the cluster's own name server is exactly-once.
    write_rocketmq(rows, rocketmq.name_server, topic, delivery_guarantee="exactly_once")
    assert sorted(rocketmq.bodies(topic)) == sorted(f"r{i}" for i in range(10))
