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

"""The Python package on its own: argument checks before any Spark call, helpers, typing, docs."""

from __future__ import annotations

import doctest
import inspect
import json
import re
import subprocess
import sys
import threading
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import pyspark
import pytest

import rocketmq_spark
from embedded_rocketmq import REPO_ROOT
from rocketmq_spark import (
    EARLIEST,
    GROUP,
    LATEST,
    LATEST_OFFSET,
    _trigger,
    configure_spark_with_rocketmq,
    epoch_millis,
    jar_path,
    offsets_json,
    read_rocketmq,
    read_rocketmq_stream,
    rocketmq_stream_writer,
    timestamps_json,
    write_rocketmq,
    write_rocketmq_stream,
)

PACKAGE_SOURCE = REPO_ROOT / "python" / "rocketmq_spark"


class _NoSpark:
    """Fails the test if the function under test reaches for Spark: the check must come first."""

    isStreaming = False

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"Spark was reached ({name}) before the arguments were checked")


NO_SPARK: Any = _NoSpark()


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


class _StreamRecorder:
    """A streaming DataFrame's writeStream as far as the write functions use it: records each
    call."""

    isStreaming = True

    def __init__(self) -> None:
        self.calls: List[Tuple[str, Any]] = []

    @property
    def writeStream(self) -> "_StreamRecorder":
        return self

    def __getattr__(self, name: str) -> Any:
        def record(*args: Any, **kwargs: Any) -> Any:
            self.calls.append((name, kwargs or args))
            return "started query" if name == "start" else self

        return record


def test_write_rocketmq_with_a_streaming_dataframe_still_starts_its_query_but_warns() -> None:
    old, new = _StreamRecorder(), _StreamRecorder()
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


class _ReadRecorder:
    """``spark`` as far as the read functions use it: ``read`` / ``readStream`` ... ``load()``, each
    call recorded."""

    def __init__(self) -> None:
        self.calls: List[Tuple[str, Any]] = []

    @property
    def read(self) -> "_ReadRecorder":
        return self

    @property
    def readStream(self) -> "_ReadRecorder":
        return self

    def __getattr__(self, name: str) -> Any:
        def record(*args: Any, **kwargs: Any) -> Any:
            self.calls.append((name, kwargs or args))
            return self

        return record

    def given(self) -> Dict[str, str]:
        return next(dict(kwargs) for name, kwargs in self.calls if name == "options")


class _BatchWriteRecorder:
    """A batch DataFrame's ``write`` as far as write_rocketmq uses it; ``save()`` raises ``fail``
    when given."""

    isStreaming = False

    def __init__(self, fail: Optional[BaseException] = None) -> None:
        self.calls: List[Tuple[str, Any]] = []
        self.fail = fail

    @property
    def write(self) -> "_BatchWriteRecorder":
        return self

    def __getattr__(self, name: str) -> Any:
        def record(*args: Any, **kwargs: Any) -> Any:
            self.calls.append((name, kwargs or args))
            if name == "save" and self.fail is not None:
                raise self.fail
            return self

        return record


def test_durations_are_converted_not_checked_the_connector_reads_them() -> None:
    # One grammar, the connector's: text goes as given (it refuses 'soon' and a transaction timeout
    # under 2 s, naming the option); a timedelta becomes text in its largest whole unit.
    spark = _ReadRecorder()
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
        spark = _ReadRecorder()
        read_rocketmq_stream(spark, "h:1", "t", max_trigger_delay=delay)  # type: ignore[arg-type]
        assert spark.given()["maxTriggerDelay"] == text, delay
    df = _BatchWriteRecorder()
    write_rocketmq(
        df,  # type: ignore[arg-type]
        "h:1",
        "t",
        transaction_timeout=timedelta(seconds=30),
    )
    assert ("options", {"nameServer": "h:1", "topic": "t", "transactionTimeout": "30s"}) in df.calls


def test_trace_keywords_reach_the_writes_as_the_connectors_trace_options() -> None:
    df = _BatchWriteRecorder()
    traced = dict(trace_enabled=True, trace_topic="audit-trace")
    write_rocketmq(df, "h:1", "t", **traced)  # type: ignore[arg-type]
    expected = {
        "nameServer": "h:1",
        "topic": "t",
        "traceEnabled": "true",
        "traceTopic": "audit-trace",
    }
    assert ("options", expected) in df.calls
    writer = _StreamRecorder()
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
    spark = _ReadRecorder()
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
            _ReadRecorder(),  # type: ignore[arg-type]
            "h:1",
            "t",
            options={"nameServer": "h:2"},
        )
    df = _BatchWriteRecorder()
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
            _StreamRecorder(),  # type: ignore[arg-type]
            "h:1",
            "t",
            checkpoint_location="/cp",
            options={"checkpointLocation": "/x"},
        )
    sink_check = "_asyncProgressTrackingOverrideSinkSupportCheck"
    with pytest.raises(ValueError, match=rf"option {sink_check} .*real_time gives 'true'"):
        write_rocketmq_stream(
            _StreamRecorder(),  # type: ignore[arg-type]
            "h:1",
            "t",
            real_time=True,
            options={sink_check: "false"},
        )
    # Spark decides whether to track progress asynchronously (a stateless query yes, a stateful one
    # no): not set.
    writer = _StreamRecorder()
    writer.sparkSession = _Session({})  # type: ignore[attr-defined]
    assert (
        write_rocketmq_stream(writer, "h:1", "t", real_time=True)  # type: ignore[arg-type]
        == "started query"
    )
    assert ("option", (sink_check, "true")) in writer.calls
    assert not [
        c for c in writer.calls if c[0] == "option" and c[1][0] == "asyncProgressTrackingEnabled"
    ]


def test_rocketmq_stream_writer_is_what_write_rocketmq_stream_starts() -> None:
    unstarted, started = _StreamRecorder(), _StreamRecorder()
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
    "org.apache.spark.sql.rocketmq.client.RocketMQErrors$.invalidOption(RocketMQErrors.scala:97)"
)


def test_the_connectors_refusal_of_a_keywords_value_names_the_keyword() -> None:
    refused = RuntimeError(_REFUSED)
    with pytest.raises(ValueError) as caught:
        write_rocketmq(
            _BatchWriteRecorder(refused),  # type: ignore[arg-type]
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
            _BatchWriteRecorder(refused),  # type: ignore[arg-type]
            "h:1",
            "t",
            options={"transactionTimeout": "1s"},
        )
    assert kept.value is refused
    other = RuntimeError("[ROCKETMQ_TOPIC_NOT_FOUND] Topic 't' does not exist")
    with pytest.raises(RuntimeError) as unrelated:
        write_rocketmq(
            _BatchWriteRecorder(other),  # type: ignore[arg-type]
            "h:1",
            "t",
            transaction_timeout="1s",
        )
    assert unrelated.value is other


class _Conf:
    """A session's ``conf`` as far as start_without_allowlist uses it."""

    def __init__(self, values: Dict[str, str]) -> None:
        self.values = values
        self.lock = threading.Lock()

    def get(self, key: str, default: Optional[str] = None) -> Optional[str]:
        with self.lock:
            return self.values.get(key, default)

    def set(self, key: str, value: str) -> None:
        with self.lock:
            self.values[key] = value

    def unset(self, key: str) -> None:
        with self.lock:
            self.values.pop(key, None)


class _Session:
    def __init__(self, values: Dict[str, str]) -> None:
        self.conf = _Conf(values)


class _SlowStart:
    """A writer whose ``start()`` records the allowlist setting it sees, overlapping the other
    thread's start."""

    def __init__(
        self,
        session: _Session,
        barrier: threading.Barrier,
        seen: List[Optional[str]],
        fail: bool,
        failed: threading.Event,
    ) -> None:
        self.session, self.barrier, self.seen, self.fail, self.failed = (
            session,
            barrier,
            seen,
            fail,
            failed,
        )

    def start(self) -> str:
        self.barrier.wait()  # both starts under way at once
        # The other start ends (fails, its lifting given back) while this one is still under way.
        if not self.fail:
            assert self.failed.wait(10), "the failing start did not end"
        self.seen.append(self.session.conf.get(_trigger._ALLOWLIST_CHECK))
        if self.fail:
            raise RuntimeError("this start fails")
        return "started"


@pytest.mark.parametrize("before", [None, "true"])
def test_real_time_starts_from_two_threads_at_once_all_start_lifted_and_put_the_setting_back(
    before,
) -> None:
    values = {} if before is None else {_trigger._ALLOWLIST_CHECK: before}
    session = _Session(values)
    barrier = threading.Barrier(2, timeout=10)
    seen: List[Optional[str]] = []
    outcomes: List[str] = []
    failed = threading.Event()

    def start(fail: bool) -> None:
        writer = _SlowStart(session, barrier, seen, fail, failed)
        try:
            outcomes.append(
                _trigger.start_without_allowlist(writer, session)  # type: ignore[arg-type]
            )
        except RuntimeError as e:
            outcomes.append(str(e))
        finally:
            if fail:
                failed.set()

    threads = [threading.Thread(target=start, args=(fail,)) for fail in (True, False)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert sorted(outcomes) == ["started", "this start fails"]
    assert seen == ["false", "false"], "a start saw the check already put back by the other"
    assert session.conf.values == values, "the setting was not put back as it was"
    assert _trigger._LIFTED == []


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


def test_offset_and_timestamp_helpers() -> None:
    assert (
        offsets_json({"a": {"broker-a": {0: 5, "1": EARLIEST, 2: LATEST, 3: LATEST_OFFSET}}})
        == '{"a":{"broker-a":{"0":5,"1":-2,"2":-1,"3":-1}}}'
    )
    noon_cet = datetime(2024, 6, 1, 12, 0, tzinfo=timezone(timedelta(hours=2)))
    assert epoch_millis(noon_cet) == 1717236000000
    assert epoch_millis(1717236000000) == 1717236000000
    assert json.loads(timestamps_json({"a": {"b": {7: noon_cet}}})) == {
        "a": {"b": {"7": 1717236000000}}
    }
    with pytest.raises(TypeError, match="must be a datetime or epoch milliseconds"):
        epoch_millis("2024-01-01")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must be a non-empty dict"):
        offsets_json({})


def _numpydoc_sections(doc: str) -> Dict[str, List[str]]:
    """A numpydoc docstring's sections: title -> its lines (dedented), for the titles underlined
    with dashes."""
    lines = inspect.cleandoc(doc).splitlines()
    sections: Dict[str, List[str]] = {}
    current: Optional[List[str]] = None
    for i, line in enumerate(lines):
        underline = lines[i + 1] if i + 1 < len(lines) else ""
        if (
            line.strip()
            and underline.strip()
            and set(underline.strip()) == {"-"}
            and len(underline) == len(line)
        ):
            current = sections.setdefault(line.strip(), [])
        elif current is not None and not (set(line.strip()) == {"-"}):
            current.append(line)
    return sections


def test_every_public_function_has_numpydoc_parameters_returns_and_examples() -> None:
    functions = [
        name for name in rocketmq_spark.__all__ if inspect.isfunction(getattr(rocketmq_spark, name))
    ]
    assert len(functions) >= 14, functions
    for name in functions:
        function = getattr(rocketmq_spark, name)
        signature = inspect.signature(function)
        untyped = [
            p for p in signature.parameters.values() if p.annotation is inspect.Parameter.empty
        ]
        assert not untyped and signature.return_annotation is not inspect.Signature.empty, name
        assert function.__doc__, f"{name} has no docstring"
        sections = _numpydoc_sections(function.__doc__)
        for title in ("Parameters", "Returns", "Examples"):
            assert title in sections, f"{name}: no {title} section (numpydoc)"
        # Every parameter is described, once, and nothing else: "name : type" or "a, b : type"
        # lines.
        documented = [
            word
            for line in sections["Parameters"]
            if line and not line.startswith(" ") and " : " in line
            for word in line.split(" : ")[0].split(", ")
        ]
        assert sorted(documented) == sorted(signature.parameters), (name, documented)
        returns = [line for line in sections["Returns"] if line and not line.startswith(" ")]
        assert len(returns) == 1, (name, returns)
        examples = [line for line in sections["Examples"] if line.startswith(">>> ")]
        assert examples and any(name in line for line in examples), (
            f"{name}: its examples do not call it"
        )


def test_modules_doctests_pass() -> None:
    for module in ("_positions", "_jar"):
        result = doctest.testmod(
            sys.modules[f"rocketmq_spark.{module}"], optionflags=doctest.ELLIPSIS
        )
        assert result.failed == 0 and result.attempted > 0, (module, result)


def test_mypy_strict_is_clean() -> None:
    installed = Path(rocketmq_spark.__file__).parent
    assert (installed / "py.typed").is_file(), "the wheel must ship py.typed"
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", str(PACKAGE_SOURCE)],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT / "python",
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_package_never_touches_the_jvm() -> None:
    # Spark Connect sessions have no JVM: these would fail there (the e2e tests also run under
    # Connect).
    forbidden = re.compile(r"_jvm|_jsc|_jdf|sparkContext|SparkContext|py4j|pyspark\.core")
    hits = [
        f"{p.name}:{n}: {line.strip()}"
        for p in PACKAGE_SOURCE.glob("*.py")
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if forbidden.search(line)
    ]
    assert hits == []


class _FakeBuilder:
    """Stands in for SparkSession.Builder, whose option dict is shared by every builder."""

    def __init__(self, jars: str) -> None:
        self._options = {"spark.jars": jars} if jars else {}

    def config(self, key: str, value: str) -> "_FakeBuilder":
        self._options[key] = value
        return self


def test_configure_appends_to_spark_jars_and_never_overwrites() -> None:
    builder = configure_spark_with_rocketmq(
        _FakeBuilder("/opt/a.jar,/opt/b.jar")  # type: ignore[arg-type]
    )
    assert builder._options["spark.jars"] == f"/opt/a.jar,/opt/b.jar,{jar_path()}"
    again = configure_spark_with_rocketmq(builder)  # type: ignore[arg-type]
    assert again._options["spark.jars"] == f"/opt/a.jar,/opt/b.jar,{jar_path()}"
    assert (
        configure_spark_with_rocketmq(_FakeBuilder(""))._options["spark.jars"]  # type: ignore
        == jar_path()
    )


def test_one_version_for_the_jar_and_the_package_and_the_pinned_pyspark() -> None:
    build = (REPO_ROOT / "build.sbt").read_text()
    assert 'file("python/rocketmq_spark/_version.py")' in build  # sbt reads the package's version
    assert (
        Path(jar_path()).name
        == f"rocketmq-spark-connector-assembly_2.13-{rocketmq_spark.__version__}.jar"
    )
    spark_version = re.search(  # type: ignore[union-attr]
        r'val sparkVersion = "([^"]+)"', build
    ).group(1)
    pins = (REPO_ROOT / "python" / "requirements-test.txt").read_text()
    assert f"pyspark[connect]=={spark_version}" in pins
    assert pyspark.__version__ == spark_version
