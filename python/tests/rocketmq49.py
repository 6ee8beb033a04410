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

"""A RocketMQ 4.9 name server and broker, each its own JVM, from Maven Central's 4.9.7 jars.

``build/sbt itTests/exportHarnessClasspath`` writes their classpath
(it-tests/target/rocketmq49-java-args). Ports are ephemeral and the store temporary; the broker
keeps RocketMQ's defaults but for what a test machine needs (its disk-full ratios, so a full-ish
disk does not refuse writes). Topics are created with RocketMQ's own admin tool
(``mqadmin updateTopic``), as an operator would.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import List, Optional

from connect_server import accepts, free_port
from embedded_rocketmq import REPO_ROOT
from waiting import wait_until

JAVA_ARGS = REPO_ROOT / "it-tests" / "target" / "rocketmq49-java-args"
# Warnings and errors to the process's output (its log file here).
LOGBACK = """<configuration>
  <appender name="out" class="ch.qos.logback.core.ConsoleAppender">
    <encoder><pattern>%d %-5level %logger{36} - %msg%n</pattern></encoder>
  </appender>
  <root level="WARN"><appender-ref ref="out"/></root>
</configuration>
"""
VERSION = "4.9.7"


def _free_port_with(offsets: tuple) -> int:
    """A free port p with p + each offset free too (the 4.9 broker also listens on p - 2 and p +
    1)."""
    for _ in range(100):
        port = free_port()
        if all(port + o > 1024 and not accepts(port + o) for o in offsets):
            return port
    raise RuntimeError("no free port")


class RocketMQ49:
    """Name server and broker of RocketMQ 4.9.7 as two child processes."""

    def __init__(self, work_dir: Path) -> None:
        if not JAVA_ARGS.exists():
            raise RuntimeError(
                f"{JAVA_ARGS} is missing: run `build/sbt itTests/exportHarnessClasspath` "
                "(dev/test does)"
            )
        self.work_dir = work_dir
        self.name_server = ""
        self._procs: List[subprocess.Popen] = []

    def _java(
        self, main: str, *args: str, log: Optional[Path] = None, wait: bool = False
    ) -> subprocess.Popen:
        home = self.work_dir / "home"
        command = [
            "java",
            "-Xmx512m",
            f"-Drocketmq.home.dir={home}",
            f"-Duser.home={home}",
            f"-Drocketmq.client.logRoot={home / 'logs'}",
            f"@{JAVA_ARGS}",
            main,
            *args,
        ]
        out = open(log, "w", encoding="utf-8") if log else subprocess.PIPE
        return subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, text=True, cwd=self.work_dir
        )

    def start(self, timeout_s: float = 120.0) -> "RocketMQ49":
        conf = self.work_dir / "home" / "conf"
        conf.mkdir(parents=True, exist_ok=True)
        # 4.9 reads its logging setup from $ROCKETMQ_HOME/conf; a binary distribution ships these
        # files.
        for name in ("logback_namesrv.xml", "logback_broker.xml", "logback_tools.xml"):
            (conf / name).write_text(LOGBACK)
        namesrv_port = free_port()
        broker_port = _free_port_with((-2, 0, 1))
        self.name_server = f"127.0.0.1:{namesrv_port}"
        namesrv_conf = self.work_dir / "namesrv.conf"
        namesrv_conf.write_text(f"listenPort={namesrv_port}\n")
        store = self.work_dir / "store"
        broker_conf = self.work_dir / "broker.conf"
        broker_conf.write_text(
            "\n".join(
                [
                    "brokerClusterName=DefaultCluster",
                    "brokerName=broker-49",
                    "brokerId=0",
                    "brokerIP1=127.0.0.1",
                    f"namesrvAddr={self.name_server}",
                    f"listenPort={broker_port}",
                    f"storePathRootDir={store}",
                    f"storePathCommitLog={store / 'commitlog'}",
                    "diskMaxUsedSpaceRatio=99",
                    "",
                ]
            )
        )
        self._procs.append(
            self._java(
                "org.apache.rocketmq.namesrv.NamesrvStartup",
                "-c",
                str(namesrv_conf),
                log=self.work_dir / "namesrv.log",
            )
        )
        self._wait_listening(namesrv_port, timeout_s, "name server")
        self._procs.append(
            self._java(
                "org.apache.rocketmq.broker.BrokerStartup",
                "-c",
                str(broker_conf),
                log=self.work_dir / "broker.log",
            )
        )
        self._wait_listening(broker_port, timeout_s, "broker")
        # Registered with the name server once mqadmin lists it.
        wait_until(
            f"the 4.9 broker to register with its name server (see {self.work_dir / 'broker.log'})",
            lambda: "broker-49" in self.admin("clusterList", "-n", self.name_server, check=False),
            timeout_s,
            poll_s=0.5,
        )
        return self

    def _wait_listening(self, port: int, timeout_s: float, what: str) -> None:
        def listening() -> bool:
            if any(p.poll() is not None for p in self._procs):
                raise RuntimeError(
                    f"the 4.9 {what} exited before listening (see the logs in {self.work_dir})"
                )
            return accepts(port)

        wait_until(
            f"the 4.9 {what} to listen on port {port} (see the logs in {self.work_dir})",
            listening,
            timeout_s,
        )

    def admin(self, *args: str, check: bool = True) -> str:
        """Runs RocketMQ 4.9's mqadmin with ``args``; its output."""
        proc = self._java("org.apache.rocketmq.tools.command.MQAdminStartup", *args)
        out, _ = proc.communicate(timeout=120)
        if check and proc.returncode != 0:
            raise RuntimeError(f"mqadmin {' '.join(args)} failed:\n{out}")
        return out

    def create_topic(self, topic: str, queues: int = 4) -> None:
        out = self.admin(
            "updateTopic",
            "-n",
            self.name_server,
            "-c",
            "DefaultCluster",
            "-t",
            topic,
            "-r",
            str(queues),
            "-w",
            str(queues),
        )
        if "success" not in out:
            raise RuntimeError(f"mqadmin updateTopic {topic}: {out}")

    def stop(self) -> None:
        for proc in reversed(self._procs):
            proc.terminate()
        for proc in self._procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, 9)
                proc.wait()
