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

"""The documentation site (docs/, mkdocs.yml) and the README: the site builds in strict mode, and
every Python and Scala example on them runs against the embedded broker, as written but for the name
server's address and the paths (checkpoints and outputs go under a temporary directory). The Python
examples of a page share one namespace, in page order, as a reader would run them; so do its Scala
examples, in spark-shell. A query an example starts must be running without error; it is stopped
before the next example."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, Dict, List, NamedTuple

import pyspark
import pytest

from embedded_rocketmq import REPO_ROOT
from rocketmq_spark import jar_path
from spark_processes import spark_java_options
from waiting import wait_until

PAGES = [REPO_ROOT / "README.md", REPO_ROOT / "python" / "README.md"] + sorted(
    (REPO_ROOT / "docs").rglob("*.md")
)
FENCE = re.compile(
    r"^(?P<indent>[ ]*)```(?P<lang>\w*)\n(?P<code>.*?)^(?P=indent)```$", re.MULTILINE | re.DOTALL
)
# What the examples read and write: two queues each, so that a real-time query (a task slot per
# queue for its whole batch) runs on local[2]. The namespace example's topic is 'orders' under
# namespace tenant-a.
# RMQ_SYS_TRACE_TOPIC: brokers started with RocketMQ's defaults have none
# (docs/operations.md#message-traces).
TRACE_TOPIC = "RMQ_SYS_TRACE_TOPIC"
COMPACTED_TOPIC = "prices"
TOPICS = ["orders", "orders-copy", "refunds", "lines", "counts", "tenant-a%orders", TRACE_TOPIC]
SECRETS = {"ORDERS_READER_SECRET": "reader-secret", "ORDERS_WRITER_SECRET": "writer-secret"}
CONNECT_ONLY = ".remote("
# A declarative pipeline's source file runs inside spark-pipelines only: test_pipelines.py runs it.
PIPELINE_ONLY = "from pyspark import pipelines"
# The name server address the examples show readers; the test puts the embedded broker's (an
# ephemeral port) there.
DOCUMENTED_NAME_SERVER = "127.0.0.1:9876"


class Example(NamedTuple):
    page: Path
    line: int
    lang: str
    code: str

    def where(self) -> str:
        return f"{self.page.relative_to(REPO_ROOT)}:{self.line}"


def examples(lang: str) -> List[Example]:
    found = []
    for page in PAGES:
        text = page.read_text()
        for m in FENCE.finditer(text):
            if m.group("lang") == lang:
                code = textwrap.dedent(
                    "\n".join(
                        line[len(m.group("indent")) :] for line in m.group("code").split("\n")
                    )
                )
                found.append(Example(page, text.count("\n", 0, m.start()) + 1, lang, code))
    return found


def as_run(code: str, name_server: str, scratch: Path) -> str:
    """The example with the embedded broker for the documented address and its paths under
    ``scratch``."""
    code = code.replace(DOCUMENTED_NAME_SERVER, name_server)
    for root in ("/chk/", "/tmp/", "/data/"):
        code = code.replace(f'"{root}', f'"{scratch}{root}')
    return code


@pytest.fixture(scope="module")
def example_topics(rocketmq) -> List[str]:
    for topic in TOPICS:
        rocketmq.create_topic(topic, queues=2)
    rocketmq.create_topic(COMPACTED_TOPIC, queues=2, compacted=True)
    rocketmq.send("orders", 20, "order-")
    rocketmq.send("refunds", 5, "refund-")
    rocketmq.send("lines", 5, "word-")
    return TOPICS + [COMPACTED_TOPIC]


def real_time(code: str) -> bool:
    return "real_time" in code or "realTime" in code or "RealTime" in code


def settle(spark: Any, ex: Example) -> None:
    """Every query the example started runs without error, and is then stopped: a micro-batch query
    once it has processed what is there; a real-time one, whose batch lasts minutes, once its batch
    runs."""
    for query in spark.streams.active:
        if real_time(ex.code):
            deadline = time.time() + 60
            while query.isActive and not query.status["isTriggerActive"]:
                assert time.time() < deadline, (
                    f"{ex.where()}: query {query.id} never started a batch"
                )
                query.awaitTermination(0.2)
        else:
            query.processAllAvailable()
        assert query.exception() is None, f"{ex.where()}: {query.exception()}"
        query.stop()


def test_the_site_builds_in_strict_mode(tmp_path: Path) -> None:
    mkdocs = Path(sys.executable).parent / "mkdocs"
    done = subprocess.run(
        [str(mkdocs), "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert "WARNING" not in done.stderr, done.stderr[-4000:]
    for page in ("index.html", "real-time/index.html", "reference/options/index.html"):
        assert (tmp_path / "site" / page).is_file(), page


def test_every_code_block_is_python_scala_yaml_or_a_command() -> None:
    langs = {
        ex_lang
        for page in PAGES
        for ex_lang in (m.group("lang") for m in FENCE.finditer(page.read_text()))
    }
    assert langs <= {"python", "scala", "bash", "text", "yaml"}, langs
    assert len(examples("python")) >= 12 and len(examples("scala")) >= 10


def test_python_examples_run(spark, rocketmq, example_topics, tmp_path: Path, monkeypatch) -> None:
    if type(spark).__module__.startswith("pyspark.sql.connect"):
        pytest.fail("runs in classic sessions (the Connect example has its own test)")
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    namespaces: Dict[Path, Dict[str, Any]] = {}
    ran = 0
    for ex in examples("python"):
        if CONNECT_ONLY in ex.code or PIPELINE_ONLY in ex.code:
            continue
        scope = namespaces.setdefault(ex.page, {"spark": spark, "handle_row": lambda row: None})
        try:
            exec(
                compile(as_run(ex.code, rocketmq.name_server, tmp_path), ex.where(), "exec"), scope
            )
        except Exception as e:  # the example's own failure, named by its place
            raise AssertionError(f"{ex.where()}: {type(e).__name__}: {e}") from e
        settle(spark, ex)
        ran += 1
    assert ran >= 12
    # What the examples wrote is there.
    bodies = set(rocketmq.bodies("orders-copy"))
    assert {"o-1", "o-2"} <= bodies and any(b.startswith("order-") for b in bodies), sorted(bodies)[
        :10
    ]
    counts = rocketmq.bodies("counts")
    assert {f"word-{i}=1" for i in range(5)} <= set(counts), counts[:20]
    # The traced write's Pub records, in RocketMQ's trace format (fields split by \x01), reach the
    # trace topic.
    traced = "\x01orders-copy\x01"
    wait_until(
        "the trace records of the write to orders-copy",
        lambda: any(b.startswith("Pub\x01") and traced in b for b in rocketmq.bodies(TRACE_TOPIC)),
        timeout_s=60,
        poll_s=0.5,
    )


@pytest.mark.e2e
@pytest.mark.connect_only
def test_connect_example_runs(spark, connect_url, rocketmq, example_topics) -> None:
    if connect_url is None:
        pytest.fail("runs over Spark Connect only (conftest deselects it in classic sessions)")
    ran = 0
    for ex in examples("python"):
        if CONNECT_ONLY in ex.code:
            scope: Dict[str, Any] = {}
            code = ex.code.replace("sc://connect-server:15002", connect_url)
            exec(
                compile(
                    as_run(code, rocketmq.name_server, Path("/nonexistent")), ex.where(), "exec"
                ),
                scope,
            )
            assert scope["df"].count() == 20, ex.where()
            ran += 1
    assert ran >= 1


def test_scala_examples_run(rocketmq, example_topics, tmp_path: Path) -> None:
    """Each Scala example is the body of an object of its own in one spark-shell, run in page
    order."""
    blocks = examples("scala")
    script = [
        "import org.apache.spark.sql.{ForeachWriter, Row}",
        "import org.apache.spark.sql.streaming.Trigger",
        "val writer = new ForeachWriter[Row] {",
        "  def open(partitionId: Long, epochId: Long): Boolean = true",
        "  def process(row: Row): Unit = ()",
        "  def close(error: Throwable): Unit = ()",
        "}",
        # The Python test's settle(), for spark-shell.
        "def settle(where: String, realTime: Boolean): Unit = spark.streams.active.foreach { q =>",
        "  val deadline = System.currentTimeMillis() + 60000",
        "  if (realTime) while (q.isActive && !q.status.isTriggerActive) {",
        "    require(System.currentTimeMillis() < deadline, "
        's"$where: query never started a batch")',
        "    q.awaitTermination(200)",
        "  } else q.processAllAvailable()",
        '  require(q.exception.isEmpty, s"$where: ${q.exception}")',
        "  q.stop()",
        "}",
    ]
    for number, ex in enumerate(blocks):
        code = textwrap.indent(as_run(ex.code, rocketmq.name_server, tmp_path), "  ")
        settled = f'settle("{ex.where()}", {str(real_time(ex.code)).lower()})'
        script += [f"object Example{number} {{", code, "}"]
        script += [f'{{ Example{number}; {settled}; println("EXAMPLE-OK {ex.where()}") }}']
    script.append("System.exit(0)")
    path = tmp_path / "examples.scala"
    path.write_text("\n".join(script) + "\n")
    shell = Path(pyspark.__file__).parent / "bin" / "spark-shell"
    done = subprocess.run(
        [
            str(shell),
            "--master",
            "local[2]",
            "--jars",
            jar_path(),
            "--conf",
            "spark.ui.enabled=false",
            "--conf",
            "spark.driver.host=127.0.0.1",
            # As the Python examples' session (conftest): the word count's state in 2 partitions,
            # not 200.
            "--conf",
            "spark.sql.shuffle.partitions=2",
            "--driver-java-options",
            spark_java_options(),
            "-i",
            str(path),
        ],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env={**os.environ, **SECRETS},
        timeout=900,
    )
    ok = set(re.findall(r"^EXAMPLE-OK (\S+)$", done.stdout, re.MULTILINE))
    expected = {ex.where() for ex in blocks}
    assert ok == expected, (
        f"Scala examples that failed: {sorted(expected - ok)}\n{done.stdout[-6000:]}"
    )
