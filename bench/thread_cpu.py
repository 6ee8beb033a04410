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

"""Where a running JVM's CPU goes, by thread: ``python3 bench/thread_cpu.py <pid> [seconds]`` reads
Linux's ``/proc/<pid>/task/*`` twice, ``seconds`` apart (30 by default), and prints for each kind of
thread (the name without its trailing number: the RocketMQ client's ``NettyClientSelector_``,
Spark's ``Executor task launch worker``...) how many there are, the percent of one core each part of
the interval spent in user mode and in the kernel (system time), and how often a second they gave up
the core (voluntary context switches: waiting, woken by another thread or the network) and had it
taken (involuntary: the cores were busy). Run it during a bench run, on the PySpark JVM
(``pgrep -f pyspark-shell``) or a broker's."""

from __future__ import annotations

import os
import re
import sys
import time
from collections import defaultdict
from typing import Dict, List, Tuple

# Linux's user-visible clock tick: /proc reports CPU time in 1/100 s.
TICKS_PER_SECOND = 100
TRAILING_NUMBER = re.compile(r"[-_ #]?\d+$")


def snapshot(pid: int) -> Dict[str, Tuple[str, List[int]]]:
    """Thread id -> (name, [user ticks, system ticks, voluntary switches, involuntary switches])."""
    threads = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                stat = f.read()
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                status = f.read()
        except FileNotFoundError:  # the thread ended meanwhile
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        # Fields 14 and 15 (utime, stime), counted after the name's closing parenthesis (field 2).
        after = stat[stat.rindex(")") + 2 :].split()
        switches = [
            int(re.search(rf"^{kind}_ctxt_switches:\s+(\d+)", status, re.M).group(1))
            for kind in ("voluntary", "nonvoluntary")
        ]
        threads[tid] = (name, [int(after[11]), int(after[12])] + switches)
    return threads


def by_kind(
    before: Dict[str, Tuple[str, List[int]]], after: Dict[str, Tuple[str, List[int]]]
) -> Dict[str, List[int]]:
    """Kind of thread -> [threads, user ticks, system ticks, voluntary, involuntary] over the
    interval."""
    kinds: Dict[str, List[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])
    for tid, (name, now) in after.items():
        then = before[tid][1] if tid in before else [0, 0, 0, 0]
        row = kinds[TRAILING_NUMBER.sub("", name)]
        row[0] += 1
        for i in range(4):
            row[i + 1] += now[i] - then[i]
    return kinds


def main() -> None:
    pid = int(sys.argv[1])
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 30.0
    before = snapshot(pid)
    time.sleep(seconds)  # the interval measured, not a wait for a condition
    kinds = by_kind(before, snapshot(pid))
    print(
        f"{'threads (name without its number)':36} {'n':>4} {'user %':>7} {'system %':>9} "
        f"{'vol/s':>8} {'invol/s':>8}"
    )
    rows = sorted(kinds.items(), key=lambda kv: -(kv[1][1] + kv[1][2]))
    total = [sum(row[i] for _, row in rows) for i in range(5)]
    for kind, row in rows + [("all threads", total)]:
        if row[1] + row[2] == 0 and kind != "all threads":
            continue
        user, system = (100.0 * row[i] / TICKS_PER_SECOND / seconds for i in (1, 2))
        print(
            f"{kind[:36]:36} {row[0]:4d} {user:7.1f} {system:9.1f} {row[3] / seconds:8.0f} "
            f"{row[4] / seconds:8.0f}"
        )


if __name__ == "__main__":
    main()
