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

"""The Scala smoke suite of the compatibility matrix
(it-tests/src/smoke/.../RocketMQSmokeSuite.scala).

It runs on the pyspark of this interpreter through its spark-submit, with the connector jar the
Python package picks for that Spark: dev/test-spark-version runs it on 3.5.0 (its Scala 2.12 build),
4.0.5, 4.1.4 and 4.3.0 (the Scala 2.13 build compiled against 4.2). dev/test deselects it in its
main pass, on Spark 4.2, where the rest of that pass already makes each of its checks on the same
jar (dev/test says which); run by hand, it runs there too. Spark 3.5 with Scala 2.13, which no
pyspark ships, gets its own run in the main suite: a plain JVM on the classpath sbt resolved for it
(Spark 3.5.0's Scala 2.13 jars from Maven Central). Needs
``build/sbt smokeSpark4/exportSmoke smokeSpark35_212/exportSmoke smokeSpark35_213/exportSmoke``
(dev/test does it).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import List

import pyspark
import pytest

from embedded_rocketmq import REPO_ROOT, unique_topic
from rocketmq_spark import jar_path
from spark_processes import CLIENT_LOG_OPTION, run_or_dump_threads, spark_env, submit_command

SMOKE = REPO_ROOT / "target" / "smoke"
MAIN_CLASS = "org.apache.spark.sql.rocketmq.smoke.RocketMQSmokeSuite"


def _checks(spark_version: str) -> int:
    """Six checks, a seventh (real-time mode) on Spark 4.1 and later, two more (stateful real-time
    mode: dropDuplicates, transformWithState) on 4.3 and later."""
    version = tuple(int(p) for p in spark_version.split(".")[:2])
    return 6 + (version >= (4, 1)) + 2 * (version >= (4, 3))


SUMMARY = re.compile(r"^smoke: Spark (\S+), Scala (\S+): (\d+) passed, (\d+) failed$", re.MULTILINE)


def _smoke_file(name: str) -> Path:
    path = SMOKE / name
    if not path.is_file():
        pytest.fail(
            f"{path} is missing: run build/sbt smokeSpark4/exportSmoke "
            "smokeSpark35_212/exportSmoke "
            "smokeSpark35_213/exportSmoke (dev/test does it)"
        )
    return path


def _topics(rocketmq) -> List[str]:
    topics = [unique_topic(f"smoke-{role}") for role in ("source", "copy", "stream")]
    for topic in topics:
        rocketmq.create_topic(topic, queues=2)
    # The stateful real-time checks' (Spark 4.3 and later; dropDuplicates, then transformWithState):
    # one queue each, so that a batch holds two cores.
    stateful = [
        unique_topic(f"smoke-{check}-{role}")
        for check in ("dedup", "state")
        for role in ("source", "target")
    ]
    for topic in stateful:
        rocketmq.create_topic(topic, queues=1)
    return topics + stateful


def _assert_all_passed(
    done: "subprocess.CompletedProcess[str]", spark_version: str, scala_binary: str
) -> None:
    # Spark's INFO lines (stderr) bury a failure: the checks' own lines are on stdout.
    errors = "\n".join(line for line in done.stderr.splitlines() if " INFO " not in line)[-4000:]
    summary = SUMMARY.search(done.stdout)
    failed = "\n".join(line for line in done.stdout.splitlines() if line.startswith("FAILED - "))
    assert done.returncode == 0 and summary is not None, (
        failed + "\n" + done.stdout[-8000:] + errors
    )
    assert summary.group(1) == spark_version
    assert summary.group(2).startswith(scala_binary + ".")
    checks = _checks(spark_version)
    assert (int(summary.group(3)), int(summary.group(4))) == (checks, 0), done.stdout
    assert len(re.findall(r"^ok - ", done.stdout, re.MULTILINE)) == checks, done.stdout


@pytest.mark.cross_version
def test_the_scala_smoke_suite_passes_on_this_pyspark(rocketmq) -> None:
    version = pyspark.__version__
    spark35 = version.startswith("3.5.")
    smoke_jar = _smoke_file("smokeSpark35_212.jar" if spark35 else "smokeSpark4.jar")
    args = [rocketmq.name_server, *_topics(rocketmq)]
    # local[3]: the real-time check's batch holds two cores (one per queue) while a batch write
    # needs a third.
    command = submit_command("local[3]", jar_path(version), smoke_jar, *args)
    primary = len(command) - len(args) - 1
    command[primary:primary] = ["--class", MAIN_CLASS]
    done = run_or_dump_threads(command, 600, env=spark_env())
    _assert_all_passed(done, version, "2.12" if spark35 else "2.13")


# Not cross_version: once, in the main suite.
def test_the_scala_smoke_suite_passes_on_spark_3_5_with_scala_2_13(
    rocketmq, tmp_path: Path
) -> None:
    java_args = _smoke_file("smokeSpark35_213-java-args").read_text().split("\n")
    classpath_at = java_args.index("-cp") + 1
    java_args[classpath_at] += ":" + jar_path("3.5.0", "2.13")
    command = [
        "java",
        *[a for a in java_args if a],
        "-Xmx1g",
        CLIENT_LOG_OPTION,
        f"-Duser.home={tmp_path}",
        "-Dspark.master=local[2]",
        "-Dspark.ui.enabled=false",
        "-Dspark.sql.shuffle.partitions=1",
        "-Dspark.driver.host=127.0.0.1",
        "-Dspark.driver.bindAddress=127.0.0.1",
        MAIN_CLASS,
        rocketmq.name_server,
        *_topics(rocketmq),
    ]
    done = run_or_dump_threads(command, 600, cwd=tmp_path)
    _assert_all_passed(done, "3.5.0", "2.13")
