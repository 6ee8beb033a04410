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
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, List, Tuple

import pyspark
import pytest

import rocketmq_spark
from embedded_rocketmq import REPO_ROOT
from rocketmq_spark import (
    EARLIEST,
    GROUP,
    LATEST,
    LATEST_OFFSET,
    configure_spark_with_rocketmq,
    epoch_millis,
    jar_path,
    offsets_json,
    read_rocketmq,
    read_rocketmq_stream,
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
        (lambda: read_rocketmq(NO_SPARK, 1234, "t"), TypeError, "name_server must be a str, not int"),
        (lambda: read_rocketmq(NO_SPARK, "h:1", None), ValueError, "topic is required"),
        (lambda: read_rocketmq(NO_SPARK, "h:1", "  "), ValueError, "topic must not be empty or blank"),
        (lambda: read_rocketmq(NO_SPARK, "h:1", ["a", 3]), TypeError, "topic must be a topic name or a list"),
        (lambda: read_rocketmq(NO_SPARK, "h:1", ["a", "b,c"]), ValueError, "'b,c' is not a topic name"),
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
            "fail_on_data_loss must be a bool: pass fail_on_data_loss=True or fail_on_data_loss=False",
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
            lambda: read_rocketmq(NO_SPARK, "h:1", "t", starting_offsets=GROUP, group_offset_fallback="oldest"),
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
            lambda: read_rocketmq(NO_SPARK, "h:1", "t", starting_offsets=EARLIEST, starting_timestamp=0),
            ValueError,
            "starting_offsets and starting_timestamp each say where to start: pass only one of them",
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
            lambda: read_rocketmq_stream(NO_SPARK, "h:1", "t", max_trigger_delay="soon"),
            ValueError,
            "max_trigger_delay must be a timedelta or a duration string such as '30s'",
        ),
        (
            lambda: read_rocketmq_stream(NO_SPARK, "h:1", "t", metadata_retry_interval_ms=-1),
            ValueError,
            "metadata_retry_interval_ms must be an int >= 0, not -1",
        ),
        (lambda: write_rocketmq(NO_SPARK, "h:1", ["a", "b"]), TypeError, "topic must be one topic name"),
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
        (lambda: write_rocketmq_stream(NO_SPARK, "h:1", ["a", "b"]), TypeError, "topic must be one topic name"),
        (
            lambda: write_rocketmq_stream(NO_SPARK, "h:1", "t", output_mode="overwrite"),
            ValueError,
            "output_mode must be one of append, update, complete, not 'overwrite'",
        ),
        (
            lambda: write_rocketmq_stream(NO_SPARK, "h:1", "t", processing_time="1 second", available_now=True),
            ValueError,
            "processing_time and available_now are two triggers",
        ),
        (
            lambda: write_rocketmq_stream(NO_SPARK, "h:1", "t", processing_time="1 second", real_time=True),
            ValueError,
            "processing_time and real_time are two triggers",
        ),
        (
            lambda: write_rocketmq_stream(NO_SPARK, "h:1", "t", real_time=30),  # type: ignore[arg-type]
            TypeError,
            "real_time must be True or a batch duration such as '30 seconds', not 30",
        ),
        (
            lambda: write_rocketmq_stream(NO_SPARK, "h:1", "t"),
            TypeError,
            "write_rocketmq_stream needs a streaming DataFrame .*; write a batch DataFrame with write_rocketmq",
        ),
    ],
)
def test_arguments_are_checked_before_spark_is_reached(call: Callable[[], Any], error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        call()


class _StreamRecorder:
    """A streaming DataFrame's writeStream as far as the write functions use it: records each call."""

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
        assert write_rocketmq(old, "h:1", "t", output_mode="update", checkpoint_location="/cp") == "started query"
    assert write_rocketmq_stream(new, "h:1", "t", output_mode="update", checkpoint_location="/cp") == "started query"
    assert old.calls == new.calls
    assert ("outputMode", ("update",)) in new.calls and ("option", ("checkpointLocation", "/cp")) in new.calls


def test_unknown_keywords_are_an_error() -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument 'startingOffsets'"):
        read_rocketmq(NO_SPARK, "h:1", "t", startingOffsets="earliest")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword argument 'ending_offsets'"):
        read_rocketmq_stream(NO_SPARK, "h:1", "t", ending_offsets="latest")  # type: ignore[call-arg]
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
    assert json.loads(timestamps_json({"a": {"b": {7: noon_cet}}})) == {"a": {"b": {"7": 1717236000000}}}
    with pytest.raises(TypeError, match="must be a datetime or epoch milliseconds"):
        epoch_millis("2024-01-01")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must be a non-empty dict"):
        offsets_json({})


def test_modules_doctests_pass_and_every_public_function_has_an_example() -> None:
    for name in rocketmq_spark.__all__:
        obj = getattr(rocketmq_spark, name)
        if inspect.isfunction(obj):
            assert obj.__doc__ and "Example::" in obj.__doc__, f"{name} has no example in its docstring"
            hints = inspect.signature(obj)
            untyped = [p for p in hints.parameters.values() if p.annotation is inspect.Parameter.empty]
            assert not untyped and hints.return_annotation is not inspect.Signature.empty, name
    for module in ("_positions", "_jar"):
        result = doctest.testmod(sys.modules[f"rocketmq_spark.{module}"], optionflags=doctest.ELLIPSIS)
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
    # Spark Connect sessions have no JVM: these would fail there (the e2e tests also run under Connect).
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
    builder = configure_spark_with_rocketmq(_FakeBuilder("/opt/a.jar,/opt/b.jar"))  # type: ignore[arg-type]
    assert builder._options["spark.jars"] == f"/opt/a.jar,/opt/b.jar,{jar_path()}"
    again = configure_spark_with_rocketmq(builder)  # type: ignore[arg-type]
    assert again._options["spark.jars"] == f"/opt/a.jar,/opt/b.jar,{jar_path()}"
    assert configure_spark_with_rocketmq(_FakeBuilder(""))._options["spark.jars"] == jar_path()  # type: ignore


def test_one_version_for_the_jar_and_the_package_and_the_pinned_pyspark() -> None:
    build = (REPO_ROOT / "build.sbt").read_text()
    assert 'file("python/rocketmq_spark/_version.py")' in build  # sbt reads the package's version
    assert Path(jar_path()).name == f"rocketmq-spark-connector-assembly_2.13-{rocketmq_spark.__version__}.jar"
    spark_version = re.search(r'val sparkVersion = "([^"]+)"', build).group(1)  # type: ignore[union-attr]
    pins = (REPO_ROOT / "python" / "requirements-test.txt").read_text()
    assert f"pyspark[connect]=={spark_version}" in pins
    assert pyspark.__version__ == spark_version
