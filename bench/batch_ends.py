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

"""Each batch end of a real-time bench run, from what
``BENCH_REALTIME_DUMP=<folder> dev/bench --sections realtime`` left in the folder: the phases Spark
timed at the end of the batch (offset log, commit log), the time between the batch's trigger and the
next one's, the next batch's planning, and the longest gap in the stored times of the copies around
it (the rows held up). Usage: ``python3 bench/batch_ends.py [--windows SECONDS] <folder>/*.json``;
with ``--windows`` it prints instead p50 / p95 / p99 / max of the copies' latency in each window of
that many seconds of the producer's time (how a run settles after its start, where its tail
sits)."""

from __future__ import annotations

import json
import sys
from datetime import datetime, timezone
from typing import Any, Dict, List, Tuple

# A batch end's gap in the stored times is looked for from this long before its trigger ends to this
# long after.
BEFORE_MS, AFTER_MS = 3000, 1500


def epoch_ms(timestamp: str) -> int:
    """A progress report's ``timestamp`` (``2026-11-27T04:27:53.207Z``) in epoch milliseconds."""
    parsed = datetime.strptime(timestamp.rstrip("Z"), "%Y-%m-%dT%H:%M:%S.%f").replace(
        tzinfo=timezone.utc
    )
    return int(parsed.timestamp() * 1000)


def gaps(stored: List[int]) -> List[Tuple[int, int]]:
    """(time, length) of each gap between consecutive stored times, in order."""
    return [(a, b - a) for a, b in zip(stored, stored[1:], strict=False) if b > a]


def batch_ends(dump: Dict[str, Any]) -> List[Dict[str, Any]]:
    """One line per batch end that has a batch after it."""
    reports = sorted(dump["progress"], key=lambda p: p["batchId"])
    stored = sorted(s for _, s in dump["copies"])
    all_gaps = gaps(stored)
    ends = []
    for report, following in zip(reports, reports[1:], strict=False):
        phases = report["durationMs"]
        trigger_end = epoch_ms(report["timestamp"]) + phases.get("triggerExecution", 0)
        near = [g for g in all_gaps if trigger_end - BEFORE_MS <= g[0] <= trigger_end + AFTER_MS]
        longest = max(near, key=lambda g: g[1], default=(trigger_end, 0))
        ends.append(
            {
                "batch": report["batchId"],
                "walCommit": phases.get("walCommit"),
                "commitOffsets": phases.get("commitOffsets"),
                "betweenTriggers": epoch_ms(following["timestamp"]) - trigger_end,
                "nextPlanning": following["durationMs"].get("queryPlanning"),
                "gapMs": longest[1],
                "gapStartVsTriggerEnd": longest[0] - trigger_end,
            }
        )
    return ends


def windows(dump: Dict[str, Any], seconds: float) -> List[Dict[str, Any]]:
    """Latency percentiles (nearest rank) of the copies produced in each window of `seconds` from
    the first."""
    copies = dump["copies"]
    first = min(produced for produced, _ in copies)
    latencies: Dict[int, List[int]] = {}
    for produced, stored in copies:
        latencies.setdefault(int((produced - first) // (seconds * 1000)), []).append(
            stored - produced
        )
    rows = []
    for window in sorted(latencies):
        values = sorted(latencies[window])
        n = len(values)
        rows.append(
            {
                "fromS": window * seconds,
                "copies": n,
                "p50": values[(n - 1) // 2],
                "p95": values[int(0.95 * (n - 1))],
                "p99": values[int(0.99 * (n - 1))],
                "max": values[-1],
            }
        )
    return rows


def main() -> None:
    args = sys.argv[1:]
    window_s = None
    if args[:1] == ["--windows"]:
        window_s, args = float(args[1]), args[2:]
    for path in args:
        with open(path) as f:
            dump = json.load(f)
        run = dump["run"]
        print(
            f"{path}: {run['system']} {run['query']}, {run['batch']} batches, "
            f"{len(dump['copies'])} copies"
        )
        for row in windows(dump, window_s) if window_s else batch_ends(dump):
            print("  " + ", ".join(f"{k} {v}" for k, v in row.items()))


if __name__ == "__main__":
    main()
