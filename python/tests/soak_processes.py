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


"""What dev/soak runs (python/tests/soak.py): the harness shared by its threads, the producer, the
master killer of --cluster, and the spark-submit of the streaming query."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path
from typing import List, Optional

from embedded_rocketmq import EmbeddedRocketMQProcess
from spark_processes import spark_env


class Harness:
    """The harness process, shared by the producer thread and the sampler (one command at a
    time)."""

    def __init__(self, process: EmbeddedRocketMQProcess) -> None:
        self.process = process
        self.lock = threading.Lock()

    def send(self, topic: str, count: int, prefix: str) -> None:
        with self.lock:
            self.process.send(topic, count, prefix)

    def stored(self, topic: str) -> int:
        with self.lock:
            offsets = self.process.latest_offsets(topic)[topic]
        return sum(sum(queues.values()) for queues in offsets.values())

    def command(self, line: str) -> str:
        with self.lock:
            return self.process.command(line)

    def bodies(self, topic: str) -> List[str]:
        with self.lock:
            return self.process.bodies(topic)


class MasterKiller(threading.Thread):
    """Every ``every_s`` seconds: SIGKILLs ``broker``, leaves it down ``down_s`` seconds, starts it
    again."""

    def __init__(self, harness: Harness, broker: str, every_s: float, down_s: float) -> None:
        super().__init__(daemon=True)
        self.harness, self.broker, self.every_s, self.down_s = harness, broker, every_s, down_s
        self.kills = 0
        self.error: Optional[BaseException] = None
        self.stop_event = threading.Event()

    def run(self) -> None:
        try:
            while not self.stop_event.wait(self.every_s):
                self.harness.command(f"kill {self.broker}")
                self.kills += 1
                print(f"dev/soak: killed {self.broker} (kill {self.kills})", flush=True)
                self.stop_event.wait(self.down_s)  # restarted even when the run ends meanwhile
                self.harness.command(f"restart {self.broker}")
                print(f"dev/soak: restarted {self.broker}", flush=True)
        except BaseException as e:
            self.error = e


class Producer(threading.Thread):
    def __init__(self, harness: Harness, topic: str, rate: int) -> None:
        super().__init__(daemon=True)
        self.harness, self.topic = harness, topic
        self.per_round = max(1, rate // 2)  # a round every 0.5 s
        self.sent = 0
        self.error: Optional[BaseException] = None
        self.stop_event = threading.Event()

    def run(self) -> None:
        rounds = 0
        next_round = time.monotonic()
        try:
            while not self.stop_event.is_set():
                self.harness.send(self.topic, self.per_round, f"s{rounds}-")
                self.sent += self.per_round
                rounds += 1
                next_round += 0.5
                self.stop_event.wait(max(0.0, next_round - time.monotonic()))
        except BaseException as e:
            self.error = e


class Query:
    """The spark-submit of soak_stream.py; keeps the source's committed position from its
    progress."""

    def __init__(self, command: List[str], log: Path, stop_file: Path) -> None:
        self._log = open(log, "wb")
        self._stop_file = stop_file
        self.proc = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
            env=spark_env(),
            start_new_session=True,
        )
        self.started = threading.Event()
        self.consumed = 0
        self.batches = 0
        self.stopped_cleanly = False
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            line = line.strip()
            if line.startswith("QUERY_STARTED"):
                self.started.set()
            elif line == "STOPPED":
                self.stopped_cleanly = True
            elif line.startswith("{"):
                progress = json.loads(line)
                self.batches = progress["batchId"] + 1
                self.consumed = progress["consumed"]

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self, timeout_s: float = 180) -> int:
        self._stop_file.touch()
        try:
            return self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()
        finally:
            self._log.close()
