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

"""The artifacts RELEASING.md publishes, against what Maven Central and PyPI accept: each connector
artifact with its jar, sources jar, javadoc jar and a POM naming what Central asks for; the wheel
passing ``twine check``.

Reads the checkout's Maven repository as
``build/sbt connector/publish connectorSpark35_212/publish connectorSpark35_213/publish`` leaves it
(dev/test does it before pytest) and python/dist as dev/build-python leaves it. No network.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import List
from xml.etree import ElementTree

import pytest

import rocketmq_spark
from embedded_rocketmq import REPO_ROOT

GROUP = "io.github.rocketmq-spark"
# Each published artifact and the sbt project that publishes it.
ARTIFACTS = {
    "rocketmq-spark-connector_2.13": "connector",
    "rocketmq-spark-connector-spark35_2.12": "connectorSpark35_212",
    "rocketmq-spark-connector-spark35_2.13": "connectorSpark35_213",
}
REPOSITORY = REPO_ROOT / "target" / "maven-repo"
# What Maven Central requires of a POM, as paths under <project>: each present with some text.
POM_ELEMENTS = (
    "name",
    "description",
    "url",
    "licenses/license",
    "developers/developer",
    "scm/url",
    "scm/connection",
)
POM_NAMESPACE = {"m": "http://maven.apache.org/POM/4.0.0"}


def _jar_problems(jar: Path, wanted: str, entry_suffixes: tuple[str, ...]) -> List[str]:
    """What is wrong with ``jar``: missing, not a jar, or without any entry ending in one of
    ``entry_suffixes``."""
    if not jar.is_file():
        return [f"no {wanted} ({jar.name})"]
    if not zipfile.is_zipfile(jar):
        return [f"the {wanted} {jar.name} is not a jar"]
    with zipfile.ZipFile(jar) as archive:
        if not any(name.endswith(entry_suffixes) for name in archive.namelist()):
            return [f"the {wanted} {jar.name} has no {' or '.join(entry_suffixes)} file"]
    return []


def _pom_problems(pom: Path) -> List[str]:
    if not pom.is_file():
        return [f"no POM ({pom.name})"]
    project = ElementTree.parse(pom).getroot()
    missing = []
    for path in POM_ELEMENTS:
        element = project.find("/".join(f"m:{part}" for part in path.split("/")), POM_NAMESPACE)
        if element is None or not "".join(element.itertext()).strip():
            missing.append(f"the POM has no {path}")
    return missing


@pytest.mark.parametrize("artifact", sorted(ARTIFACTS))
def test_each_artifact_has_what_maven_central_requires(artifact: str) -> None:
    version = rocketmq_spark.__version__
    folder = REPOSITORY / Path(*GROUP.split(".")) / artifact / version
    base = folder / f"{artifact}-{version}"
    problems = (
        _jar_problems(Path(f"{base}.jar"), "jar", (".class",))
        + _jar_problems(Path(f"{base}-sources.jar"), "sources jar", (".scala", ".java"))
        + _jar_problems(Path(f"{base}-javadoc.jar"), "javadoc jar", ("index.html",))
        + _pom_problems(Path(f"{base}.pom"))
    )
    hint = f"build/sbt {ARTIFACTS[artifact]}/publish writes them; dev/test runs it"
    assert not problems, f"{GROUP}:{artifact}:{version} in {folder}: {'; '.join(problems)} ({hint})"


def test_the_wheel_passes_twine_check() -> None:
    dist = REPO_ROOT / "python" / "dist"
    wheel = dist / f"rocketmq_spark-{rocketmq_spark.__version__}-py3-none-any.whl"
    assert wheel.is_file(), f"no {wheel}: dev/build-python builds it"
    assert importlib.util.find_spec("twine"), (
        "twine is not installed in .venv: dev/build-python installs it"
    )
    # The sdist too, when one was built: PyPI checks every file uploaded.
    files = [wheel] + sorted(dist.glob(f"rocketmq_spark-{rocketmq_spark.__version__}.tar.gz"))
    done = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *map(str, files)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"twine check --strict failed:\n{done.stdout}{done.stderr}"
