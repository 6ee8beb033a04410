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

"""Every script under python/examples runs, as its docstring shows, against the real broker.

The ETL examples run as their ``__main__`` with their command line, inside this test process: their
``getOrCreate()`` gets the tests' session (a Spark JVM start less per run: five runs took about 50 s
more as processes of their own), their ``spark.stop()`` is kept from stopping it, and the session
settings an example's builder sets are put back afterwards. The examples' own session set-up,
``configure_spark_with_rocketmq`` on a fresh process, is run by the demo (below) and by
quickstart.py in a fresh virtualenv (test_pip_install.py).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import runpy
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Dict, List
from unittest import mock

import pyarrow.parquet as pq
from pyspark.sql import SparkSession

from embedded_rocketmq import REPO_ROOT, unique_topic
from rocketmq_spark import write_rocketmq
from spark_processes import spark_env

EXAMPLES = REPO_ROOT / "python" / "examples"


def run_example(spark: Any, name: str, *args: str) -> str:
    """Runs the example as ``python <name> <args>`` would, in this process and its session; returns
    what it printed."""
    settings = spark._jsparkSession.sessionState().conf()
    before = dict(spark.conf.getAll)
    printed = io.StringIO()
    try:
        with (
            mock.patch.object(sys, "argv", [str(EXAMPLES / name), *args]),
            mock.patch.object(SparkSession, "stop", lambda self: None),
            contextlib.redirect_stdout(printed),
        ):
            runpy.run_path(str(EXAMPLES / name), run_name="__main__")
    finally:
        after = dict(spark.conf.getAll)
        for key in after.keys() - before.keys():
            settings.unsetConf(key)
        for key, value in before.items():
            if after.get(key) != value:
                settings.setConfString(key, value)
    return printed.getvalue()


def test_every_example_is_tested() -> None:
    tested = {
        "batch_etl.py",
        "streaming_word_count.py",
        "backfill_to_parquet.py",
        "demo.py",
        "quickstart.py",
    }
    assert {p.name for p in EXAMPLES.glob("*.py")} == tested  # quickstart.py: test_pip_install.py


def test_demo_starts_its_own_broker_writes_and_reads_back() -> None:
    ran = os.environ.get("ROCKETMQ_DEMO_STDOUT")
    if ran:
        # .ci/run sets it: dev/demo has just run this script on this commit and passed (it stops CI
        # otherwise); what it printed is checked here rather than the same run made again.
        print(f"checking the output of dev/demo's run ({ran}) rather than running demo.py again")
        stdout = Path(ran).read_text()
    else:
        done = subprocess.run(
            [sys.executable, str(EXAMPLES / "demo.py")],
            capture_output=True,
            text=True,
            timeout=600,
            cwd=REPO_ROOT,
            env=spark_env(),
        )
        assert done.returncode == 0, done.stderr[-4000:]
        stdout = done.stdout
    assert "Writing 12 messages to topic 'demo-orders'" in stdout
    assert stdout.count('{"order": ') == 12
    # What a user wants to see: bodies and tags, not the client's bookkeeping properties.
    assert "UNIQ_KEY" not in stdout and "|paid    |" in stdout
    assert "Messages tagged 'refunded' (tag filter on the broker): 4" in stdout
    assert stdout.rstrip().endswith("RocketMQ stopped.")


def test_batch_etl(spark: Any, rocketmq: Any) -> None:
    source, target = unique_topic("raw"), unique_topic("paid")
    rocketmq.create_topic(source, queues=2)
    rocketmq.create_topic(target, queues=2)
    orders = [
        json.dumps(
            {
                "order_id": f"o{i}",
                "amount": 1.5 * i,
                "currency": "eur" if i % 2 else "usd",
                "status": "paid" if i % 3 else "refunded",
            }
        )
        for i in range(30)
    ]
    write_rocketmq(
        spark.createDataFrame([(o,) for o in orders], "body STRING"), rocketmq.name_server, source
    )

    out = run_example(
        spark,
        "batch_etl.py",
        "--name-server",
        rocketmq.name_server,
        "--source-topic",
        source,
        "--target-topic",
        target,
    )

    assert json.loads(out.strip().splitlines()[-1]) == {"read": 30, "written": 20}
    got = sorted(
        (json.loads(b) for b in rocketmq.bodies(target)), key=lambda o: int(o["order_id"][1:])
    )
    assert got == [
        {"order_id": f"o{i}", "amount_cents": round(150 * i), "currency": "EUR" if i % 2 else "USD"}
        for i in range(30)
        if i % 3
    ]


def test_streaming_word_count(spark: Any, rocketmq: Any, tmp_path: Path) -> None:
    lines_topic, counts_topic = unique_topic("lines"), unique_topic("counts")
    rocketmq.create_topic(lines_topic, queues=2)
    rocketmq.create_topic(counts_topic, queues=2)
    lines = ["the quick brown fox", "The lazy dog", "the end, the END"]
    write_rocketmq(
        spark.createDataFrame([(t,) for t in lines], "body STRING"),
        rocketmq.name_server,
        lines_topic,
    )
    args = [
        "--name-server",
        rocketmq.name_server,
        "--lines-topic",
        lines_topic,
        "--counts-topic",
        counts_topic,
        "--checkpoint",
        str(tmp_path / "cp"),
        "--available-now",
    ]

    run_example(spark, "streaming_word_count.py", *args)
    assert latest_counts(rocketmq.bodies(counts_topic)) == dict(
        Counter(" ".join(lines).lower().replace(",", "").split())
    )

    # A second run resumes from the checkpoint: only the words of the new line are published again.
    write_rocketmq(
        spark.createDataFrame([("fox and dog",)], "body STRING"), rocketmq.name_server, lines_topic
    )
    before = Counter(rocketmq.bodies(counts_topic))
    run_example(spark, "streaming_word_count.py", *args)
    published = rocketmq.bodies(counts_topic)
    new = Counter(published) - before
    assert sorted(json.loads(b)["word"] for b in new.elements()) == ["and", "dog", "fox"]
    assert latest_counts(published)["fox"] == 2 and latest_counts(published)["and"] == 1


def latest_counts(bodies: List[str]) -> Dict[str, int]:
    best: Dict[str, int] = {}
    for b in bodies:
        m = json.loads(b)
        best[m["word"]] = max(best.get(m["word"], 0), m["count"])
    return best


def test_backfill_to_parquet(spark: Any, rocketmq: Any, tmp_path: Path) -> None:
    topic = unique_topic("backfill")
    rocketmq.create_topic(topic, queues=4)
    rocketmq.send(topic, 250, "b-", tag="old")
    args = [
        "--name-server",
        rocketmq.name_server,
        "--topic",
        topic,
        "--output",
        str(tmp_path / "table"),
        "--checkpoint",
        str(tmp_path / "cp"),
        "--batch-size",
        "100",
    ]

    first = json.loads(run_example(spark, "backfill_to_parquet.py", *args).strip().splitlines()[-1])
    assert first == {"batches": 3, "rows": 250}
    rocketmq.send(topic, 40, "c-", tag="new")
    second = json.loads(
        run_example(spark, "backfill_to_parquet.py", *args).strip().splitlines()[-1]
    )
    assert second == {"batches": 1, "rows": 40}

    table = pq.read_table(tmp_path / "table").to_pylist()
    assert sorted(r["body"] for r in table) == sorted(
        [f"b-{i}" for i in range(250)] + [f"c-{i}" for i in range(40)]
    )
    assert Counter(r["tag"] for r in table) == {"old": 250, "new": 40}
    assert len({(r["queueId"], r["queueOffset"]) for r in table}) == 290
    assert all(r["date"] is not None for r in table)
