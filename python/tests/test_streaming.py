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

"""Streaming through the package: read_rocketmq_stream into write_rocketmq_stream, in classic and
Connect mode."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from embedded_rocketmq import unique_topic
from rocketmq_spark import EARLIEST, read_rocketmq_stream, write_rocketmq_stream
from waiting import wait_until


def _progress(progress: Any, field: str) -> Any:
    """A field of a progress report: pyspark 4 gives progress objects (over Connect too, where the
    fields are attributes), pyspark 3.5 plain dicts."""
    return getattr(progress, field) if hasattr(progress, field) else progress[field]


@pytest.mark.e2e
def test_stream_from_one_topic_into_another_in_rate_limited_batches(
    spark, rocketmq, tmp_path: Path
) -> None:
    source, sink = unique_topic("src"), unique_topic("dst")
    rocketmq.create_topic(source, queues=4)
    rocketmq.create_topic(sink, queues=2)
    rocketmq.send(source, 90, "e-")

    stream = read_rocketmq_stream(
        spark, rocketmq.name_server, source, starting_offsets=EARLIEST, max_offsets_per_trigger=40
    )
    assert stream.isStreaming
    upper = stream.selectExpr(
        "upper(CAST(body AS STRING)) AS body", "CAST(queueId AS STRING) AS tags"
    )
    query = write_rocketmq_stream(
        upper,
        rocketmq.name_server,
        sink,
        checkpoint_location=str(tmp_path / "cp"),
        available_now=True,
        query_name="upper_copy",
    )
    assert query is not None
    query.awaitTermination(180)
    assert not query.isActive and query.exception() is None
    assert query.name == "upper_copy"
    rows = [_progress(p, "numInputRows") for p in query.recentProgress]
    batches = [n for n in rows if n > 0]
    assert sorted(batches, reverse=True) == [40, 40, 10]
    assert sorted(rocketmq.bodies(sink)) == sorted(f"E-{i}" for i in range(90))
    # The last batch's progress: how long its messages waited in RocketMQ, how long its sends took
    # to be acknowledged.
    last = query.lastProgress
    waited = _progress(_progress(last, "sources")[0], "metrics")
    acks = _progress(_progress(last, "sink"), "metrics")
    assert int(waited["queueWaitCount"]) == _progress(last, "numInputRows") > 0, waited
    p50, p99, most = (int(waited[f"queueWaitMs{k}"]) for k in ("P50", "P99", "Max"))
    assert 0 <= p50 <= p99 <= most < 180_000, waited
    assert 1 <= int(acks["sendAckCount"]) <= _progress(last, "numInputRows"), acks
    p50, p99, most = (int(acks[f"sendAckMs{k}"]) for k in ("P50", "P99", "Max"))
    assert 0 <= p50 <= p99 <= most < 60_000, acks


@pytest.mark.e2e
def test_streaming_aggregation_in_update_mode(spark, rocketmq, tmp_path: Path) -> None:
    source, sink = unique_topic("words"), unique_topic("counts")
    rocketmq.create_topic(source, queues=2)
    rocketmq.create_topic(sink, queues=1)
    rocketmq.send(source, 30, "w", tag="t")  # bodies w0..w29

    counts = (
        read_rocketmq_stream(
            spark, rocketmq.name_server, source, sub_expression="t", starting_offsets=EARLIEST
        )
        .selectExpr("substr(CAST(body AS STRING), -1) AS digit")
        .groupBy("digit")
        .count()
        .selectExpr("concat(digit, '=', CAST(count AS STRING)) AS body")
    )
    query = write_rocketmq_stream(
        counts,
        rocketmq.name_server,
        sink,
        output_mode="update",
        checkpoint_location=str(tmp_path / "cp"),
        available_now=True,
    )
    assert query is not None
    query.awaitTermination(180)
    assert query.exception() is None
    assert sorted(rocketmq.bodies(sink)) == sorted(f"{d}=3" for d in range(10))


@pytest.mark.e2e
@pytest.mark.cross_version  # Spark's commit protocol and continuous mode: checked on each release
def test_write_rocketmq_stream_continuous_copies_each_row_as_it_arrives(
    spark, rocketmq, tmp_path: Path
) -> None:
    source, sink = unique_topic("csrc"), unique_topic("cdst")
    rocketmq.create_topic(source, queues=2)  # a task slot per queue: local[2]
    rocketmq.create_topic(sink, queues=2)
    rocketmq.send(source, 20, "c-")
    stream = read_rocketmq_stream(spark, rocketmq.name_server, source, starting_offsets=EARLIEST)
    # Progress recorded every 10 minutes: the rows can only be in the target before that if each is
    # sent at once.
    query = write_rocketmq_stream(
        stream.select("body"),
        rocketmq.name_server,
        sink,
        checkpoint_location=str(tmp_path / "cp"),
        continuous="10 minutes",
    )
    try:
        wait_until(
            f"20 messages copied into {sink}",
            lambda: len(rocketmq.bodies(sink)) >= 20,
            timeout_s=120,
        )
        assert query.exception() is None
        assert sorted(rocketmq.bodies(sink)) == sorted(f"c-{i}" for i in range(20))
    finally:
        query.stop()
    with pytest.raises(
        ValueError, match="continuous and available_now|available_now and continuous"
    ):
        write_rocketmq_stream(
            stream, rocketmq.name_server, sink, continuous="1 second", available_now=True
        )


@pytest.mark.e2e
def test_a_duration_text_goes_to_the_connector_which_names_the_option(
    spark, rocketmq, tmp_path: Path
) -> None:
    # Python passes a duration's text as given (it once checked it in words of its own): the
    # connector refuses it when the query plans its first batch, naming the option and the value.
    stream = read_rocketmq_stream(
        spark, rocketmq.name_server, unique_topic("never-read"), max_trigger_delay="soon"
    )
    query = None
    # B017: a StreamingQueryException, classic or Connect.
    with pytest.raises(Exception) as caught:  # noqa: B017
        query = (
            stream.writeStream.format("noop")
            .option("checkpointLocation", str(tmp_path / "cp"))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination(120)
    if query is not None:
        query.stop()
    text = str(caught.value)
    assert "ROCKETMQ_INVALID_OPTION_VALUE.DURATION" in text, text[:3000]
    assert "maxTriggerDelay" in text and "'soon'" in text, text[:3000]
