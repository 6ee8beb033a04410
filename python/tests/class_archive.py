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

"""A class data sharing archive for the tests' Spark JVMs: the classes a first Spark driver of this
pyspark loaded, mapped by every later JVM on the same classpath instead of loaded again from
pyspark's 200-odd jars. The tests start dozens of drivers (the kill tests alone seventeen); each
spends seconds loading classes, about half its start.

``python python/tests/class_archive.py`` makes the archive of the pyspark next to that interpreter
(dev/test does, in the background while the Scala suites run); `java_options` gives the flags that
use it, or none while there is none. A JVM whose classpath or JDK differs from the archive's runs
as without it (the JVM checks, and says nothing: its CDS log is off)."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path

from embedded_rocketmq import REPO_ROOT

ARCHIVE_DIR = REPO_ROOT / "target" / "class-archives"
WARM_UP = Path(__file__).parent / "scripts" / "class_archive_warm_up.py"
QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"


@lru_cache(maxsize=None)
def archive_path() -> Path:
    """Where the archive of this interpreter's pyspark and of the JDK on the PATH is: named after
    both, and after the jars' sizes and times (a reinstall makes another)."""
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    java = Path(shutil.which("java") or "java").resolve()
    key = hashlib.sha256(str(java).encode())
    for jar in sorted(jars.glob("*.jar")):
        stat = jar.stat()
        key.update(f"{jar}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return ARCHIVE_DIR / f"spark-{pyspark.__version__}-{key.hexdigest()[:16]}.jsa"


def java_options() -> str:
    """The JVM flags that start a Spark JVM from the archive, if it has been made."""
    path = archive_path()
    return f"-XX:SharedArchiveFile={path} {QUIET}" if path.exists() else ""


def make() -> Path:
    """Makes the archive, unless it is there: a driver runs a small job
    (scripts/class_archive_warm_up.py) and writes the classes it loaded as it exits (under another
    name first, so that no JVM maps half a file)."""
    from spark_processes import spark_env, spark_submit

    path = archive_path()
    if path.exists():
        return path
    ARCHIVE_DIR.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=ARCHIVE_DIR) as work:
        dumped = Path(work) / path.name
        subprocess.run(
            [spark_submit(), "--master", "local[2]", "--conf", "spark.ui.enabled=false"]
            + ["--conf", "spark.driver.host=127.0.0.1"]
            + ["--conf", "spark.driver.bindAddress=127.0.0.1"]
            + ["--driver-java-options", f"-XX:ArchiveClassesAtExit={dumped} {QUIET}"]
            + [str(WARM_UP), work],
            env=spark_env(),
            check=True,
            timeout=600,
            stdout=subprocess.DEVNULL,
        )
        os.replace(dumped, path)
    return path


if __name__ == "__main__":
    print(f"class_archive: {make()}")
