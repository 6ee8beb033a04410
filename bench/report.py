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

"""Turns a results file of the bench (Bench.scala) into a PNG chart and a Markdown table.

Usage: python bench/report.py <results.json> --chart <out.png> [--table <out.md>]
"""

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SYSTEMS = {"rocketmq": "RocketMQ", "kafka": "Kafka"}
COLOURS = {"rocketmq": "#d9534f", "kafka": "#337ab7"}
# Spark's floor: the latency query on Spark's own socket source, no broker
# (LatencyBench.measureSparkFloor).
FLOOR = "spark"
FLOOR_TITLE = "Spark alone (socket source)"


def figures(results: dict) -> dict:
    return {(f["section"], f["name"], f["system"]): f for f in results["figures"]}


def value(f: dict) -> str:
    def fmt(v: float) -> str:
        if f["unit"] == "msg/s":
            return f"{v / 1000:.1f}k"
        return f"{v:.0f}" if v >= 100 else f"{v:.1f}"

    unit = "" if f["unit"] == "msg/s" else f" {f['unit']}"
    spread = f" ({fmt(f['min'])}–{fmt(f['max'])})" if len(f["runs"]) > 1 else ""
    return f"{fmt(f['median'])}{unit}{spread}"


def table(results: dict) -> str:
    """One row per figure name: RocketMQ's, Kafka's, their ratio where both exist, and Spark's floor
    if measured."""
    by_key = figures(results)
    names = []
    for f in results["figures"]:
        if (f["section"], f["name"]) not in names:
            names.append((f["section"], f["name"]))
    floor = any(f["system"] == FLOOR for f in results["figures"])
    extra = f" {FLOOR_TITLE} |" if floor else ""
    lines = [
        f"| | figure | RocketMQ | Kafka | RocketMQ ÷ Kafka |{extra}",
        "|---|---|---|---|---|" + ("---|" if floor else ""),
    ]
    for section, name in names:
        r = by_key.get((section, name, "rocketmq"))
        k = by_key.get((section, name, "kafka"))
        ratio = f"{r['median'] / k['median']:.2f}" if r and k and k["median"] else ""
        row = (
            f"| {section} | {name} | {value(r) if r else ''} | {value(k) if k else ''} | {ratio} |"
        )
        if floor:
            s = by_key.get((section, name, FLOOR))
            row += f" {value(s) if s else ''} |"
        lines.append(row)
    m, v, s = results["machine"], results["versions"], results["settings"]
    lines.append("")
    lines.append(
        f"Measured {results['finished'][:10]} on {m['cpu']}, {m['cores']} cores, "
        f"{m['memoryBytes'] / 2**30:.0f} GiB, {m['java']}; Spark {v['spark']} "
        f"`{s['sparkMaster']}`, "
        f"RocketMQ {v['rocketmq']}, Kafka broker {s['kafkaBroker']} (clients {v['kafkaClients']}); "
        f"{s['messages']} messages of {s['bodyBytes']} bytes, {s['queues']} queues, median of "
        f"{s['runs']} runs "
        "(range in brackets)."
    )
    if any(f["section"] == "realtime" for f in results["figures"]):
        lines.append("")
        lines.append(
            f"realtime: pyspark {s.get('realTimePyspark', '?')} "
            f"`{s.get('realTimeSparkMaster', '?')}` on "
            f"{m['cores']} cores, {s.get('realTimeQueues', '?')} queues, real-time batches of "
            f"{s.get('realTimeBatch', '?')}, {s.get('realTimeSecondsPerRun', '?')} s measured a "
            "run "
            f"(rates {s.get('realTimeRatesPerSecond', '?')} msg/s), one run each."
        )
    return "\n".join(lines) + "\n"


def bars(ax, results: dict, section: str, title: str) -> None:
    """Grouped bars of every figure of `section` that both systems have, plus those of one system
    alone."""
    chosen = [f for f in results["figures"] if f["section"] == section]
    names = list(dict.fromkeys(f["name"] for f in chosen))
    width = 0.4
    for i, system in enumerate(SYSTEMS):
        xs, heights, lower, upper = [], [], [], []
        for j, name in enumerate(names):
            f = next((f for f in chosen if f["name"] == name and f["system"] == system), None)
            if f:
                xs.append(j + (i - 0.5) * width)
                heights.append(f["median"] / 1000)
                lower.append((f["median"] - f["min"]) / 1000)
                upper.append((f["max"] - f["median"]) / 1000)
        ax.bar(
            xs,
            heights,
            width,
            yerr=[lower, upper],
            label=SYSTEMS[system],
            color=COLOURS[system],
            capsize=3,
        )
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=30, ha="right", fontsize=7)
    ax.set_ylabel("thousand messages / s")
    ax.set_title(title)
    ax.legend(fontsize=8)


def latency(ax, results: dict) -> None:
    """p50, p95, p99 at trigger 0 with Spark's default checkpoint files: each system, and Spark's
    floor if measured."""
    chosen = [
        f
        for f in results["figures"]
        if f["section"] == "latency"
        and f["name"].startswith("produce to foreachBatch")
        and f["name"].endswith("/s)")
    ]
    labels = list(dict.fromkeys(f["name"].split(" ")[3] for f in chosen))  # p50, p95, p99
    shown = {**SYSTEMS, FLOOR: FLOOR_TITLE}
    colours = {**COLOURS, FLOOR: "#999999"}
    present = [system for system in shown if any(f["system"] == system for f in chosen)]
    width = 0.8 / max(1, len(present))
    for i, system in enumerate(present):
        values = [f["median"] for f in chosen if f["system"] == system]
        ax.bar(
            [j + (i - (len(present) - 1) / 2) * width for j in range(len(values))],
            values,
            width,
            label=shown[system],
            color=colours[system],
        )
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels)
    ax.set_ylabel("ms")
    ax.set_title("produce → foreachBatch, trigger 0")
    ax.legend(fontsize=8)


def planning(ax, results: dict) -> None:
    for system in SYSTEMS:
        points = [
            (int(f["name"].split(" ")[4]), f["median"])
            for f in results["figures"]
            if f["section"] == "planning"
            and f["system"] == system
            and f["name"].startswith("plan a read")
        ]
        if points:
            ax.plot(
                [q for q, _ in points],
                [ms for _, ms in points],
                marker="o",
                label=SYSTEMS[system],
                color=COLOURS[system],
            )
    ax.set_xscale("log", base=2)
    ax.set_xlabel("queues / partitions")
    ax.set_ylabel("ms")
    ax.set_title("planning a read")
    ax.legend(fontsize=8)


def chart(results: dict, out: Path) -> None:
    fig, axes = plt.subplots(2, 2, figsize=(12, 9))
    bars(axes[0][0], results, "read", "reads")
    bars(axes[0][1], results, "write", "writes")
    latency(axes[1][0], results)
    planning(axes[1][1], results)
    m, v = results["machine"], results["versions"]
    fig.suptitle(
        f"rocketmq-spark vs Spark's Kafka connector — Spark {v['spark']}, {m['cores']} cores "
        f"({m['cpu']}), "
        f"{results['settings']['messages']} × {results['settings']['bodyBytes']} B"
    )
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("results", type=Path)
    parser.add_argument("--chart", type=Path, required=True)
    parser.add_argument("--table", type=Path)
    args = parser.parse_args()
    results = json.loads(args.results.read_text())
    chart(results, args.chart)
    text = table(results)
    if args.table:
        args.table.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
