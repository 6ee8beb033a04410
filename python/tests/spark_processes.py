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

"""What the tests need to start Spark in a child process: the pip-installed spark-submit, its
environment, and the settings that keep it on loopback and its RocketMQ client log in the build
tree."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional

import class_archive
from embedded_rocketmq import REPO_ROOT
from waiting import wait_until  # noqa: F401  (re-exported: the tests import it from here)

#: The RocketMQ client's log directory for every Spark the tests start (not ~/logs/rocketmqlogs).
CLIENT_LOGS = REPO_ROOT / "it-tests" / "target" / "client-logs"
CLIENT_LOG_OPTION = f"-Drocketmq.log.root={CLIENT_LOGS}"


def spark_java_options(*extra: str) -> str:
    """JVM options of the tests' Spark drivers and executors: the RocketMQ client's log in the build
    tree, and the class archive of this pyspark, where there is one (class_archive.py)."""
    return " ".join(filter(None, [CLIENT_LOG_OPTION, class_archive.java_options(), *extra]))


#: PYSPARK_SUBMIT_ARGS for a script that builds its own session: local[2] on loopback, no UI.
LOCAL_SUBMIT_ARGS = (
    "--master local[2] --conf spark.ui.enabled=false --conf spark.driver.host=127.0.0.1 "
    f"--conf spark.driver.bindAddress=127.0.0.1 --driver-java-options {CLIENT_LOG_OPTION} "
    "pyspark-shell"
)


def spark_submit() -> str:
    """The spark-submit of the pyspark installed next to this interpreter."""
    return str(Path(sys.executable).parent / "spark-submit")


def submit_command(
    master: str,
    jar: str,
    script: Path,
    *args: str,
    driver_memory: Optional[str] = None,
    driver_java_options: str = "",
    conf: Optional[Dict[str, str]] = None,
) -> List[str]:
    """A spark-submit command line for ``script`` with the connector ``jar``: on loopback, no UI,
    one shuffle partition, and the RocketMQ client log of driver (and executors, on local-cluster)
    in the build tree."""
    settings = {
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": "1",
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.driver.extraJavaOptions": spark_java_options(driver_java_options),
    }
    if master.startswith("local-cluster"):
        settings["spark.executor.memory"] = "768m"
        settings["spark.executor.extraJavaOptions"] = spark_java_options()
    settings.update(conf or {})
    command = [spark_submit(), "--master", master, "--jars", jar]
    if driver_memory:
        command += ["--driver-memory", driver_memory]
    for key, value in settings.items():
        command += ["--conf", f"{key}={value}"]
    return command + [str(script), *args]


C1_ONLY = "-XX:TieredStopAtLevel=1"


def spark_env(*, full_jit: bool = False, **extra: str) -> Dict[str, str]:
    """Environment for spark-submit and Python scripts: Spark home is the pyspark package, and
    Python workers run on this interpreter. ``full_jit`` takes out the C1-only flag dev/test gives
    the tests' JVMs, for drivers that stream for minutes, which it slows down."""
    import pyspark

    env = dict(
        os.environ,
        SPARK_HOME=str(Path(pyspark.__file__).parent),
        PYSPARK_PYTHON=sys.executable,
        PYSPARK_DRIVER_PYTHON=sys.executable,
        **extra,
    )
    if full_jit and "JAVA_TOOL_OPTIONS" in env:
        kept = [o for o in env["JAVA_TOOL_OPTIONS"].split() if o != C1_ONLY]
        if kept:
            env["JAVA_TOOL_OPTIONS"] = " ".join(kept)
        else:
            del env["JAVA_TOOL_OPTIONS"]
    return env


def run_or_dump_threads(
    command: List[str], timeout_s: float, **kwargs
) -> "subprocess.CompletedProcess[str]":
    """Runs ``command`` (text output captured) like ``subprocess.run``; if it is still running after
    ``timeout_s``, fails the test with the tail of what it printed and a thread dump (jstack) of
    each of its JVMs, taken before the whole process group is killed: a hang then says where it
    hung."""
    import pytest

    proc = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        **kwargs,
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        dumps = []
        for pid in live_group_members(proc.pid):
            if "java" in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode(
                errors="replace"
            ):
                jstack = Path(os.environ.get("JAVA_HOME", "/usr")) / "bin" / "jstack"
                dump = subprocess.run(
                    [str(jstack) if jstack.exists() else "jstack", str(pid)],
                    capture_output=True,
                    text=True,
                    timeout=60,
                )
                dumps.append(f"--- jstack {pid} ---\n{dump.stdout}{dump.stderr}")
        kill_process_group(proc)
        stdout, stderr = proc.communicate()
        pytest.fail(
            f"{command} still running after {timeout_s} "
            f"s.\nstdout:\n{stdout[-6000:]}\nstderr:\n{stderr[-6000:]}\n" + "\n".join(dumps)
        )
    return subprocess.CompletedProcess(command, proc.returncode, stdout, stderr)


def live_group_members(pgid: int) -> List[int]:
    """The processes of process group ``pgid`` that are still running (zombies, which a container's
    init may leave unreaped, do not count)."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # gone meanwhile
        # pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses, so split after the
        # last ')'.
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[0] != "Z" and int(fields[2]) == pgid:
            members.append(int(entry.name))
    return members


def kill_process_group(proc: "subprocess.Popen[bytes]", timeout_s: float = 30.0) -> None:
    """SIGKILL to every process of the group ``proc`` leads (started with start_new_session=True):
    the spark-submit JVM and its Python driver alike. Returns once none of them is running."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(timeout=timeout_s)
    wait_until(
        f"process group {proc.pid} to be gone", lambda: not live_group_members(proc.pid), timeout_s
    )
