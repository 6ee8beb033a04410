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


"""The Python package on its own: its helpers, docstrings, doctests and typing, that it never
touches the JVM, and the jar it configures. Its argument checks and what it hands Spark are in
test_argument_checks.py, test_option_passing.py and test_real_time_allowlist.py."""

from __future__ import annotations

import doctest
import inspect
import json
import re
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Dict, List, Optional

import pyspark
import pytest

import rocketmq_spark
from embedded_rocketmq import REPO_ROOT
from rocketmq_spark import (
    EARLIEST,
    LATEST,
    LATEST_OFFSET,
    configure_spark_with_rocketmq,
    epoch_millis,
    jar_path,
    offsets_json,
    timestamps_json,
)

PACKAGE_SOURCE = REPO_ROOT / "python" / "rocketmq_spark"


def test_offset_and_timestamp_helpers() -> None:
    assert (
        offsets_json({"a": {"broker-a": {0: 5, "1": EARLIEST, 2: LATEST, 3: LATEST_OFFSET}}})
        == '{"a":{"broker-a":{"0":5,"1":-2,"2":-1,"3":-1}}}'
    )
    noon_cet = datetime(2024, 6, 1, 12, 0, tzinfo=timezone(timedelta(hours=2)))
    assert epoch_millis(noon_cet) == 1717236000000
    assert epoch_millis(1717236000000) == 1717236000000
    assert json.loads(timestamps_json({"a": {"b": {7: noon_cet}}})) == {
        "a": {"b": {"7": 1717236000000}}
    }
    with pytest.raises(TypeError, match="must be a datetime or epoch milliseconds"):
        epoch_millis("2024-01-01")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must be a non-empty dict"):
        offsets_json({})


def _numpydoc_sections(doc: str) -> Dict[str, List[str]]:
    """A numpydoc docstring's sections: title -> its lines (dedented), for the titles underlined
    with dashes."""
    lines = inspect.cleandoc(doc).splitlines()
    sections: Dict[str, List[str]] = {}
    current: Optional[List[str]] = None
    for i, line in enumerate(lines):
        underline = lines[i + 1] if i + 1 < len(lines) else ""
        if (
            line.strip()
            and underline.strip()
            and set(underline.strip()) == {"-"}
            and len(underline) == len(line)
        ):
            current = sections.setdefault(line.strip(), [])
        elif current is not None and not (set(line.strip()) == {"-"}):
            current.append(line)
    return sections


def test_every_public_function_has_numpydoc_parameters_returns_and_examples() -> None:
    functions = [
        name for name in rocketmq_spark.__all__ if inspect.isfunction(getattr(rocketmq_spark, name))
    ]
    assert len(functions) >= 14, functions
    for name in functions:
        function = getattr(rocketmq_spark, name)
        signature = inspect.signature(function)
        untyped = [
            p for p in signature.parameters.values() if p.annotation is inspect.Parameter.empty
        ]
        assert not untyped and signature.return_annotation is not inspect.Signature.empty, name
        assert function.__doc__, f"{name} has no docstring"
        sections = _numpydoc_sections(function.__doc__)
        for title in ("Parameters", "Returns", "Examples"):
            assert title in sections, f"{name}: no {title} section (numpydoc)"
        # Every parameter is described, once, and nothing else: "name : type" or "a, b : type"
        # lines.
        documented = [
            word
            for line in sections["Parameters"]
            if line and not line.startswith(" ") and " : " in line
            for word in line.split(" : ")[0].split(", ")
        ]
        assert sorted(documented) == sorted(signature.parameters), (name, documented)
        returns = [line for line in sections["Returns"] if line and not line.startswith(" ")]
        assert len(returns) == 1, (name, returns)
        examples = [line for line in sections["Examples"] if line.startswith(">>> ")]
        assert examples and any(name in line for line in examples), (
            f"{name}: its examples do not call it"
        )


def test_modules_doctests_pass() -> None:
    for module in ("_positions", "_jar"):
        result = doctest.testmod(
            sys.modules[f"rocketmq_spark.{module}"], optionflags=doctest.ELLIPSIS
        )
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
    # Spark Connect sessions have no JVM: these would fail there (the e2e tests also run under
    # Connect).
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
    builder = configure_spark_with_rocketmq(
        _FakeBuilder("/opt/a.jar,/opt/b.jar")  # type: ignore[arg-type]
    )
    assert builder._options["spark.jars"] == f"/opt/a.jar,/opt/b.jar,{jar_path()}"
    again = configure_spark_with_rocketmq(builder)  # type: ignore[arg-type]
    assert again._options["spark.jars"] == f"/opt/a.jar,/opt/b.jar,{jar_path()}"
    assert (
        configure_spark_with_rocketmq(_FakeBuilder(""))._options["spark.jars"]  # type: ignore
        == jar_path()
    )


def test_one_version_for_the_jar_and_the_package_and_the_pinned_pyspark() -> None:
    build = (REPO_ROOT / "build.sbt").read_text()
    assert 'file("python/rocketmq_spark/_version.py")' in build  # sbt reads the package's version
    assert (
        Path(jar_path()).name
        == f"rocketmq-spark-connector-assembly_2.13-{rocketmq_spark.__version__}.jar"
    )
    spark_version = re.search(  # type: ignore[union-attr]
        r'val sparkVersion = "([^"]+)"', build
    ).group(1)
    pins = (REPO_ROOT / "python" / "requirements-test.txt").read_text()
    assert f"pyspark[connect]=={spark_version}" in pins
    assert pyspark.__version__ == spark_version
