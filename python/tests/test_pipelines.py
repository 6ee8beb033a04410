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

"""Spark Declarative Pipelines (pyspark 4.1+): the pipeline of docs/python.md, its spec, source
file and command as the page shows them, run by ``spark-pipelines`` against the embedded broker;
on pyspark 4.3 and later run again, going on from the first run."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import List

import pyspark
import pytest

from connect_server import accepts
from embedded_rocketmq import REPO_ROOT, unique_topic
from spark_processes import run_or_dump_threads, spark_env, spark_java_options
from test_docs import DOCUMENTED_NAME_SERVER, PIPELINE_ONLY, Example, examples

pytestmark = pytest.mark.cross_version

PYSPARK = tuple(int(p) for p in pyspark.__version__.split(".")[:2])
PAGE = REPO_ROOT / "docs" / "python.md"
MESSAGES = 20
LATE_MESSAGES = 10
LOCAL_CONNECT_PORT = 15002


def _block(blocks: List[Example], lang: str, marker: str) -> str:
    """The one block of docs/python.md in ``lang`` that holds ``marker``."""
    found = [ex.code for ex in blocks if ex.page == PAGE and ex.lang == lang and marker in ex.code]
    assert len(found) == 1, f"{PAGE}: {len(found)} {lang} blocks with {marker!r}"
    return found[0]


def test_a_pipeline_reads_rocketmq_into_a_streaming_table_and_writes_it_to_a_rocketmq_sink(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    if PYSPARK < (4, 1):
        # What a reader of the docs meets on pyspark 3.5 and 4.0: the import fails, naming it.
        with pytest.raises(ImportError, match="pipelines"):
            from pyspark import pipelines  # noqa: F401
        return

    spec = _block(examples("yaml"), "yaml", "storage:")
    source = _block(examples("python"), "python", PIPELINE_ONLY)
    command = _block(examples("bash"), "bash", "spark-pipelines")
    assert "spark-pipeline.yml" in spec and "run --spec spark-pipeline.yml" in command, command

    rocketmq = request.getfixturevalue("rocketmq")
    source_topic, target_topic = unique_topic("sdp-orders"), unique_topic("sdp-copy")
    rocketmq.create_topic(source_topic, queues=2)
    rocketmq.create_topic(target_topic, queues=2)
    rocketmq.send(source_topic, MESSAGES, "order-")

    # The blocks as written, but for the broker's address, fresh topics (the docs' own test writes
    # to orders-copy on the same broker) and the storage under tmp_path.
    project = tmp_path / "orders-pipeline"
    (project / "transformations").mkdir(parents=True)
    assert "file:///tmp/" in spec, spec
    (project / "spark-pipeline.yml").write_text(spec.replace("file:///tmp/", f"file://{tmp_path}/"))
    code = (
        source.replace(
            f'"{DOCUMENTED_NAME_SERVER}", "orders"', f'"{rocketmq.name_server}", "{source_topic}"'
        )
        .replace('"topic": "orders-copy"', f'"topic": "{target_topic}"')
        .replace(DOCUMENTED_NAME_SERVER, rocketmq.name_server)
    )
    assert f'"{source_topic}"' in code and f'"{target_topic}"' in code, code
    (project / "transformations" / "orders.py").write_text(code)
    # What the other tests' Spark processes have (loopback, the RocketMQ client's log in the build
    # tree) from the environment, not as Spark settings: the command may have only few of those
    # (docs/python.md). spark-pipelines starts a Spark Connect server in its JVM and connects to it
    # on port 15002, whatever the server's binding says (pyspark takes another port in its own
    # tests only): a server already there would take its requests.
    assert not accepts(LOCAL_CONNECT_PORT), (
        f"port {LOCAL_CONNECT_PORT} is taken: spark-pipelines' own Connect server needs it"
    )
    java_options = " ".join(
        filter(None, [os.environ.get("JAVA_TOOL_OPTIONS"), spark_java_options()])
    )
    # `python` and `spark-pipelines` of the command are this interpreter's.
    path = str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")
    env = spark_env(SPARK_LOCAL_IP="127.0.0.1", JAVA_TOOL_OPTIONS=java_options, PATH=path)

    def run() -> str:
        done = run_or_dump_threads(["bash", "-euc", command], 300, cwd=tmp_path, env=env)
        output = f"stdout:\n{done.stdout[-6000:]}\nstderr:\n{done.stderr[-6000:]}"
        assert done.returncode == 0, output
        return output

    output = run()
    first = [f"order-{i}" for i in range(MESSAGES)]
    assert sorted(rocketmq.bodies(target_topic)) == sorted(first), output
    # The resume is another ~30 s run (its own Connect server): the newest pyspark's leg checks it.
    if PYSPARK < (4, 3):
        return
    # A second run goes on from the first: only what was sent since, each message once.
    rocketmq.send(source_topic, LATE_MESSAGES, "late-")
    output = run()
    late = [f"late-{i}" for i in range(LATE_MESSAGES)]
    assert sorted(rocketmq.bodies(target_topic)) == sorted(first + late), output
