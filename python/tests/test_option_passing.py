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


"""What the read and write functions hand Spark: options by keyword or by key, durations, traces,
the stream writer's calls, and the connector's refusals named by keyword (recorded, no Spark)."""

from __future__ import annotations

import inspect
from datetime import timedelta
from typing import Any, Dict

import pytest

from rocketmq_spark import (
    read_rocketmq,
    read_rocketmq_stream,
    rocketmq_stream_writer,
    write_rocketmq,
    write_rocketmq_stream,
)
from spark_stand_ins import NO_SPARK, BatchWriteRecorder, ReadRecorder, Session, StreamRecorder


def test_write_rocketmq_with_a_streaming_dataframe_still_starts_its_query_but_warns() -> None:
    old, new = StreamRecorder(), StreamRecorder()
    with pytest.warns(DeprecationWarning, match="use write_rocketmq_stream"):
        assert (
            write_rocketmq(old, "h:1", "t", output_mode="update", checkpoint_location="/cp")
            == "started query"
        )
    assert (
        write_rocketmq_stream(new, "h:1", "t", output_mode="update", checkpoint_location="/cp")
        == "started query"
    )
    assert old.calls == new.calls
    assert ("outputMode", ("update",)) in new.calls and (
        "option",
        ("checkpointLocation", "/cp"),
    ) in new.calls


def test_durations_are_converted_not_checked_the_connector_reads_them() -> None:
    # One grammar, the connector's: text goes as given (it refuses 'soon' and a transaction timeout
    # under 2 s, naming the option); a timedelta becomes text in its largest whole unit.
    spark = ReadRecorder()
    read_rocketmq_stream(spark, "h:1", "t", max_trigger_delay="soon")  # type: ignore[arg-type]
    assert spark.given()["maxTriggerDelay"] == "soon"
    for delay, text in [
        (timedelta(seconds=90), "90s"),
        (timedelta(minutes=15), "15m"),
        (timedelta(hours=2), "2h"),
        (timedelta(days=1), "1d"),
        (timedelta(milliseconds=1500), "1500ms"),
        (timedelta(0), "0ms"),
        (timedelta(seconds=-5), "-5s"),
    ]:
        spark = ReadRecorder()
        read_rocketmq_stream(spark, "h:1", "t", max_trigger_delay=delay)  # type: ignore[arg-type]
        assert spark.given()["maxTriggerDelay"] == text, delay
    df = BatchWriteRecorder()
    write_rocketmq(
        df,  # type: ignore[arg-type]
        "h:1",
        "t",
        transaction_timeout=timedelta(seconds=30),
    )
    assert ("options", {"nameServer": "h:1", "topic": "t", "transactionTimeout": "30s"}) in df.calls


def test_trace_keywords_reach_the_writes_as_the_connectors_trace_options() -> None:
    df = BatchWriteRecorder()
    traced = dict(trace_enabled=True, trace_topic="audit-trace")
    write_rocketmq(df, "h:1", "t", **traced)  # type: ignore[arg-type]
    expected = {
        "nameServer": "h:1",
        "topic": "t",
        "traceEnabled": "true",
        "traceTopic": "audit-trace",
    }
    assert ("options", expected) in df.calls
    writer = StreamRecorder()
    untraced = dict(checkpoint_location="/cp", trace_enabled=False)
    write_rocketmq_stream(writer, "h:1", "t", **untraced)  # type: ignore[arg-type]
    assert ("options", {"nameServer": "h:1", "topic": "t", "traceEnabled": "false"}) in writer.calls
    with pytest.raises(TypeError, match="trace_enabled must be a bool"):
        write_rocketmq(NO_SPARK, "h:1", "t", trace_enabled="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="trace_topic must not be empty"):
        write_rocketmq(NO_SPARK, "h:1", "t", trace_topic=" ")


def test_options_pass_an_option_by_its_key_and_clash_with_a_keyword_only_on_a_different_value() -> (
    None
):
    spark = ReadRecorder()
    read_rocketmq(
        spark,  # type: ignore[arg-type]
        "h:1",
        "t",
        pull_batch_size=64,
        options={"pullbatchsize": "64", "futureOption": "x"},
    )
    assert spark.given() == {
        "nameServer": "h:1",
        "topic": "t",
        "pullBatchSize": "64",
        "futureOption": "x",
    }
    with pytest.raises(
        ValueError, match=r"option nameServer .*name_server gives 'h:1', options\['nameServer'\]"
    ):
        read_rocketmq_stream(
            ReadRecorder(),  # type: ignore[arg-type]
            "h:1",
            "t",
            options={"nameServer": "h:2"},
        )
    df = BatchWriteRecorder()
    write_rocketmq(
        df,  # type: ignore[arg-type]
        "h:1",
        options={"topic": "t", "sendBatchBytes": "1024"},
    )
    assert ("options", {"nameServer": "h:1", "topic": "t", "sendBatchBytes": "1024"}) in df.calls
    with pytest.raises(
        ValueError, match=r"option checkpointLocation .*checkpoint_location gives '/cp'"
    ):
        write_rocketmq_stream(
            StreamRecorder(),  # type: ignore[arg-type]
            "h:1",
            "t",
            checkpoint_location="/cp",
            options={"checkpointLocation": "/x"},
        )
    sink_check = "_asyncProgressTrackingOverrideSinkSupportCheck"
    with pytest.raises(ValueError, match=rf"option {sink_check} .*real_time gives 'true'"):
        write_rocketmq_stream(
            StreamRecorder(),  # type: ignore[arg-type]
            "h:1",
            "t",
            real_time=True,
            options={sink_check: "false"},
        )
    # Spark decides whether to track progress asynchronously (a stateless query yes, a stateful one
    # no): not set.
    writer = StreamRecorder()
    writer.sparkSession = Session({})  # type: ignore[attr-defined]
    assert (
        write_rocketmq_stream(writer, "h:1", "t", real_time=True)  # type: ignore[arg-type]
        == "started query"
    )
    assert ("option", (sink_check, "true")) in writer.calls
    assert not [
        c for c in writer.calls if c[0] == "option" and c[1][0] == "asyncProgressTrackingEnabled"
    ]


def test_rocketmq_stream_writer_is_what_write_rocketmq_stream_starts() -> None:
    unstarted, started = StreamRecorder(), StreamRecorder()
    keywords: Dict[str, Any] = dict(
        output_mode="update",
        checkpoint_location="/cp",
        processing_time="5 seconds",
        query_name="q",
        send_retries=3,
        options={"futureOption": "x"},
    )
    assert (
        rocketmq_stream_writer(unstarted, "h:1", "t", **keywords)  # type: ignore[arg-type]
        is unstarted
    )
    assert (
        write_rocketmq_stream(started, "h:1", "t", **keywords)  # type: ignore[arg-type]
        == "started query"
    )
    assert started.calls == unstarted.calls + [("start", ())]
    assert (
        "options",
        {"nameServer": "h:1", "topic": "t", "sendRetries": "3", "futureOption": "x"},
    ) in unstarted.calls
    assert [name for name, _ in unstarted.calls] == [
        "format",
        "options",
        "option",
        "outputMode",
        "trigger",
        "queryName",
    ]
    # Its keywords are write_rocketmq_stream's but real_time, which needs the start.
    ours, theirs = (
        set(inspect.signature(f).parameters)
        for f in (rocketmq_stream_writer, write_rocketmq_stream)
    )
    assert theirs - ours == {"real_time"} and ours <= theirs


# The connector's refusal, as pyspark shows it (classic: the Java exception's text after the call
# that failed).
_REFUSED = (
    "An error occurred while calling o71.save.\n: "
    "org.apache.spark.sql.rocketmq.RocketMQInvalidInputException: "
    "[ROCKETMQ_INVALID_OPTION_VALUE.TRANSACTION_TIMEOUT] Invalid value '1s' for option "
    "'transactionTimeout': must "
    "be a duration of at least 2s (the broker counts a half message's check immunity in whole "
    "seconds, and the "
    "driver commits within half of it). "
    "SQLSTATE: 42616\n\tat "
    "org.apache.spark.sql.rocketmq.errors.RocketMQErrors$.invalidOption(RocketMQErrors.scala:97)"
)


def test_the_connectors_refusal_of_a_keywords_value_names_the_keyword() -> None:
    refused = RuntimeError(_REFUSED)
    with pytest.raises(ValueError) as caught:
        write_rocketmq(
            BatchWriteRecorder(refused),  # type: ignore[arg-type]
            "h:1",
            "t",
            transaction_timeout="1s",
        )
    assert str(caught.value) == (
        "transaction_timeout (option transactionTimeout): "
        "[ROCKETMQ_INVALID_OPTION_VALUE.TRANSACTION_TIMEOUT] Invalid "
        "value '1s' for option 'transactionTimeout': must be a duration of at least 2s (the "
        "broker counts a half "
        "message's check immunity in whole seconds, and the driver commits within half of it). "
        "SQLSTATE: 42616"
    )
    assert caught.value.__cause__ is refused
    # Given by its key, the option is named as its caller wrote it: the connector's error is left as
    # it is.
    with pytest.raises(RuntimeError) as kept:
        write_rocketmq(
            BatchWriteRecorder(refused),  # type: ignore[arg-type]
            "h:1",
            "t",
            options={"transactionTimeout": "1s"},
        )
    assert kept.value is refused
    other = RuntimeError("[ROCKETMQ_TOPIC_NOT_FOUND] Topic 't' does not exist")
    with pytest.raises(RuntimeError) as unrelated:
        write_rocketmq(
            BatchWriteRecorder(other),  # type: ignore[arg-type]
            "h:1",
            "t",
            transaction_timeout="1s",
        )
    assert unrelated.value is other
