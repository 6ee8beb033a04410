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

"""pip: the wheel installed into a fresh virtual environment, used by a plain script, as a new user
would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path
from typing import Any

import rocketmq_spark
from embedded_rocketmq import REPO_ROOT, unique_topic
from spark_processes import LOCAL_SUBMIT_ARGS


def test_a_fresh_virtualenv_installs_the_wheel_and_reads_and_writes(
    rocketmq: Any, tmp_path: Path
) -> None:
    wheel = (
        REPO_ROOT
        / "python"
        / "dist"
        / f"rocketmq_spark-{rocketmq_spark.__version__}-py3-none-any.whl"
    )
    assert wheel.is_file(), f"{wheel} is missing: dev/build-python builds it"
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    # What pip resolves for the wheel's own requirement (pyspark>=4.2,<5), not the test suite's pin.
    subprocess.run([str(python), "-m", "pip", "install", "-q", str(wheel)], check=True, timeout=900)
    spark_version = subprocess.run(
        [str(python), "-c", "import pyspark; print(pyspark.__version__)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()

    topic = unique_topic("quickstart")
    rocketmq.create_topic(topic, queues=4)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYSPARK", "SPARK_", "VIRTUAL_ENV"))
    }
    env["PYSPARK_SUBMIT_ARGS"] = LOCAL_SUBMIT_ARGS
    done = subprocess.run(
        [
            str(python),
            str(REPO_ROOT / "python" / "examples" / "quickstart.py"),
            "--name-server",
            rocketmq.name_server,
            "--topic",
            topic,
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result == {"spark": spark_version, "written": 100, "read": 100, "first": "hello 0"}
    assert sorted(rocketmq.bodies(topic)) == sorted(f"hello {i}" for i in range(100))
    print(f"fresh virtualenv ran the quick start on pyspark {spark_version}", file=sys.stderr)
