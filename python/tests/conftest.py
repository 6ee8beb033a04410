from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterator

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from embedded_rocketmq import REPO_ROOT, EmbeddedRocketMQProcess  # noqa: E402


@pytest.fixture(scope="session")
def rocketmq() -> Iterator[EmbeddedRocketMQProcess]:
    harness = EmbeddedRocketMQProcess().start()
    try:
        yield harness
    finally:
        harness.stop()


@pytest.fixture(scope="session")
def spark() -> Iterator["object"]:
    from pyspark.sql import SparkSession

    from rocketmq_spark import configure_spark_with_rocketmq, jar_path

    try:
        jar_path()
    except FileNotFoundError as e:
        pytest.fail(f"{e} (dev/test runs it)")
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("rocketmq-spark-pytest")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        # The RocketMQ client's own log file goes under the build tree, not ~/logs/rocketmqlogs.
        .config("spark.driver.extraJavaOptions", f"-Drocketmq.log.root={REPO_ROOT / 'it-tests' / 'target' / 'client-logs'}")
    )
    session = configure_spark_with_rocketmq(builder).getOrCreate()
    try:
        yield session
    finally:
        session.stop()
