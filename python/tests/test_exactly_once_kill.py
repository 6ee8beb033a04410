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

"""Exactly-once writes through driver crashes: a RocketMQ -> RocketMQ stream with
deliveryGuarantee=exactly_once whose driver process is killed with SIGKILL four times at random
points of its progress, over a source that holds 48,000 messages at the start and keeps receiving
more (at least 24,000 rows are committed through the kills) (test_driver_kill.py's kill points: a
batch planned, or committed, by turns, each twice). In the second cycle the driver instead halts
right after recording a batch's decision and before committing any of its half messages (its
checkpoint on it-tests' DecisionHaltFileSystem, which ends the JVM once the decision is written):
only the broker's check-back, answered by a later run from the decisions beside the checkpoint, can
make that batch visible, and the batch Spark runs again must not be. A last run then stays up until
an independent consumer (the plain pull client: committed messages only) finds every message
produced in the target topic, and none twice.

ROCKETMQ_KILL_SEED=<seed> replays the kill points, as in test_driver_kill.py.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import time
from pathlib import Path
from typing import Any, Dict, List

from embedded_rocketmq import REPO_ROOT, EmbeddedRocketMQProcess, unique_topic
from rocketmq_spark import jar_path
from spark_processes import kill_process_group, spark_env, submit_command, wait_until
from test_driver_kill import (
    DRAIN_MAX_OFFSETS_PER_TRIGGER,
    QUEUES,
    SCRIPT,
    Producer,
    driver_command,
    last_batch,
    start_and_kill,
    tail,
)

# Four kills (the kill points by turns: a batch planned, a batch committed) and the halt. Each kill
# is a driver's start (about 13 s here): nine cycles (eight kills, each kind four times) took 180 s
# of the test gate.
CYCLES = 5
# The source holds this many messages before the first cycle, read EO_MAX_OFFSETS a micro-batch:
# eight full batches, while every cycle commits at least one (five to ten in practice), so at least
# the (CYCLES - 1) batches THROUGH_KILLS counts are full; what is left when the kills end, the last
# run reads (a larger prefill only made it longer). (Batches of 10,000 were tried: the embedded
# broker's TransactionalOpBatchService then spun at a full core, see the stop-33 note.)
PREFILL = 48_000
EO_MAX_OFFSETS = 6000
# The halt comes second (the first cycle commits what it needs to stand on): the broker asks about
# its half messages while the later cycles run, and any run after it answers from the decisions.
HALT_CYCLE = 2
# Each killed cycle commits at least one full micro-batch (EO_MAX_OFFSETS rows) before its kill
# point.
THROUGH_KILLS = (CYCLES - 1) * EO_MAX_OFFSETS
# The halt's file system, alone in a jar that `build/sbt itTests/exportHarnessClasspath` writes.
HALT_FS_JAR = REPO_ROOT / "it-tests" / "target" / "decision-halt-fs.jar"
HALT_FS_CLASS = "org.apache.spark.sql.rocketmq.DecisionHaltFileSystem"
HALT_FS_SCHEME = "decisionhalt"
# The broker checks back every 5 s for this test, and keeps a half message for 40 rounds (over 3
# min: the runs that answer it start and stop meanwhile). The sink's transactionTimeout
# (kill_driver_stream.py) is 10 s, the connector's floor of two check intervals: each check round
# copies the half messages still within it, so a longer one (or a shorter interval) copies them more
# often (at 2 s, tens of thousands a minute, which slowed the drivers' commits).
BROKER_CHECKS = {"transactionCheckInterval": "5000", "transactionCheckMax": "40"}
# RocketMQ 5's defaults, which the other tests of the session's broker see.
BROKER_DEFAULT_CHECKS = {"transactionCheckInterval": "30000", "transactionCheckMax": "15"}
# The last run starts (about 13 s), reads what is left, and answers the halted batch's check-back.
CHECK_BACK_DEADLINE_S = 120


def halt_after_decision(
    cycle: int, name_server: str, topic: str, sink: str, checkpoint: Path, tmp_path: Path
) -> Dict[str, Any]:
    """Starts the driver so that it halts after recording the decision of the batch after next
    (after it has committed one batch since it started), and checks that it did: the decision is
    beside the checkpoint, and Spark's commit log does not have the batch."""
    target = last_batch(checkpoint / "commits") + 2
    log = tmp_path / f"driver-{cycle}-halt.log"
    if not HALT_FS_JAR.exists():
        raise RuntimeError(
            f"{HALT_FS_JAR} is missing: build it with `build/sbt itTests/exportHarnessClasspath`"
        )
    # The same checkpoint, through the file system that halts the JVM once the decision is written.
    command = submit_command(
        "local[2]",
        jar_path(),
        SCRIPT,
        name_server,
        topic,
        sink,
        f"{HALT_FS_SCHEME}://{checkpoint}",
        str(EO_MAX_OFFSETS),
        "run",
        driver_memory="512m",
        driver_java_options="-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
        conf={
            "spark.driver.extraClassPath": str(HALT_FS_JAR),
            f"spark.hadoop.fs.{HALT_FS_SCHEME}.impl": HALT_FS_CLASS,
            f"spark.hadoop.fs.{HALT_FS_SCHEME}.epoch": str(target),
        },
    )
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            command,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=spark_env(full_jit=True),
            start_new_session=True,
        )
    try:
        wait_until(
            f"cycle {cycle}: the driver halts after deciding batch {target} ({log})",
            lambda: proc.poll() is not None,
            timeout_s=240,
        )
    finally:
        kill_process_group(proc)  # the Python driver outlives its JVM
    assert proc.returncode == 137, (
        f"cycle {cycle}: the driver ended with {proc.returncode}:\n{tail(log)}"
    )
    assert (checkpoint / "rocketmq-sink" / "decisions" / str(target)).exists()
    assert last_batch(checkpoint / "commits") < target
    return {
        "cycle": cycle,
        "kill_point": f"halt after the decision of batch {target}",
        "exit": proc.returncode,
    }


def read_until_complete(
    rocketmq: EmbeddedRocketMQProcess,
    topic: str,
    produced: set,
    driver: "subprocess.Popen[bytes]",
    log: Path,
) -> List[str]:
    """The target topic's bodies once it holds every message produced (the halted batch's after its
    check-back), while ``driver`` keeps running."""
    holder: Dict[str, List[str]] = {"bodies": []}

    def complete() -> bool:
        if driver.poll() is not None:
            raise AssertionError(f"the last driver exited ({driver.returncode}):\n{tail(log)}")
        holder["bodies"] = rocketmq.bodies(topic)
        return set(holder["bodies"]) >= produced

    try:
        wait_until(
            f"every produced message in {topic}",
            complete,
            timeout_s=CHECK_BACK_DEADLINE_S,
            poll_s=2,
        )
    except TimeoutError as timed_out:
        missing = sorted(produced - set(holder["bodies"]))
        raise AssertionError(
            f"{timed_out}: {len(missing)} of {len(produced)} missing, e.g. {missing[:10]}; "
            f"the last driver's log ends:\n{tail(log)}"
        ) from None
    return holder["bodies"]


def test_exactly_once_sink_through_four_driver_kills_and_a_halt(rocketmq, tmp_path: Path) -> None:
    for key, value in BROKER_CHECKS.items():
        rocketmq.set_broker_setting(key, value)
    try:
        run_kills_and_halt(rocketmq, tmp_path)
    finally:
        for key, value in BROKER_DEFAULT_CHECKS.items():
            rocketmq.set_broker_setting(key, value)


def run_kills_and_halt(rocketmq: EmbeddedRocketMQProcess, tmp_path: Path) -> None:
    seed = int(os.environ.get("ROCKETMQ_KILL_SEED", random.SystemRandom().randrange(2**32)))
    rng = random.Random(seed)
    print(
        f"exactly-once kill test: seed {seed} (ROCKETMQ_KILL_SEED={seed} replays the kill points)"
    )
    source, target = unique_topic("eo-in"), unique_topic("eo-out")
    rocketmq.create_topic(source, queues=QUEUES)
    rocketmq.create_topic(target, queues=QUEUES)
    sink, checkpoint = f"rocketmq://{target}", tmp_path / "checkpoint"
    halt_cycle = HALT_CYCLE
    cycles: List[Dict[str, Any]] = []
    started = time.monotonic()
    rocketmq.send(source, PREFILL, "pre-")
    producer = Producer(rocketmq, source)
    producer.start()
    try:
        for cycle in range(1, CYCLES + 1):
            if cycle == halt_cycle:
                cycles.append(
                    halt_after_decision(
                        cycle, rocketmq.name_server, source, sink, checkpoint, tmp_path
                    )
                )
            else:
                kills = sum(1 for c in cycles if c["exit"] == -9)
                cycles.append(
                    start_and_kill(
                        cycle,
                        rng,
                        rocketmq.name_server,
                        source,
                        sink,
                        checkpoint,
                        tmp_path,
                        max_offsets=EO_MAX_OFFSETS,
                        kill_number=kills
                        + 1,  # the kill points by turns around the halt: each twice
                    )
                )
            print(f"exactly-once kill test: {cycles[-1]}")
    finally:
        produced = producer.finish() | {f"pre-{i}" for i in range(PREFILL)}
    kills_done = time.monotonic()
    through_kills = len(rocketmq.bodies(target))

    # A last run that stays up, as a stream does: it reads what is left, and it is the producer of
    # the transaction group that the broker asks about the half messages the halted cycle decided
    # but never committed.
    log = tmp_path / "driver-last.log"
    with open(log, "wb") as out:
        last = subprocess.Popen(
            driver_command(
                rocketmq.name_server, source, sink, checkpoint, DRAIN_MAX_OFFSETS_PER_TRIGGER, "run"
            ),
            stdout=out,
            stderr=subprocess.STDOUT,
            env=spark_env(full_jit=True),
            start_new_session=True,
        )
    try:
        bodies = read_until_complete(rocketmq, target, produced, last, log)
    finally:
        kill_process_group(last)
    finished = time.monotonic()

    seen = set(bodies)
    summary = {
        "seed": seed,
        "produced": len(produced),
        "rows": len(bodies),
        "duplicated": len(bodies) - len(seen),
        "unexpected": len(seen - produced),
        "batches": last_batch(checkpoint / "commits") + 1,
        "decisions": len(
            [f for f in (checkpoint / "rocketmq-sink" / "decisions").iterdir() if f.name.isdigit()]
        ),
        "committed_through_kills": through_kills,
        "kill_cycles_s": round(kills_done - started, 1),
        "last_run_until_complete_s": round(finished - kills_done, 1),
    }
    print(f"exactly-once kill test: {json.dumps(summary)}")
    (tmp_path / "summary.json").write_text(
        json.dumps({"summary": summary, "cycles": cycles}, indent=1)
    )
    assert sorted(seen - produced) == [], f"bodies never produced: {sorted(seen - produced)[:10]}"
    assert len(bodies) == len(seen), f"{len(bodies) - len(seen)} rows duplicated (seed {seed})"
    assert len(cycles) == CYCLES
    assert through_kills >= THROUGH_KILLS, (
        f"only {through_kills} rows were committed while drivers were killed"
    )
