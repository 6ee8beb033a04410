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

"""Exactly-once through an executor crash: on local-cluster with two executor JVMs (the shaded jar
alone, --jars), an AvailableNow copy of a 20,000-message, 8-queue topic into Parquet, and one into
another topic with deliveryGuarantee=exactly_once, each lose one executor to SIGKILL while its tasks
are reading (and sending half messages); Spark runs the lost tasks again elsewhere, and each output
holds every message exactly once.

Both copies run in one application, one after the other (a cluster start and a JVM warm-up less than
an application per copy): after the first kill, the local-cluster worker starts a new executor in
place of the killed one, and the second copy starts once two executors are registered again, so each
copy has two executors to lose one of, as it would alone.

The point of each kill (once 0 to 4 tasks have completed, the executor whose task started last,
while that task has most of its run ahead: a condition on progress, never a delay) comes from a
seeded random generator: the seed is printed, and ROCKETMQ_KILL_SEED=<seed> replays both kill
points.
"""

from __future__ import annotations

import json
import os
import queue
import random
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

import pyspark
import pytest

from embedded_rocketmq import unique_topic
from rocketmq_spark import jar_path
from spark_processes import kill_process_group, spark_env, submit_command, wait_until

QUEUES = 8
CHUNKS, CHUNK = 4, 5000  # 20,000 messages
MAX_OFFSETS_PER_TRIGGER = 10000  # two micro-batches of eight tasks each
# A task reads 1,250 messages and sleeps 8 ms on every 4th (the script's `pause`): 2.5 s of sleeps
# at least.
MIN_TASK_MS = 10000 // QUEUES // 4 * 8
YOUNG_TASK_MS = (
    MIN_TASK_MS // 2
)  # a task started less than this long ago still has over a second to run
SCRIPT = Path(__file__).parent / "scripts" / "local_cluster_executor_kill.py"
# The copies in the order the application runs them (the seed's draws follow it).
SINKS = ["parquet", "rocketmq-exactly-once"]


def running_pid(pid: int) -> bool:
    """Whether ``pid`` is a process that is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def executor_pids(driver_url: str) -> List[int]:
    """The executor JVMs of one application: CoarseGrainedExecutorBackend processes given its driver
    URL (other sessions' Spark applications on the machine have other URLs)."""
    found = subprocess.run(
        ["pgrep", "-f", f"CoarseGrainedExecutorBackend --driver-url {driver_url} "],
        capture_output=True,
        text=True,
    )
    return sorted(int(p) for p in found.stdout.split())


def executor_id(pid: int) -> str:
    """The executor id an executor JVM was started with (its --executor-id argument)."""
    args = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    return args[args.index("--executor-id") + 1]


@pytest.fixture(scope="module")
def killed_copies(
    rocketmq, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Dict[str, Dict[str, Any]]]:
    """Runs the application, kills an executor in each copy, and gives each sink what its test
    checks: the messages produced, the bodies found in the output, the report and the kill."""
    seed = int(os.environ.get("ROCKETMQ_KILL_SEED", random.SystemRandom().randrange(2**32)))
    rng = random.Random(seed)
    print(f"executor kill test: seed {seed} (ROCKETMQ_KILL_SEED={seed} replays the kill points)")
    tmp_path = tmp_path_factory.mktemp("executor-kill")
    runs: Dict[str, Dict[str, Any]] = {}
    copy_args: List[str] = []
    for sink in SINKS:
        topic = unique_topic("kill-executor")
        rocketmq.create_topic(topic, queues=QUEUES)
        folder = tmp_path / sink
        folder.mkdir()
        output, target = str(folder / "out"), None
        if sink == "rocketmq-exactly-once":
            target = unique_topic("kill-executor-out")
            rocketmq.create_topic(target, queues=QUEUES)
            output = f"rocketmq://{target}"
        runs[sink] = {
            "topic": topic,
            "target": target,
            "report": folder / "report.json",
            "go": folder / "go",
        }
        copy_args += [
            topic,
            output,
            str(folder / "checkpoint"),
            str(folder / "report.json"),
            str(folder / "go"),
        ]
    produced = {f"k{c}-{i}" for c in range(CHUNKS) for i in range(CHUNK)}
    started = time.monotonic()

    log = tmp_path / "driver.log"
    command = submit_command(
        "local-cluster[2,1,1024]",
        jar_path(),
        SCRIPT,
        rocketmq.name_server,
        str(MAX_OFFSETS_PER_TRIGGER),
        *copy_args,
    )
    lines: "queue.Queue[Optional[str]]" = queue.Queue()
    work = Path(pyspark.__file__).parent / "work"  # local-cluster workers write here
    with open(log, "wb") as err:
        # Its own process group: whatever happens, the driver, its in-process master and worker and
        # the executor JVMs they start are all stopped at the end.
        proc = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            env=spark_env(),
            start_new_session=True,
        )

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    def next_line(prefix: str, timeout_s: float) -> str:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(
                    f"no {prefix!r} line within {timeout_s} s:\n{log.read_text()[-4000:]}"
                ) from None
            if line is None:
                raise AssertionError(
                    f"the driver exited before {prefix!r}:\n{log.read_text()[-4000:]}"
                )
            if line.startswith(prefix):
                return line

    def send(sink: str) -> float:
        """Stores the source messages of ``sink``'s copy; how long that took."""
        began = time.monotonic()
        for chunk in range(CHUNKS):
            rocketmq.send(runs[sink]["topic"], CHUNK, f"k{chunk}-")
        return time.monotonic() - began

    threading.Thread(target=pump, daemon=True).start()
    try:
        # The first copy's messages go in while Spark starts, each next copy's once the copy before
        # has lost its executor (while Spark runs its lost tasks again); each query starts once its
        # messages are all stored.
        send_s = send(SINKS[0])
        since = started
        driver_url = next_line("DRIVER_URL ", 300).split(" ", 1)[1]
        for number, sink in enumerate(SINKS):
            run = runs[sink]
            next_line(f"READY {number}", 300)
            run["go"].touch()
            registered = time.monotonic()
            next_line("TASKS_RUNNING", 300)
            tasks_running = time.monotonic()
            pids = executor_pids(driver_url)
            assert len(pids) == 2, f"expected two executor JVMs for {driver_url}, found {pids}"
            pid_of = {executor_id(pid): pid for pid in pids}
            # The kill point, a condition on progress: once `after_tasks` tasks have completed (0:
            # at once), the executor that started a task last, while that task is younger than
            # YOUNG_TASK_MS. Every task sleeps at least MIN_TASK_MS in all, so the kill lands in the
            # middle of it. (Two earlier versions of this condition missed: "n tasks completed" let
            # the kill hit an executor idle between two tasks, held back by the scheduler's locality
            # wait; "n completed and two running", read from the status tracker's stage counts, saw
            # tasks running that had ended seconds before, since Spark writes those counts at most
            # every 100 ms and otherwise at the stage's next event.)
            after_tasks = rng.randint(0, 4)
            while True:
                fields = next_line("TASKS ", 300).split()[1:]
                completed, victim_id, victim_task, launched = (
                    int(fields[0]),
                    fields[2],
                    int(fields[3]),
                    int(fields[4]),
                )
                if completed >= after_tasks and time.time() * 1000 - launched < YOUNG_TASK_MS:
                    break
            victim = pid_of[victim_id]
            os.kill(victim, signal.SIGKILL)
            killed = time.monotonic()
            wait_until(
                f"executor JVM {victim} to be gone",
                lambda victim=victim: not running_pid(victim),
                timeout_s=30,
            )
            next_send_s = send(SINKS[number + 1]) if number + 1 < len(SINKS) else None
            next_line(f"DONE {number}", 600)
            finished = time.monotonic()
            run.update(
                victim=victim,
                victim_id=victim_id,
                victim_task=victim_task,
                after_tasks=after_tasks,
                # From the start (the first copy) or the end of the copy before.
                times={
                    "send_s": round(send_s, 1),
                    "to_query_start_s": round(registered - since, 1),
                    "to_tasks_running_s": round(tasks_running - registered, 1),
                    "kill_to_end_s": round(finished - killed, 1),
                    "total_s": round(finished - since, 1),
                },
            )
            since, send_s = finished, next_send_s
        proc.wait(timeout=120)
        assert proc.returncode == 0, log.read_text()[-6000:]
    finally:
        if proc.poll() is None:
            kill_process_group(proc)
        shutil.rmtree(work, ignore_errors=True)

    for sink in SINKS:
        run = runs[sink]
        report = json.loads(run["report"].read_text())
        # Exactly-once: what an independent consumer (the plain pull client, committed messages
        # only) finds.
        bodies: List[str] = rocketmq.bodies(run["target"]) if run["target"] else report["bodies"]
        if run["target"]:
            print(f"executor kill test: target offsets {rocketmq.latest_offsets(run['target'])}")
        seen = set(bodies)
        run.update(report=report, bodies=bodies, seen=seen, produced=produced, seed=seed)
        summary = {
            "sink": sink,
            "seed": seed,
            "killed_pid": run["victim"],
            "killed_executor": run["victim_id"],
            "killed_after_tasks": run["after_tasks"],
            "killed_task": run["victim_task"],
            "rows": len(bodies),
            "lost": len(produced - seen),
            "duplicated": len(bodies) - len(seen),
            "failed_tasks": report["failed_tasks"],
            "executors_seen": report["executors_seen"],
            "executors_at_end": report["executors_at_end"],
            "batch_ms": report["batch_ms"],
            **run["times"],
        }
        print(f"executor kill test: {json.dumps(summary)}")
    yield runs


@pytest.mark.parametrize("sink", SINKS)
def test_executor_killed_mid_batch_on_local_cluster_loses_and_duplicates_nothing(
    killed_copies: Dict[str, Dict[str, Any]], sink: str
) -> None:
    run = killed_copies[sink]
    report, bodies, seen, produced, seed = (
        run["report"],
        run["bodies"],
        run["seen"],
        run["produced"],
        run["seed"],
    )
    lost, unexpected = sorted(produced - seen), sorted(seen - produced)
    # The executor really died in the middle of a task, the driver saw it go, and the query went on
    # without it.
    victim_id, victim_task = run["victim_id"], run["victim_task"]
    assert victim_task in report["failed_task_ids"], (
        f"task {victim_task}, running on the killed executor, did not fail"
    )
    assert victim_id in report["executors_seen"] and victim_id not in report["executors_at_end"]
    assert len(report["batch_ms"]) >= 2
    # Every message once.
    assert lost == [], f"{len(lost)} messages lost, e.g. {lost[:10]} (seed {seed})"
    assert unexpected == [], f"bodies never produced: {unexpected[:10]}"
    assert len(bodies) == len(seen) == len(produced) == CHUNKS * CHUNK
    if sink == "parquet":
        assert len({tuple(p) for p in report["positions"]}) == len(bodies)
