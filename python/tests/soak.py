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

"""Soak run (not part of the tests; run it with dev/soak): a steady stream of messages through a
streaming query for N minutes, with the driver JVM sampled every 30 s for leaks.

The embedded RocketMQ runs as a process; a producer thread sends ``--rate`` messages per second to
an 8-queue topic; a spark-submit (local[2], so the driver JVM also runs every task and holds every
RocketMQ client) runs scripts/soak_stream.py: RocketMQ -> RocketMQ (default) or RocketMQ -> Parquet.
Each sample reads the driver JVM from outside with the JDK tools: its thread count and thread names
(``jcmd Thread.print``), heap in use, the live heap (old generation after a full GC) and metaspace
(``jstat -gc``, ``jcmd GC.run``), and counts RocketMQ client threads and instances by name: one
``MQClientFactoryScheduledThread`` per MQClientInstance, one ``NettyClientSelector_*`` per remoting
client.

Verdict: PASS if over the last 10 minutes (the second half of the steady samples in a run shorter
than 20 minutes) these stay within a small band of the first steady values (after the warm-up,
default 5 minutes): thread count (Spark's two block-manager pools aside, which grow for minutes up
to their cap of 100 threads each), RocketMQ client threads and instances, live heap (old generation
after a full GC) and metaspace; the query keeps consuming; and once the producer stops the query
catches up and the sink holds every message (at least once). Writes the table and samples to --out.

With ``--cluster`` the harness is a RocketMQ cluster (``dev/rocketmq-harness --cluster``: five
broker JVMs in three groups, one in controller mode), the topics live on every group, and every
``--kill-every`` minutes the classic master ``a-master`` is SIGKILLed, left down ``--down-seconds``
(its replica serves reads, the producer and the sink write to the other groups) and started again on
its store. With the sink option ``deliveryGuarantee=exactly_once`` the verdict also requires every
produced body in the sink exactly once.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import Any, Dict, List, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))

from embedded_rocketmq import REPO_ROOT, EmbeddedRocketMQProcess, unique_topic  # noqa: E402
from soak_processes import Harness, MasterKiller, Producer, Query  # noqa: E402
from soak_samples import (  # noqa: E402
    BLOCK_MANAGER_POOLS,
    HEADER,
    ROCKETMQ_THREADS,
    Sample,
    family,
    heap_used_mib,
    jcmd,
    jstat_gc,
    row,
    thread_names,
    verdict,
)
from spark_processes import submit_command, wait_until  # noqa: E402

SCRIPT = Path(__file__).resolve().parent / "scripts" / "soak_stream.py"
MIB = 1024 * 1024


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--minutes", type=float, default=30, help="how long to produce and sample (default 30)"
    )
    parser.add_argument(
        "--interval", type=float, default=30, help="seconds between samples (default 30)"
    )
    parser.add_argument(
        "--warmup",
        type=float,
        default=None,
        help="minutes before the baseline (default 5, a third of shorter runs)",
    )
    parser.add_argument(
        "--rate", type=int, default=200, help="messages per second produced (default 200)"
    )
    parser.add_argument("--sink", choices=("rocketmq", "parquet"), default="rocketmq")
    parser.add_argument("--max-offsets-per-trigger", type=int, default=2000)
    parser.add_argument("--trigger", default="1 second", help="the query's processing-time trigger")
    parser.add_argument(
        "--source-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a connector option of the source",
    )
    parser.add_argument(
        "--sink-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an option of the RocketMQ sink",
    )
    parser.add_argument(
        "--out", type=Path, default=None, help="results directory (default it-tests/target/soak-*)"
    )
    parser.add_argument(
        "--cluster",
        action="store_true",
        help="a cluster harness, its classic master killed in turns",
    )
    parser.add_argument(
        "--kill-every", type=float, default=5, help="with --cluster: minutes between kills (5)"
    )
    parser.add_argument(
        "--down-seconds",
        type=float,
        default=30,
        help="with --cluster: seconds each kill lasts (30)",
    )
    args = parser.parse_args()
    exactly_once = "deliveryGuarantee=exactly_once" in args.sink_option
    # Spark's own cached thread pools (block-manager-*) take a few minutes of micro-batches to reach
    # their size.
    warmup = args.warmup if args.warmup is not None else min(5.0, args.minutes / 3)
    out = args.out or REPO_ROOT / "it-tests" / "target" / f"soak-{time.strftime('%Y%m%d-%H%M%S')}"
    out.mkdir(parents=True, exist_ok=True)
    print(
        f"dev/soak: {args.minutes:g} min, a sample every {args.interval:g} s, {args.rate} msg/s, "
        f"sink {args.sink}"
    )
    print(f"dev/soak: results and logs in {out}")

    harness_args = ["--cluster"] if args.cluster else []
    process = EmbeddedRocketMQProcess(log_path=out / "rocketmq.log", args=harness_args).start(
        timeout_s=300
    )
    harness = Harness(process)
    source, sink_topic = unique_topic("soak-src"), unique_topic("soak-dst")
    process.create_topic(source, queues=8)
    if args.sink == "rocketmq":
        process.create_topic(sink_topic, queues=4)
        sink = f"rocketmq:{sink_topic}"
    else:
        sink = f"parquet:{out / 'sink'}"
    shutil.rmtree(out / "checkpoint", ignore_errors=True)
    (out / "stop").unlink(missing_ok=True)
    command = submit_command(
        # A task that fails (an exactly-once send left unanswered by a killed master) runs again, as
        # on a cluster with Spark's default spark.task.maxFailures of 4; local mode's default allows
        # no retry.
        "local[2,4]" if args.cluster else "local[2]",
        str(_jar()),
        SCRIPT,
        process.name_server,
        source,
        sink,
        str(out / "checkpoint"),
        str(args.max_offsets_per_trigger),
        args.trigger,
        str(out / "stop"),
        *(f"source:{o}" for o in args.source_option),
        *(f"sink:{o}" for o in args.sink_option),
        driver_memory="1g",
    )
    producer = Producer(harness, source, args.rate)
    killer = (
        MasterKiller(harness, "a-master", args.kill_every * 60, args.down_seconds)
        if args.cluster
        else None
    )
    samples: List[Sample] = []
    query: Optional[Query] = None
    result: Dict[str, Any] = {}
    failure: Optional[str] = None
    try:
        query = Query(command, out / "driver.log", out / "stop")
        wait_until(
            "the soak query to start", lambda: query.started.is_set() or not query.alive(), 300, 0.5
        )
        if not query.alive():
            raise RuntimeError(
                f"the driver exited ({query.proc.returncode}); see {out / 'driver.log'}"
            )
        producer.start()
        if killer is not None:
            killer.start()
        pid = query.proc.pid  # spark-submit execs the JVM: this is the driver JVM
        print(HEADER, flush=True)
        began = time.monotonic()
        next_sample = began
        while True:
            # Until the next sample is due (every --interval seconds), unless the driver exits
            # first.
            try:
                query.proc.wait(timeout=max(0.0, next_sample - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            if not query.alive():
                failure = (
                    f"the driver exited ({query.proc.returncode}) after {len(samples)} samples; "
                    "see driver.log"
                )
                break
            if producer.error is not None:
                failure = f"producing failed: {producer.error!r}"
                break
            if killer is not None and killer.error is not None:
                failure = f"killing or restarting a broker failed: {killer.error!r}"
                break
            names = thread_names(pid)
            used = heap_used_mib(jstat_gc(pid))
            jcmd(pid, "GC.run")
            after = jstat_gc(pid)
            sample = Sample(
                minute=round((time.monotonic() - began) / 60, 2),
                threads=len(names),
                block_manager_pool_threads=sum(bool(BLOCK_MANAGER_POOLS.match(n)) for n in names),
                rocketmq_threads=sum(bool(ROCKETMQ_THREADS.match(n)) for n in names),
                mq_client_instances=sum(
                    n.startswith("MQClientFactoryScheduledThread") for n in names
                ),
                netty_client_selectors=sum(n.startswith("NettyClientSelector") for n in names),
                heap_used_mib=round(used, 1),
                # What survives a full GC sits in the old generation; eden refills at once (tasks
                # keep running).
                live_heap_mib=round(
                    (after.get("OU", 0.0) + after.get("S0U", 0.0) + after.get("S1U", 0.0)) / 1024, 1
                ),
                metaspace_mib=round(after.get("MU", 0.0) / 1024, 1),
                produced=producer.sent,
                consumed=query.consumed,
                delivered=harness.stored(sink_topic) if args.sink == "rocketmq" else query.consumed,
                thread_names=dict(Counter(family(n) for n in names)),
            )
            samples.append(sample)
            print(row(sample), flush=True)
            if sample.minute >= args.minutes:
                break
            next_sample += args.interval

        producer.stop_event.set()
        producer.join(timeout=60)
        if killer is not None:
            killer.stop_event.set()
            killer.join(timeout=180)  # a broker killed last is started again first
        produced = producer.sent
        # Once nothing new arrives, the query catches up with everything produced.
        caught_up = failure is None
        try:
            if caught_up:
                wait_until("the query to catch up", lambda: query.consumed >= produced, 300, 1)
        except TimeoutError:
            caught_up = False
        delivered = harness.stored(sink_topic) if args.sink == "rocketmq" else query.consumed
        result = verdict(samples, warmup)
        if failure is not None:
            result["pass"] = False
            result["reasons"].insert(0, failure)
        elif not caught_up:
            result["pass"] = False
            result["reasons"].append(f"the query consumed {query.consumed} of {produced} messages")
        if delivered < produced:
            result["pass"] = False
            result["reasons"].append(
                f"the sink holds {delivered} messages, fewer than the {produced} produced"
            )
        if exactly_once and args.sink == "rocketmq" and caught_up:
            # Every body the producer sent ("s<round>-<i>"), once: nothing lost, nothing twice.
            try:
                wait_until(
                    "the sink to hold every message",
                    lambda: harness.stored(sink_topic) >= produced,
                    300,
                    1,
                )
            except TimeoutError:
                pass  # counted as missing below
            found = Counter(harness.bodies(sink_topic))
            twice = sum(n - 1 for n in found.values() if n > 1)
            per_round = producer.per_round
            expected = {f"s{r}-{i}" for r in range(produced // per_round) for i in range(per_round)}
            missing = len(expected - set(found))
            result.update(duplicates=twice, missing=missing)
            if twice or missing:
                result["pass"] = False
                result["reasons"].append(
                    f"exactly-once sink: {missing} bodies missing, {twice} twice"
                )
            delivered = sum(found.values())
        if killer is not None:
            result["master_kills"] = killer.kills
        result.update(
            produced=produced, consumed=query.consumed, delivered=delivered, batches=query.batches
        )
    finally:
        producer.stop_event.set()
        if killer is not None:
            killer.stop_event.set()
        if query is not None:
            code = query.stop()
            result["driver_exit"] = code
            if failure is None and (code != 0 or not query.stopped_cleanly):
                result["pass"] = False
                result.setdefault("reasons", []).append(
                    f"the driver did not stop cleanly (exit {code})"
                )
        process.stop()

    if samples:
        # Which thread families grew from the first steady sample to the last (empty when flat).
        steady = [s for s in samples if s.minute >= warmup] or samples
        first, last = Counter(steady[0].thread_names), Counter(steady[-1].thread_names)
        result["thread_families_changed"] = {
            k: [first[k], last[k]] for k in sorted(set(first) | set(last)) if first[k] != last[k]
        }
    table = "\n".join([HEADER, *(row(s) for s in samples)])
    (out / "table.txt").write_text(table + "\n")
    (out / "samples.json").write_text(
        json.dumps(
            {
                "args": {k: str(v) for k, v in vars(args).items()},
                "samples": [asdict(s) for s in samples],
            }
        )
    )
    (out / "verdict.json").write_text(json.dumps(result, indent=1))
    print(json.dumps({k: v for k, v in result.items() if k != "checks"}))
    for name, check in result.get("checks", {}).items():
        print(
            f"  {name}: baseline {check['baseline']:g}, last-window max {check['window_max']:g}",
            end="",
        )
        print(f" (limit {check['limit']:g})")
    print(
        "dev/soak: "
        + ("PASS" if result.get("pass") else "FAIL: " + "; ".join(result.get("reasons", [])))
    )
    return 0 if result.get("pass") else 1


def _jar() -> Path:
    jars = sorted(
        (REPO_ROOT / "connector" / "target" / "scala-2.13").glob(
            "rocketmq-spark-connector-assembly_2.13-*.jar"
        )
    )
    if not jars:
        raise SystemExit("no assembly jar: run build/sbt connector/assembly")
    return jars[-1]


if __name__ == "__main__":
    sys.exit(main())
