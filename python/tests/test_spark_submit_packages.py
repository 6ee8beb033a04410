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

"""The connector as a Maven artifact: ``spark-submit --packages`` resolves it (and rocketmq-client)
and a plain PySpark script, with no rocketmq_spark import, writes and reads a topic through it.

Needs the artifact in the checkout's own Maven repository: ``build/sbt connector/publish`` writes
target/maven-repo (dev/test does it), which ``dev/ivysettings.xml`` puts ahead of Maven Central. The
test runs spark-submit with a home whose ~/.m2 holds POMs without their jars, as Maven leaves after
version mediation: Spark's default resolver chain trusts those and fails; the settings file never
reads ~/.m2.
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
from spark_processes import spark_env, spark_java_options, spark_submit

GROUP = "io.github.rocketmq-spark"
# The artifact for the running pyspark: the test runs in the cross-version legs too (pyspark 3.5 is
# Scala 2.12). The spark35 artifact is the shaded jar, the client inside it: Spark 3.5's guava 14
# would shadow the client's.
SPARK35 = pyspark.__version__.startswith("3.5.")
ARTIFACT = "rocketmq-spark-connector-spark35_2.12" if SPARK35 else "rocketmq-spark-connector_2.13"
ROWS = 200

pytestmark = pytest.mark.cross_version


def rocketmq_client_version() -> str:
    text = (REPO_ROOT / "build.sbt").read_text(encoding="utf-8")
    found = re.search(r'val rocketmqVersion = "([^"]+)"', text)
    assert found, "no rocketmqVersion in build.sbt"
    return found.group(1)


REPOSITORY = REPO_ROOT / "target" / "maven-repo"
IVY_SETTINGS = REPO_ROOT / "dev" / "ivysettings.xml"


def poisoned_home(home: Path, client_version: str, version: str) -> Path:
    """A home whose ~/.m2/repository holds POMs without jars: ours, rocketmq-client's and two of its
    dependencies' (the two that broke a run on a machine where Maven had been used once)."""
    for group, artifact, v in (
        (GROUP, ARTIFACT, version),
        ("org.apache.rocketmq", "rocketmq-client", client_version),
        ("com.google.errorprone", "error_prone_annotations", "2.14.0"),
        ("org.javassist", "javassist", "3.21.0-GA"),
    ):
        folder = home / ".m2" / "repository" / Path(*group.split(".")) / artifact / v
        folder.mkdir(parents=True)
        (folder / f"{artifact}-{v}.pom").write_text(
            "<project><modelVersion>4.0.0</modelVersion>"
            f"<groupId>{group}</groupId><artifactId>{artifact}</artifactId>"
            f"<version>{v}</version></project>"
        )
    return home


def test_spark_submit_packages_writes_and_reads(rocketmq, tmp_path: Path) -> None:
    version = rocketmq_spark.__version__
    published = (
        REPOSITORY / Path(*GROUP.split(".")) / ARTIFACT / version / f"{ARTIFACT}-{version}.pom"
    )
    if not published.is_file():
        project = "connectorSpark35_212" if SPARK35 else "connector"
        pytest.fail(f"{published} is missing: run build/sbt {project}/publish (dev/test does it)")
    client_version = rocketmq_client_version()
    home = poisoned_home(tmp_path / "home", client_version, version)

    topic = unique_topic("packages")
    rocketmq.create_topic(topic, queues=4)
    script = Path(__file__).parent / "scripts" / "packages_read_write.py"
    ivy = (
        tmp_path / "ivy"
    )  # fresh every run: a republished artifact of the same version is never stale
    command = [
        spark_submit(),
        "--master",
        "local[2]",
        "--packages",
        f"{GROUP}:{ARTIFACT}:{version}",
        "--conf",
        f"spark.jars.ivySettings={IVY_SETTINGS}",
        # Test-only: Ivy's cache, and the RocketMQ client log under the build tree (not ~/logs).
        "--conf",
        f"spark.jars.ivy={ivy}",
        "--conf",
        f"spark.driver.extraJavaOptions={spark_java_options()}",
        str(script),
        rocketmq.name_server,
        topic,
        str(ROWS),
    ]
    # The JVM that resolves the packages takes its home (and so ~/.m2) from user.home.
    env = spark_env(SPARK_SUBMIT_OPTS=f"-Duser.home={home}")
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path
    )
    exited_at = time.time()
    # Spark's INFO lines bury the failure: show the rest.
    assert done.returncode == 0, (
        "\n".join(line for line in done.stderr.splitlines() if " INFO " not in line)[-6000:]
        + done.stdout
    )

    # Ivy: our artifact from the checkout's repository, the RocketMQ client from Maven Central,
    # nothing from the poisoned ~/.m2, no netty (Spark's).
    assert re.search(
        rf"found {re.escape(GROUP)}#{ARTIFACT};{re.escape(version)} in rocketmq-spark-local",
        done.stderr,
    ), done.stderr[-6000:]
    client_found = re.search(
        rf"found org\.apache\.rocketmq#rocketmq-client;{re.escape(client_version)} in central",
        done.stderr,
    )
    assert (client_found is None) if SPARK35 else (client_found is not None), done.stderr[-6000:]
    assert "local-m2-cache" not in done.stderr
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
    client_jar = (
        f"{GROUP}_{ARTIFACT}-{version}.jar"
        if SPARK35
        else f"org.apache.rocketmq_rocketmq-client-{client_version}.jar"
    )
    assert result["client_from"] == f"file:{retrieved}/{client_jar}"
    assert result["netty_from"].startswith(
        f"file:{Path(pyspark.__file__).resolve().parent / 'jars'}/netty-"
    )
    spark_jars = result["spark_jars"].split(",")
    assert f"file://{retrieved}/{GROUP}_{ARTIFACT}-{version}.jar" in spark_jars, spark_jars
    assert all(j.startswith(f"file://{retrieved}/") for j in spark_jars), spark_jars
    assert not [j for j in spark_jars if "/io.netty_" in j], spark_jars

    # Every row is in the topic, as the plain RocketMQ client reads it.
    assert sorted(rocketmq.bodies(topic)) == sorted(expected)

    # The command returns when the script is done, not when the cached clients time out (RocketMQ's
    # client threads are not daemons: the connector closes its clients when the application ends).
    assert exited_at - result["finished_at"] < 60
