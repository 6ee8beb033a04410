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

"""Drives the embedded RocketMQ harness (EmbeddedRocketMQHarness.main) as a separate process.

The process prints ``NAMESRV host:port`` once the name server and broker are up, then answers one
command per stdin line with one line (``OK ...`` or ``ERROR ...``); it stops when stdin closes.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence

REPO_ROOT = Path(__file__).resolve().parents[2]
HARNESS_SCRIPT = REPO_ROOT / "dev" / "rocketmq-harness"
HARNESS_ARGS = REPO_ROOT / "it-tests" / "target" / "harness-java-args"


class EmbeddedRocketMQProcess:
    """A real name server + broker in a child JVM, on ephemeral ports with a temporary store."""

    def __init__(self, log_path: Optional[Path] = None, args: Sequence[str] = ()) -> None:
        """``args``: the harness's own, ``--acl`` (authentication and authorization on) and
        ``--tls`` (TLS only)."""
        if not HARNESS_ARGS.exists():
            raise RuntimeError(
                f"{HARNESS_ARGS} is missing: build it with `build/sbt "
                "itTests/exportHarnessClasspath` "
                "(dev/test and dev/demo do this)."
            )
        self._log_path = log_path or (REPO_ROOT / "it-tests" / "target" / "harness-process.log")
        self._lines: "queue.Queue[Optional[str]]" = queue.Queue()
        self._proc: Optional[subprocess.Popen[str]] = None
        self._args = list(args)
        self.name_server = ""

    def start(self, timeout_s: float = 120.0) -> "EmbeddedRocketMQProcess":
        self._log_path.parent.mkdir(parents=True, exist_ok=True)
        log = open(self._log_path, "w", encoding="utf-8")
        self._proc = subprocess.Popen(
            [str(HARNESS_SCRIPT), *self._args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            encoding="utf-8",
            bufsize=1,
        )
        threading.Thread(target=self._pump, daemon=True).start()
        line = self._next_line(timeout_s)
        if not line.startswith("NAMESRV "):
            raise RuntimeError(f"harness did not start: {line!r} (see {self._log_path})")
        self.name_server = line.split(" ", 1)[1].strip()
        return self

    def _pump(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        for line in self._proc.stdout:
            self._lines.put(line.rstrip("\n"))
        self._lines.put(None)

    def _next_line(self, timeout_s: float) -> str:
        try:
            line = self._lines.get(timeout=timeout_s)
        except queue.Empty as empty:
            raise TimeoutError(
                f"no answer from the harness within {timeout_s} s (see {self._log_path})"
            ) from empty
        if line is None:
            raise RuntimeError(f"the harness process exited (see {self._log_path})")
        return line

    def command(self, line: str, timeout_s: float = 120.0) -> str:
        assert self._proc is not None and self._proc.stdin is not None
        self._proc.stdin.write(line + "\n")
        self._proc.stdin.flush()
        reply = self._next_line(timeout_s)
        if not reply.startswith("OK"):
            raise RuntimeError(f"harness command {line!r} failed: {reply}")
        return reply[2:].strip()

    def create_topic(
        self,
        topic: str,
        queues: int = 4,
        message_type: Optional[str] = None,
        compacted: bool = False,
    ) -> None:
        """``message_type``: the topic's type (NORMAL, FIFO, DELAY, TRANSACTION), which a proxy
        checks sends against; ``compacted``: the topic keeps each key's latest message."""
        kind = "COMPACTED" if compacted else message_type
        self.command(f"createTopic {topic} {queues}" + (f" {kind}" if kind else ""))

    def await_indexed(self) -> None:
        """Returns once the broker has indexed everything it stored (a proxy's planning cannot wait
        for it)."""
        self.command("awaitIndexed")

    def set_broker_setting(self, key: str, value: str) -> None:
        """Changes a broker setting at run time (as ``mqadmin updateBrokerConfig``), e.g.
        ``transactionCheckInterval`` in milliseconds: a new check interval applies at once."""
        self.command(f"set {key} {value}")

    def start_proxy(self) -> str:
        """Starts a RocketMQ 5 proxy (Apache's, cluster mode) in front of this broker, once; its
        Remoting endpoint, which clients take as their name server. On an ``--acl`` harness the
        proxy authenticates clients too."""
        return self.command("startProxy", timeout_s=180.0)

    def stop_proxy(self) -> None:
        """Stops the proxy ``start_proxy`` started, if any (the harness stops it when it stops,
        too)."""
        self.command("stopProxy")

    def create_user_with_rights(self, access_key: str, secret_key: str, rights: str) -> None:
        """On an ``--acl`` harness: a user with exactly ``rights``, e.g.
        ``Topic:t=Sub+Get,Group:g=Sub``."""
        self.command(f"createUserWithRights {access_key} {secret_key} {rights}")

    def send(self, topic: str, count: int, body_prefix: str, tag: Optional[str] = None) -> None:
        self.command(f"send {topic} {count} {body_prefix}" + (f" {tag}" if tag else ""))

    def create_user(self, access_key: str, secret_key: str, rights: str) -> None:
        """On an ``--acl`` harness: a user allowed ``rights`` (none, read or readwrite) on every
        topic and group."""
        self.command(f"createUser {access_key} {secret_key} {rights}")

    def bodies(self, topic: str) -> List[str]:
        """Every stored message body of ``topic``, read with the plain RocketMQ client."""
        return list(json.loads(self.command(f"bodies {topic}")))

    def latest_offsets(self, topic: str) -> Dict[str, Dict[str, Dict[str, int]]]:
        return dict(json.loads(self.command(f"latestOffsets {topic}")))

    def stop(self, timeout_s: float = 60.0) -> None:
        if self._proc is None:
            return
        proc, self._proc = self._proc, None
        try:
            if proc.stdin is not None:
                proc.stdin.close()  # the harness stops when its stdin closes
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def unique_topic(prefix: str = "py") -> str:
    return f"{prefix}-{time.time_ns() % 10**12}"
