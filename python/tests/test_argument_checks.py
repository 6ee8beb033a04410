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


"""The package's argument checks: each refused with its error before any Spark call."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Callable

import pytest

from rocketmq_spark import (
    EARLIEST,
    GROUP,
    LATEST,
    read_rocketmq,
    read_rocketmq_stream,
    rocketmq_stream_writer,
    write_rocketmq,
    write_rocketmq_stream,
)
from spark_stand_ins import NO_SPARK


@pytest.mark.parametrize(
    "call, error, message",
    [
        (
            lambda: read_rocketmq(NO_SPARK, 1234, "t"),
            TypeError,
            "name_server must be a str, not int",
        ),
        (lambda: read_rocketmq(NO_SPARK, "h:1", None), ValueError, "pass one of topic"),
        (
            lambda: read_rocketmq(NO_SPARK, "h:1", "t", topic_pattern="t.*"),
            ValueError,
            r"and topic_pattern \(a regular expression\)",
        ),
        (
            lambda: read_rocketmq(NO_SPARK, "h:1", topic_pattern="  "),
            ValueError,
            "topic_pattern must not be empty",
        ),
        (
            lambda: read_rocketmq(NO_SPARK, "h:1", "  "),
            ValueError,
            "topic must not be empty or blank",
        ),
        (
            lambda: read_rocketmq(NO_SPARK, "h:1", ["a", 3]),
            TypeError,
            "topic must be a topic name or a list",
        ),
        (
            lambda: read_rocketmq(NO_SPARK, "h:1", ["a", "b,c"]),
            ValueError,
            "'b,c' is not a topic name",
        ),
        (
            lambda: read_rocketmq(NO_SPARK, "h:1", "t", pull_batch_size=0),
            ValueError,
            "pull_batch_size must be a positive int, not 0",
        ),
        (
            lambda: read_rocketmq(NO_SPARK, "h:1", "t", pull_batch_size=2**31),
            ValueError,
            "pull_batch_size must be at most 2147483647",
        ),
        (
            lambda: read_rocketmq(NO_SPARK, "h:1", "t", pull_timeout_ms="3000"),
            TypeError,
            r"pull_timeout_ms must be an int, not str: pass e.g. pull_timeout_ms=1000",
        ),
        (
            lambda: read_rocketmq(NO_SPARK, "h:1", "t", fail_on_data_loss="false"),
            TypeError,
            "fail_on_data_loss must be a bool: pass fail_on_data_loss=True or "
            "fail_on_data_loss=False",
        ),
        (
            lambda: read_rocketmq(NO_SPARK, "h:1", "t", starting_offsets=LATEST),
            ValueError,
            "starting_offsets=LATEST reads nothing in a batch query",
        ),
        (
            lambda: read_rocketmq(NO_SPARK, "h:1", "t", ending_offsets="earliest"),
            ValueError,
            "ending_offsets=EARLIEST reads nothing",
        ),
        (
            lambda: read_rocketmq(NO_SPARK, "h:1", "t", starting_offsets="first"),
            ValueError,
            "starting_offsets must be EARLIEST, LATEST, GROUP, a dict",
        ),
        (
            lambda: read_rocketmq(
                NO_SPARK, "h:1", "t", starting_offsets=GROUP, group_offset_fallback="oldest"
            ),
            ValueError,
            "group_offset_fallback must be EARLIEST or LATEST",
        ),
        (
            lambda: read_rocketmq(NO_SPARK, "h:1", "t", starting_offsets={"t": {"b": {0: -3}}}),
            ValueError,
            "starting_offsets: offset -3 of t/b/0 must be an int >= 0, EARLIEST",
        ),
        (
            lambda: read_rocketmq(NO_SPARK, "h:1", "t", starting_offsets={"t": {"b": {"q": 1}}}),
            TypeError,
            "queue id 'q' of t/b must be an int >= 0",
        ),
        (
            lambda: read_rocketmq(NO_SPARK, "h:1", "t", starting_offsets={"t": [0]}),
            TypeError,
            "must map a topic name to",
        ),
        (
            lambda: read_rocketmq(
                NO_SPARK, "h:1", "t", starting_offsets=EARLIEST, starting_timestamp=0
            ),
            ValueError,
            "starting_offsets and starting_timestamp each say where to start: "
            "pass only one of them",
        ),
        (
            lambda: read_rocketmq(NO_SPARK, "h:1", "t", ending_timestamp=datetime(2024, 1, 1)),
            ValueError,
            "ending_timestamp is a naive datetime",
        ),
        (
            lambda: read_rocketmq(NO_SPARK, "h:1", "t", starting_timestamp=-1),
            ValueError,
            "starting_timestamp must be epoch milliseconds >= 0, not -1",
        ),
        (
            lambda: read_rocketmq_stream(
                NO_SPARK,
                "h:1",
                "t",
                max_trigger_delay=30,  # type: ignore[arg-type]
            ),
            TypeError,
            "max_trigger_delay must be a timedelta or a duration string such as '30s', '15m' or "
            "'500ms', not int",
        ),
        (
            lambda: write_rocketmq(
                NO_SPARK, "h:1", "t", transaction_timeout=timedelta(microseconds=1500)
            ),
            ValueError,
            "transaction_timeout must be a whole number of milliseconds",
        ),
        (
            lambda: read_rocketmq(
                NO_SPARK, "h:1", "t", pull_batch_size=64, options={"PULLBATCHSIZE": "32"}
            ),
            ValueError,
            r"option pullBatchSize is given twice with different values: pull_batch_size gives "
            r"'64', "
            r"options\['PULLBATCHSIZE'\] gives '32'",
        ),
        (
            lambda: read_rocketmq(
                NO_SPARK,
                "h:1",
                "t",
                options={"pullBatchSize": 64},  # type: ignore[dict-item]
            ),
            TypeError,
            r"options\['pullBatchSize'\] must be a str .*: pass '64'",
        ),
        (
            lambda: read_rocketmq(NO_SPARK, "h:1", "t", options={"a": "1", "A": "2"}),
            ValueError,
            r"options\['a'\] and options\['A'\] are one option",
        ),
        (
            lambda: write_rocketmq(
                NO_SPARK,
                "h:1",
                options=[("topic", "t")],  # type: ignore[arg-type]
            ),
            TypeError,
            "options must be a dict of option keys to str values",
        ),
        (
            lambda: rocketmq_stream_writer(NO_SPARK, "h:1", "t"),
            TypeError,
            "rocketmq_stream_writer needs a streaming DataFrame .*; write a batch DataFrame with "
            "write_rocketmq",
        ),
        (
            lambda: read_rocketmq_stream(NO_SPARK, "h:1", "t", metadata_retry_interval_ms=-1),
            ValueError,
            "metadata_retry_interval_ms must be an int >= 0, not -1",
        ),
        (
            lambda: write_rocketmq(NO_SPARK, "h:1", ["a", "b"]),
            TypeError,
            "topic must be one topic name",
        ),
        (
            lambda: write_rocketmq(NO_SPARK, "h:1", "t", send_retries=-1),
            ValueError,
            "send_retries must be an int >= 0, not -1",
        ),
        (lambda: write_rocketmq(NO_SPARK, None, "t"), ValueError, "name_server is required"),
        (
            lambda: write_rocketmq(NO_SPARK, "h:1", "t", checkpoint_location="/tmp/x"),
            ValueError,
            r"checkpoint_location only apply to streaming DataFrames \(write_rocketmq_stream\)",
        ),
        (
            lambda: write_rocketmq_stream(NO_SPARK, "h:1", ["a", "b"]),
            TypeError,
            "topic must be one topic name",
        ),
        (
            lambda: write_rocketmq_stream(NO_SPARK, "h:1", "t", output_mode="overwrite"),
            ValueError,
            "output_mode must be one of append, update, complete, not 'overwrite'",
        ),
        (
            lambda: write_rocketmq_stream(
                NO_SPARK, "h:1", "t", processing_time="1 second", available_now=True
            ),
            ValueError,
            "processing_time and available_now are two triggers",
        ),
        (
            lambda: write_rocketmq_stream(
                NO_SPARK, "h:1", "t", processing_time="1 second", real_time=True
            ),
            ValueError,
            "processing_time and real_time are two triggers",
        ),
        (
            lambda: write_rocketmq_stream(
                NO_SPARK,
                "h:1",
                "t",
                real_time=30,  # type: ignore[arg-type]
            ),
            TypeError,
            "real_time must be True or a batch duration such as '30 seconds', not 30",
        ),
        (
            lambda: write_rocketmq_stream(NO_SPARK, "h:1", "t"),
            TypeError,
            "write_rocketmq_stream needs a streaming DataFrame .*; write a batch DataFrame with "
            "write_rocketmq",
        ),
    ],
)
def test_arguments_are_checked_before_spark_is_reached(
    call: Callable[[], Any], error: type, message: str
) -> None:
    with pytest.raises(error, match=message):
        call()


def test_unknown_keywords_are_an_error() -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument 'startingOffsets'"):
        read_rocketmq(NO_SPARK, "h:1", "t", startingOffsets="earliest")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword argument 'ending_offsets'"):
        read_rocketmq_stream(
            NO_SPARK,
            "h:1",
            "t",
            ending_offsets="latest",  # type: ignore[call-arg]
        )
    with pytest.raises(TypeError, match="unexpected keyword argument 'max_offsets_per_trigger'"):
        read_rocketmq(NO_SPARK, "h:1", "t", max_offsets_per_trigger=5)  # type: ignore[call-arg]
