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


"""dev/soak's samples of the driver JVM (threads, heap, metaspace, read with the JDK tools), their
table, and the verdict on whether they stay flat (python/tests/soak.py)."""

from __future__ import annotations

import re
import statistics
import subprocess
from dataclasses import dataclass, field
from typing import Any, Dict, List


@dataclass
class Sample:
    minute: float
    threads: int
    block_manager_pool_threads: int
    rocketmq_threads: int
    mq_client_instances: int
    netty_client_selectors: int
    heap_used_mib: float
    live_heap_mib: float
    metaspace_mib: float
    produced: int
    consumed: int
    delivered: int
    thread_names: Dict[str, int] = field(repr=False)

    @property
    def other_threads(self) -> int:
        return self.threads - self.block_manager_pool_threads


def jcmd(pid: int, *command: str) -> str:
    return subprocess.run(
        ["jcmd", str(pid), *command], capture_output=True, text=True, check=True, timeout=60
    ).stdout


def jstat_gc(pid: int) -> Dict[str, float]:
    out = subprocess.run(
        ["jstat", "-gc", str(pid)], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    header, values = out.strip().splitlines()[-2:]
    return {
        k: float(v.replace(",", "."))
        for k, v in zip(header.split(), values.split(), strict=True)
        if v != "-"
    }


def heap_used_mib(gc: Dict[str, float]) -> float:
    return sum(gc.get(k, 0.0) for k in ("S0U", "S1U", "EU", "OU")) / 1024  # jstat gives KiB


def thread_names(pid: int) -> List[str]:
    return re.findall(r'^"(.*?)"', jcmd(pid, "Thread.print"), flags=re.MULTILINE)


#: Threads of the RocketMQ client (relocated in the assembly, same names) and of the connector's
#: pools.
ROCKETMQ_THREADS = re.compile(
    r"^(NettyClient|NettyEventExecutor|MQClientFactoryScheduledThread|PullMessageService|"
    r"RebalanceService|"
    r"ClientHouseKeepingService|LatencyFaultToleranceScheduledThread|AsyncSenderExecutor|Client_|"
    r"RequestHouseKeepingService|rocketmq-)"
)

#: Spark's two cached thread pools that grow with micro-batches for minutes, up to 100 threads each
#: (the driver's block manager asks and async storage work): bounded by Spark, so the verdict leaves
#: them out.
BLOCK_MANAGER_POOLS = re.compile(r"^block-manager-(ask-thread-pool|storage-async-thread-pool)-\d+$")


def family(name: str) -> str:
    """A thread's name with its numbers taken out: the threads one pool or client creates share
    it."""
    return re.sub(r"\d+", "#", name)


def verdict(samples: List[Sample], warmup_min: float) -> Dict[str, Any]:
    steady = [s for s in samples if s.minute >= warmup_min]
    if len(steady) < 4:
        return {
            "pass": False,
            "reasons": [f"only {len(steady)} samples after the {warmup_min:.1f} min warm-up"],
        }
    end = steady[-1].minute
    window = (
        [s for s in steady if s.minute >= end - 10]
        if end - steady[0].minute >= 20
        else steady[len(steady) // 2 :]
    )
    first = steady[:3]

    def base(attr: str) -> float:
        return float(statistics.median(getattr(s, attr) for s in first))

    checks = {
        # metric: (baseline, highest in the window, the most it may be)
        "threads_outside_block_manager_pools": (
            base("other_threads"),
            max(s.other_threads for s in window),
            base("other_threads") + max(10, 0.05 * base("other_threads")),
        ),
        "rocketmq_threads": (
            base("rocketmq_threads"),
            max(s.rocketmq_threads for s in window),
            base("rocketmq_threads") + 2,
        ),
        "mq_client_instances": (
            base("mq_client_instances"),
            max(s.mq_client_instances for s in window),
            base("mq_client_instances"),
        ),
        "netty_client_selectors": (
            base("netty_client_selectors"),
            max(s.netty_client_selectors for s in window),
            base("netty_client_selectors"),
        ),
        "live_heap_mib": (
            base("live_heap_mib"),
            max(s.live_heap_mib for s in window),
            base("live_heap_mib") * 1.25 + 16,
        ),
        "metaspace_mib": (
            base("metaspace_mib"),
            max(s.metaspace_mib for s in window),
            base("metaspace_mib") * 1.05 + 8,
        ),
    }
    reasons = [
        f"{name}: {top:g} in the last window, over the band (baseline {b:g}, at most {limit:g})"
        for name, (b, top, limit) in checks.items()
        if top > limit
    ]
    if window[-1].consumed <= window[0].consumed:
        reasons.append(
            f"the query did not consume in the last window ({window[0].consumed} -> "
            f"{window[-1].consumed})"
        )
    return {
        "pass": not reasons,
        "reasons": reasons,
        "window_from_minute": window[0].minute,
        "checks": {
            k: {"baseline": b, "window_max": t, "limit": round(lim, 1)}
            for k, (b, t, lim) in checks.items()
        },
    }


HEADER = (
    f"{'min':>6} {'threads':>7} {'bmPools':>7} {'rmqThr':>6} {'mqClients':>9} {'nettySel':>8} "
    f"{'heapMiB':>8} {'liveMiB':>8} {'metaMiB':>8} {'produced':>9} {'consumed':>9} {'delivered':>9}"
)


def row(s: Sample) -> str:
    return (
        f"{s.minute:6.1f} {s.threads:7d} {s.block_manager_pool_threads:7d} {s.rocketmq_threads:6d} "
        f"{s.mq_client_instances:9d} {s.netty_client_selectors:8d} "
        f"{s.heap_used_mib:8.1f} {s.live_heap_mib:8.1f} {s.metaspace_mib:8.1f} "
        f"{s.produced:9d} {s.consumed:9d} {s.delivered:9d}"
    )
