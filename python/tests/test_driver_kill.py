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

"""Exactly-once through driver crashes: a RocketMQ -> Parquet stream whose driver process (the
spark-submit JVM and its Python driver) is killed with SIGKILL four times at random points of its
progress while messages keep arriving, each time started again from the same checkpoint; a final
AvailableNow run drains the topic, and the sink must hold every message produced exactly once.

The kill points come from a seeded random generator: the seed is printed, and
ROCKETMQ_KILL_SEED=<seed> replays the same points (the rest of the timing is the machine's). A point
is a condition on the checkpoint, never a delay: the moment a further batch is planned (its offsets
written, its tasks about to run) or the moment one is committed; the two kinds take turns, so that
every run kills at each twice, and the generator picks how many batches further.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Set

from embedded_rocketmq import EmbeddedRocketMQProcess, unique_topic
from rocketmq_spark import jar_path
from spark_processes import kill_process_group, spark_env, submit_command, wait_until

# Each kill point twice (a driver start, about 13 s, a cycle; six cycles repeated each kind three
# times).
CYCLES = 4
QUEUES = 4
# Small micro-batches while the kills go on (several per second, so most kills land in one); large
# ones to drain.
MAX_OFFSETS_PER_TRIGGER = 150
DRAIN_MAX_OFFSETS_PER_TRIGGER = 5000
# After its first commit, a restarted driver runs up to this many more batches before the kill
# point.
MAX_FURTHER_BATCHES = 2
SCRIPT = Path(__file__).parent / "scripts" / "kill_driver_stream.py"


class Producer(threading.Thread):
    """Sends rounds of messages with unique bodies (``r<round>-<i>``) until stopped: the only user
    of the harness while it runs (the harness takes one command at a time)."""

    def __init__(
        self,
        harness: EmbeddedRocketMQProcess,
        topic: str,
        per_round: int = 10,
        pause_s: float = 0.2,
    ):
        super().__init__(daemon=True)
        self.harness, self.topic, self.per_round, self.pause_s = harness, topic, per_round, pause_s
        self.sent: Set[str] = set()
        self.error: Optional[BaseException] = None
        self._stop_event = threading.Event()

    def run(self) -> None:
        rounds = 0
        try:
            while not self._stop_event.is_set():
                prefix = f"r{rounds}-"
                self.harness.send(
                    self.topic, self.per_round, prefix
                )  # returns once every message is stored
                self.sent.update(f"{prefix}{i}" for i in range(self.per_round))
                rounds += 1
                self._stop_event.wait(self.pause_s)
        except BaseException as e:  # reported by the test
            self.error = e

    def finish(self) -> Set[str]:
        self._stop_event.set()
        self.join(timeout=120)
        assert not self.is_alive(), "the producer did not stop"
        assert self.error is None, f"producing failed: {self.error!r}"
        return self.sent


def batch_ids(log_dir: Path) -> List[int]:
    """The batch ids a streaming checkpoint's offsets/ or commits/ log holds."""
    return (
        sorted(int(f.name) for f in log_dir.glob("*") if f.name.isdigit())
        if log_dir.exists()
        else []
    )


def last_batch(log_dir: Path) -> int:
    ids = batch_ids(log_dir)
    return ids[-1] if ids else -1


def driver_command(
    name_server: str, topic: str, sink: Path, checkpoint: Path, max_offsets: int, *mode: str
) -> List[str]:
    return submit_command(
        "local[2]",
        jar_path(),
        SCRIPT,
        name_server,
        topic,
        str(sink),
        str(checkpoint),
        str(max_offsets),
        *mode,
        driver_memory="512m",
        # C1 only: the driver lives for seconds, and JVM start is most of a cycle.
        driver_java_options="-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
    )


def tail(path: Path, chars: int = 4000) -> str:
    return path.read_text(errors="replace")[-chars:] if path.exists() else f"({path} is missing)"


def start_and_kill(
    cycle: int,
    rng: random.Random,
    name_server: str,
    topic: str,
    sink: Path,
    checkpoint: Path,
    tmp_path: Path,
    max_offsets: int = MAX_OFFSETS_PER_TRIGGER,
    kill_number: Optional[int] = None,
) -> Dict[str, Any]:
    """Starts the driver, waits until it has committed a micro-batch, then until a random point of
    its progress (a further batch planned, or committed: by turns, odd ``kill_number`` (by default
    ``cycle``) planned), and kills its whole process group with SIGKILL. Returns what happened."""
    committed_before = last_batch(checkpoint / "commits")
    log = tmp_path / f"driver-{cycle}.log"
    t0 = time.monotonic()
    with open(log, "wb") as out:
        # Its own session and process group: the kill reaches the JVM and the Python driver
        # together.
        proc = subprocess.Popen(
            driver_command(name_server, topic, sink, checkpoint, max_offsets, "run"),
            stdout=out,
            stderr=subprocess.STDOUT,
            env=spark_env(full_jit=True),
            start_new_session=True,
        )
    try:

        def committed_a_batch() -> bool:
            if proc.poll() is not None:
                raise AssertionError(
                    f"cycle {cycle}: the driver exited ({proc.returncode}):\n{tail(log)}"
                )
            return last_batch(checkpoint / "commits") > committed_before

        wait_until(
            f"cycle {cycle}: a micro-batch committed ({log})", committed_a_batch, timeout_s=180
        )
        t_running = time.monotonic()
        # The kill point: batch `target` planned (killed while it runs) or committed (killed between
        # batches), by turns.
        log_dir = (
            "offsets" if (cycle if kill_number is None else kill_number) % 2 == 1 else "commits"
        )
        target = (
            last_batch(checkpoint / "commits")
            + (1 if log_dir == "offsets" else 0)
            + rng.randint(0, MAX_FURTHER_BATCHES)
        )
        kill_point = f"batch {target} in {log_dir}"

        def reached_kill_point() -> bool:
            if proc.poll() is not None:
                raise AssertionError(f"cycle {cycle}: the driver exited by itself:\n{tail(log)}")
            return last_batch(checkpoint / log_dir) >= target

        wait_until(
            f"cycle {cycle}: {kill_point} ({log})", reached_kill_point, timeout_s=180, poll_s=0.02
        )
    finally:
        kill_process_group(proc)
    assert proc.returncode == -9, (
        f"cycle {cycle}: the driver JVM ended with {proc.returncode}, not SIGKILL:\n{tail(log)}"
    )
    offsets, commits = last_batch(checkpoint / "offsets"), last_batch(checkpoint / "commits")
    return {
        "cycle": cycle,
        "first_commit_s": round(t_running - t0, 1),
        "kill_point": kill_point,
        "exit": proc.returncode,
        "committed_batches": commits - committed_before,
        "batch_in_flight": offsets > commits,  # planned (in the offset log) but not committed
    }


def test_driver_killed_four_times_mid_stream_loses_and_duplicates_nothing(
    rocketmq, tmp_path: Path
) -> None:
    seed = int(os.environ.get("ROCKETMQ_KILL_SEED", random.SystemRandom().randrange(2**32)))
    rng = random.Random(seed)
    print(f"driver kill test: seed {seed} (ROCKETMQ_KILL_SEED={seed} replays the kill points)")
    topic = unique_topic("kill-driver")
    rocketmq.create_topic(topic, queues=QUEUES)
    sink, checkpoint = tmp_path / "sink", tmp_path / "checkpoint"
    cycles: List[Dict[str, Any]] = []
    started = time.monotonic()

    producer = Producer(rocketmq, topic)
    producer.start()
    try:
        for cycle in range(1, CYCLES + 1):
            cycles.append(
                start_and_kill(cycle, rng, rocketmq.name_server, topic, sink, checkpoint, tmp_path)
            )
            print(f"driver kill test: {cycles[-1]}")
    finally:
        produced = producer.finish()
    kills_done = time.monotonic()

    # Drain what the topic holds now with a fresh driver from the same checkpoint, then read the
    # sink back.
    report_path, log = tmp_path / "report.json", tmp_path / "driver-drain.log"
    with open(log, "wb") as out:
        drain = subprocess.run(
            driver_command(
                rocketmq.name_server,
                topic,
                sink,
                checkpoint,
                DRAIN_MAX_OFFSETS_PER_TRIGGER,
                "drain",
                str(report_path),
            ),
            stdout=out,
            stderr=subprocess.STDOUT,
            env=spark_env(full_jit=True),
            timeout=600,
        )
    assert drain.returncode == 0, tail(log)
    report = json.loads(report_path.read_text())
    finished = time.monotonic()

    bodies: List[str] = report["bodies"]
    seen = set(bodies)
    lost = sorted(produced - seen)
    unexpected = sorted(seen - produced)
    duplicated = len(bodies) - len(seen)
    positions = {tuple(p) for p in report["positions"]}
    stored = sum(rocketmq.latest_offsets(topic)[topic]["broker-a"].values())
    summary = {
        "seed": seed,
        "produced": len(produced),
        "rows": len(bodies),
        "lost": len(lost),
        "duplicated": duplicated,
        "kills_with_a_batch_in_flight": sum(c["batch_in_flight"] for c in cycles),
        "batches": last_batch(checkpoint / "commits") + 1,
        "kill_cycles_s": round(kills_done - started, 1),
        "drain_s": round(finished - kills_done, 1),
        "total_s": round(finished - started, 1),
    }
    print(f"driver kill test: {json.dumps(summary)}")
    (tmp_path / "summary.json").write_text(
        json.dumps({"summary": summary, "cycles": cycles}, indent=1)
    )

    assert stored == len(produced), "the topic holds other messages than the producer's"
    assert lost == [], f"{len(lost)} messages lost, e.g. {lost[:10]} (seed {seed})"
    assert unexpected == [], f"bodies never produced: {unexpected[:10]}"
    assert duplicated == 0, f"{duplicated} duplicated rows (seed {seed})"
    assert len(positions) == len(bodies) == len(produced)
    # Every cycle ran the query (at least one committed batch before each kill).
    assert all(c["committed_batches"] >= 1 for c in cycles)
