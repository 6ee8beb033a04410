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

"""The embedded RocketMQ as a process: what pytest, the demo and benchmarks rely on."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

from embedded_rocketmq import EmbeddedRocketMQProcess


def test_prints_its_name_server_and_stops_when_stdin_closes(tmp_path: Path) -> None:
    harness = EmbeddedRocketMQProcess(log_path=tmp_path / "h.log").start()
    host, port = harness.name_server.split(":")
    # Bound to port 0: the kernel hands the port out from its ephemeral range.
    low, high = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    assert host == "127.0.0.1" and low <= int(port) <= high
    store = Path(harness.command("storeDir"))
    assert store.is_dir()
    proc = harness._proc
    assert proc is not None
    harness.stop(timeout_s=30)
    assert proc.returncode == 0
    assert not store.exists(), f"{store} was left behind"  # removed by the JVM before it exits


def test_stops_on_sigterm(tmp_path: Path) -> None:
    harness = EmbeddedRocketMQProcess(log_path=tmp_path / "h.log").start()
    store = Path(harness.command("storeDir"))
    proc = harness._proc
    assert proc is not None
    os.kill(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    assert proc.returncode in (0, 128 + signal.SIGTERM, -signal.SIGTERM)
    assert not store.exists(), f"{store} was left behind"  # removed by the JVM before it exits
