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

"""A Spark Connect server in its own JVM (spark-submit ... SparkConnectServer), started without the
connector: the tests attach the jar from the client with add_rocketmq_jar, as a Connect user
would."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path
from typing import Optional

from embedded_rocketmq import REPO_ROOT
from spark_processes import spark_env, spark_java_options, spark_submit
from waiting import wait_until


def free_port() -> int:
    """A port nothing listens on now (the OS picks it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def accepts(port: int) -> bool:
    """Whether something listens on ``port`` of the loopback address."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


class SparkConnectServerProcess:
    def __init__(self, log_path: Optional[Path] = None) -> None:
        self.port = 0
        self._proc: Optional[subprocess.Popen[bytes]] = None
        self._log_path = log_path or (
            REPO_ROOT / "it-tests" / "target" / "spark-connect-server.log"
        )

    @property
    def url(self) -> str:
        return f"sc://127.0.0.1:{self.port}"

    def start(self, timeout_s: float = 180.0) -> "SparkConnectServerProcess":
        self.port = free_port()
        command = [
            spark_submit(),
            "--master",
            "local[2]",
            "--class",
            "org.apache.spark.sql.connect.service.SparkConnectServer",
            "--conf",
            f"spark.connect.grpc.binding.port={self.port}",
            "--conf",
            "spark.connect.grpc.binding.address=127.0.0.1",
            "--conf",
            "spark.driver.host=127.0.0.1",
            "--conf",
            "spark.driver.bindAddress=127.0.0.1",
            "--conf",
            "spark.ui.enabled=false",
            "--conf",
            "spark.sql.shuffle.partitions=2",
            "--conf",
            f"spark.driver.extraJavaOptions={spark_java_options()}",
        ]
        self._log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self._log_path, "wb") as log:
            self._proc = subprocess.Popen(
                command,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=spark_env(),
            )

        def listening() -> bool:
            if self._proc is not None and self._proc.poll() is not None:
                raise RuntimeError(
                    f"the Spark Connect server exited with {self._proc.returncode} (see "
                    f"{self._log_path})"
                )
            return accepts(self.port)

        try:
            wait_until(
                f"the Spark Connect server to listen (see {self._log_path})",
                listening,
                timeout_s,
                0.2,
            )
        except TimeoutError:
            self.stop()
            raise
        return self

    def stop(self, timeout_s: float = 60.0) -> None:
        if self._proc is None:
            return
        proc, self._proc = self._proc, None
        proc.terminate()
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
