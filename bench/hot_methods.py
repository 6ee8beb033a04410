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

"""The hot methods of a JFR recording: the frames most often on top of the sampled stacks (self
time), and the connector's own methods by how often they are anywhere on a stack (total time).

Usage: python bench/hot_methods.py <recording.jfr> [--top N] [--package
org.apache.spark.sql.rocketmq]
"""

import argparse
import collections
import json
import subprocess
from pathlib import Path


def samples(recording: Path) -> list[list[str]]:
    """Each execution sample's stack, top frame first, as 'Class.method' names."""
    out = subprocess.run(
        [
            "jfr",
            "print",
            "--json",
            "--stack-depth",
            "64",
            "--events",
            "jdk.ExecutionSample",
            str(recording),
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    stacks = []
    for event in json.loads(out)["recording"]["events"]:
        frames = event["values"]["stackTrace"]["frames"]
        stacks.append([f"{f['method']['type']['name']}.{f['method']['name']}" for f in frames])
    return stacks


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("recording", type=Path)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--package", default="org.apache.spark.sql.rocketmq")
    args = parser.parse_args()
    stacks = samples(args.recording)
    total = len(stacks)
    own = collections.Counter(stack[0] for stack in stacks if stack)
    anywhere = collections.Counter(
        frame for stack in stacks for frame in set(stack) if frame.startswith(args.package)
    )
    print(f"{total} samples\n\nself (top of stack):")
    for frame, n in own.most_common(args.top):
        print(f"{100 * n / total:6.1f}%  {frame}")
    print(f"\n{args.package} methods, anywhere on the stack:")
    for frame, n in anywhere.most_common(args.top):
        print(f"{100 * n / total:6.1f}%  {frame}")


if __name__ == "__main__":
    main()
