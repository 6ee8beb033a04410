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

"""The connector as a Maven artifact: ``spark-submit --packages`` resolves it (and rocketmq-client) and
a plain PySpark script, with no rocketmq_spark import, writes and reads a topic through it.

Needs the artifact in the local Maven repository: ``build/sbt connector/publishM2`` (dev/test does it).
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

import pyspark
import pytest

import rocketmq_spark
from embedded_rocketmq import REPO_ROOT, unique_topic
from spark_processes import CLIENT_LOG_OPTION, spark_env, spark_submit

GROUP = "io.github.rocketmq-spark"
ARTIFACT = "rocketmq-spark-connector_2.13"
ROWS = 200


def rocketmq_client_version() -> str:
    text = (REPO_ROOT / "build.sbt").read_text(encoding="utf-8")
    found = re.search(r'val rocketmqVersion = "([^"]+)"', text)
    assert found, "no rocketmqVersion in build.sbt"
    return found.group(1)


def test_spark_submit_packages_writes_and_reads(rocketmq, tmp_path: Path) -> None:
    version = rocketmq_spark.__version__
    published = (
        Path.home() / ".m2" / "repository" / Path(*GROUP.split(".")) / ARTIFACT / version / f"{ARTIFACT}-{version}.pom"
    )
    if not published.is_file():
        pytest.fail(f"{published} is missing: run build/sbt connector/publishM2 (dev/test does it)")
    client_version = rocketmq_client_version()

    topic = unique_topic("packages")
    rocketmq.create_topic(topic, queues=4)
    script = Path(__file__).parent / "scripts" / "packages_read_write.py"
    ivy = tmp_path / "ivy"  # fresh every run: a republished artifact of the same version is never stale
    command = [
        spark_submit(),
        "--master",
        "local[2]",
        "--packages",
        f"{GROUP}:{ARTIFACT}:{version}",
        # Test-only: Ivy's cache, and the RocketMQ client log under the build tree (not ~/logs).
        "--conf",
        f"spark.jars.ivy={ivy}",
        "--conf",
        f"spark.driver.extraJavaOptions={CLIENT_LOG_OPTION}",
        str(script),
        rocketmq.name_server,
        topic,
        str(ROWS),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, env=spark_env(), cwd=tmp_path)
    exited_at = time.time()
    assert done.returncode == 0, done.stderr[-6000:]

    # Ivy: our artifact from the local Maven repository, the RocketMQ client with it, no netty (Spark's).
    assert re.search(rf"found {re.escape(GROUP)}#{ARTIFACT};{re.escape(version)} in local-m2-cache", done.stderr), (
        done.stderr[-6000:]
    )
    assert re.search(rf"found org\.apache\.rocketmq#rocketmq-client;{re.escape(client_version)} in \S+", done.stderr), (
        done.stderr[-6000:]
    )
    assert "found io.netty#" not in done.stderr

    result = json.loads(done.stdout.strip().splitlines()[-1])
    expected = {f"pkg-{i}": ("even" if i % 2 == 0 else "odd") for i in range(ROWS)}
    assert result["written"] == ROWS
    assert result["read"] == ROWS
    assert result["distinct_bodies"] == ROWS
    assert result["tags"] == expected
    assert result["queues"] == [0, 1, 2, 3]
    assert result["columns"] == [
        "topic",
        "flag",
        "body",
        "properties",
        "brokerName",
        "queueId",
        "queueOffset",
        "bornTimestamp",
        "storeTimestamp",
    ]

    # The JVM loaded the connector and the client from the jars Ivy retrieved, and netty from Spark.
    retrieved = str((ivy / "jars").resolve())
    assert result["connector_from"] == f"file:{retrieved}/{GROUP}_{ARTIFACT}-{version}.jar"
    assert result["client_from"] == f"file:{retrieved}/org.apache.rocketmq_rocketmq-client-{client_version}.jar"
    assert result["netty_from"].startswith(f"file:{Path(pyspark.__file__).resolve().parent / 'jars'}/netty-")
    spark_jars = result["spark_jars"].split(",")
    assert f"file://{retrieved}/{GROUP}_{ARTIFACT}-{version}.jar" in spark_jars, spark_jars
    assert all(j.startswith(f"file://{retrieved}/") for j in spark_jars), spark_jars
    assert not [j for j in spark_jars if "/io.netty_" in j], spark_jars

    # Every row is in the topic, as the plain RocketMQ client reads it.
    assert sorted(rocketmq.bodies(topic)) == sorted(expected)

    # The command returns when the script is done, not when the cached clients time out (RocketMQ's
    # client threads are not daemons: the connector closes its clients when the application ends).
    assert exited_at - result["finished_at"] < 60
