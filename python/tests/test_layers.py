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

"""dev/check-layers: the connector's imports run down its package layers (docs/development.md,
Package layers).

Pure file checks, no Spark: the checker runs on this checkout, then on copies of its sources given a
use that runs up or sideways.
"""

from __future__ import annotations

import runpy
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
CHECKER = REPO_ROOT / "dev" / "check-layers"
SOURCES = Path("connector/src/main")
MAIN = SOURCES / "scala/org/apache/spark/sql/rocketmq"
PULLER = MAIN / "consumer/RocketMQQueuePuller.scala"


def check_layers(root: Path | None = None) -> subprocess.CompletedProcess[str]:
    args = [sys.executable, str(CHECKER)] + ([str(root)] if root else [])
    return subprocess.run(args, capture_output=True, text=True, timeout=60)


def copy_of_sources(tmp_path: Path) -> Path:
    shutil.copytree(
        REPO_ROOT / SOURCES, tmp_path / SOURCES, ignore=shutil.ignore_patterns("resources")
    )
    return tmp_path


def add_after_package_line(file: Path, added: str) -> int:
    """Puts `added` on the line after `file`'s package clause; returns that line's number."""
    lines = file.read_text(encoding="utf-8").split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith("package ")) + 1
    lines.insert(at, added)
    file.write_text("\n".join(lines), encoding="utf-8")
    return at + 1


def test_the_repository_passes() -> None:
    done = check_layers()
    assert done.returncode == 0, done.stdout + done.stderr


def test_an_import_of_the_root_package_from_consumer_fails_naming_file_line_and_import(
    tmp_path: Path,
) -> None:
    root = copy_of_sources(tmp_path)
    line = add_after_package_line(
        root / PULLER, "import org.apache.spark.sql.rocketmq.RocketMQTable"
    )
    done = check_layers(root)
    assert done.returncode == 1
    assert (
        f"{PULLER}:{line}: consumer uses org.apache.spark.sql.rocketmq.RocketMQTable (root, a "
        "higher layer)" in (done.stdout)
    )
    assert len(done.stdout.splitlines()) == 1, done.stdout


def test_packages_of_one_layer_may_not_use_each_other(tmp_path: Path) -> None:
    root = copy_of_sources(tmp_path)
    line = add_after_package_line(
        root / PULLER,
        "import org.apache.spark.sql.rocketmq.producer.{RocketMQMessageSender, "
        "RocketMQWriteSettings}",
    )
    done = check_layers(root)
    assert done.returncode == 1
    assert f"{PULLER}:{line}: consumer uses org.apache.spark.sql.rocketmq.producer." in done.stdout
    assert "(producer, the same layer)" in done.stdout


# From each of common, errors, options and client, a use of the layer just above: (file, the use
# added, the package used).
_UPWARD = [
    (
        MAIN / "common/RocketMQQueue.scala",
        "import org.apache.spark.sql.rocketmq.errors.RocketMQErrors",
        "errors",
    ),
    (
        MAIN / "errors/RocketMQErrorKinds.scala",
        "import org.apache.spark.sql.rocketmq.options.RocketMQOptions",
        "options",
    ),
    (
        MAIN / "options/RocketMQOption.scala",
        "import org.apache.spark.sql.rocketmq.client.RocketMQOffsetReader",
        "client",
    ),
    (
        MAIN / "client/RocketMQIndexing.scala",
        "import org.apache.spark.sql.rocketmq.consumer.RocketMQQueuePuller",
        "consumer",
    ),
]


@pytest.mark.parametrize(("file", "added", "used"), _UPWARD, ids=[u[2] for u in _UPWARD])
def test_common_errors_options_client_run_upwards_in_that_order(
    tmp_path: Path, file: Path, added: str, used: str
) -> None:
    root = copy_of_sources(tmp_path)
    line = add_after_package_line(root / file, added)
    done = check_layers(root)
    assert done.returncode == 1
    assert f"{file}:{line}: " in done.stdout
    assert f"({used}, a higher layer)" in done.stdout
    assert len(done.stdout.splitlines()) == 1, done.stdout


def test_the_layers_run_in_the_order_docs_development_md_gives() -> None:
    layers = runpy.run_path(str(CHECKER), run_name="check_layers")["LAYERS"]
    assert layers == [
        ("exceptions",),
        ("common",),
        ("errors",),
        ("options",),
        ("client",),
        ("consumer", "producer"),
        ("transaction",),
        ("root",),
    ]


def test_a_name_written_in_full_counts_but_not_in_a_comment(tmp_path: Path) -> None:
    root = copy_of_sources(tmp_path)
    settings = MAIN / "producer/RocketMQWriteSettings.scala"
    add_after_package_line(
        root / settings, "// see org.apache.spark.sql.rocketmq.transaction.RocketMQDecisionLog"
    )
    assert check_layers(root).returncode == 0
    line = add_after_package_line(
        root / settings,
        "object Uses { def of(s: org.apache.spark.sql.rocketmq.transaction.RocketMQDecisionLog) = "
        "s }",
    )
    done = check_layers(root)
    assert done.returncode == 1
    assert (
        f"{settings}:{line}: producer uses "
        "org.apache.spark.sql.rocketmq.transaction.RocketMQDecisionLog" in (done.stdout)
    )


def test_the_public_exceptions_may_name_nothing_above_them(tmp_path: Path) -> None:
    # In the root package, but the lowest layer: they see the rest of the root package without an
    # import.
    root = copy_of_sources(tmp_path)
    constructors = MAIN / "RocketMQExceptionConstructors.scala"
    line = add_after_package_line(
        root / constructors, "object UsesTheTable { val t = classOf[RocketMQTable] }"
    )
    done = check_layers(root)
    assert done.returncode == 1
    assert (
        f"{constructors}:{line}: exceptions uses org.apache.spark.sql.rocketmq.RocketMQTable"
        in done.stdout
    )


def test_a_package_missing_from_the_layers_fails(tmp_path: Path) -> None:
    root = copy_of_sources(tmp_path)
    added = root / MAIN / "metrics/RocketMQMeter.scala"
    added.parent.mkdir()
    added.write_text(
        "package org.apache.spark.sql.rocketmq.metrics\n\nobject RocketMQMeter\n", encoding="utf-8"
    )
    done = check_layers(root)
    assert done.returncode == 1
    assert "package metrics has no place in LAYERS" in done.stdout
