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

"""Session fixtures: a real embedded RocketMQ (child JVM) and a Spark session.

The Spark session is classic by default. With ROCKETMQ_SPARK_API=connect it is a Spark Connect
client of a server in its own JVM, started without the connector jar; the jar is then attached with
add_rocketmq_jar. dev/test runs the tests marked ``e2e`` a second time that way.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from embedded_rocketmq import EmbeddedRocketMQProcess  # noqa: E402
from spark_processes import spark_java_options  # noqa: E402

API = os.environ.get("ROCKETMQ_SPARK_API", "classic")
if API not in ("classic", "connect"):
    raise ValueError(f"ROCKETMQ_SPARK_API must be classic or connect, not {API!r}")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "e2e: end to end through a Spark session; runs in classic and Connect mode"
    )
    config.addinivalue_line(
        "markers",
        "cross_version: run again on every pyspark of the matrix (dev/test-spark-version)",
    )
    config.addinivalue_line(
        "markers", "connect_only: runs in the Spark Connect pass only (deselected otherwise)"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: List[pytest.Item]) -> None:
    """Tests of Spark Connect itself are deselected, not skipped, in a classic run: they run in the
    Connect pass."""
    if API == "connect":
        return
    kept = [item for item in items if item.get_closest_marker("connect_only") is None]
    if len(kept) < len(items):
        config.hook.pytest_deselected(items=[item for item in items if item not in kept])
        items[:] = kept


def pytest_report_header(config: pytest.Config) -> str:
    return f"Spark API of the session fixture: {API}"


_FILE_SECONDS: Dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Adds each phase's time (setup, call, teardown: fixtures included) to its test file's
    total."""
    path = report.nodeid.split("::", 1)[0]
    _FILE_SECONDS[path] = _FILE_SECONDS.get(path, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Each test file's time, longest first: where the test command's budget goes."""
    if not _FILE_SECONDS:
        return
    terminalreporter.write_sep(
        "=", f"time per test file ({sum(_FILE_SECONDS.values()):.0f} s in all)"
    )
    for path, seconds in sorted(_FILE_SECONDS.items(), key=lambda item: -item[1]):
        terminalreporter.write_line(f"{seconds:8.1f} s  {path}")


@pytest.fixture(scope="session")
def rocketmq() -> Iterator[EmbeddedRocketMQProcess]:
    harness = EmbeddedRocketMQProcess().start()
    try:
        yield harness
    finally:
        harness.stop()


def _classic_session() -> Any:
    from pyspark.sql import SparkSession

    from rocketmq_spark import configure_spark_with_rocketmq

    builder = (
        SparkSession.builder.master("local[2]")
        .appName("rocketmq-spark-pytest")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        # The RocketMQ client's own log file goes under the build tree, not ~/logs/rocketmqlogs.
        .config("spark.driver.extraJavaOptions", spark_java_options())
    )
    return configure_spark_with_rocketmq(builder).getOrCreate()


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    from rocketmq_spark import jar_path

    try:
        jar_path()
    except FileNotFoundError as e:
        pytest.fail(f"{e} (dev/test runs it)")
    if API == "classic":
        session = _classic_session()
        try:
            yield session
        finally:
            session.stop()
        return

    from pyspark.sql import SparkSession

    from connect_server import SparkConnectServerProcess
    from rocketmq_spark import add_rocketmq_jar

    global _connect_url
    server = SparkConnectServerProcess().start()
    try:
        _connect_url = server.url
        session = SparkSession.builder.remote(server.url).getOrCreate()
        assert type(session).__module__.startswith("pyspark.sql.connect"), type(session)
        add_rocketmq_jar(session)
        try:
            yield session
        finally:
            session.stop()
    finally:
        _connect_url = None
        server.stop()


_connect_url: Optional[str] = None


@pytest.fixture
def connect_url(spark: Any) -> Optional[str]:
    """The Spark Connect server's address in the Connect pass (``sc://host:port``); None in classic
    sessions."""
    return _connect_url
