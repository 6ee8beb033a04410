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

"""A connector jar kept as the difference from another, and made whole again on first use.

The three shaded jars share almost every entry (the relocated RocketMQ client and its dependencies);
only the connector's own classes, compiled for each Spark line, differ. The wheel carries the Spark
4 jar whole and, for each other jar, a delta: the entries that differ from the Spark 4 jar or are
not in it, and a manifest of every entry of the jar in order, with its CRC-32. ``assemble`` writes
the whole jar back from the two, checking each entry's CRC against the manifest.

Build side: ``python rocketmq_spark/_jar_delta.py make BASE FULL OUT`` (dev/build-python).
"""

from __future__ import annotations

import json
import os
import sys
import zipfile
from pathlib import Path
from typing import Dict, List

MANIFEST = "META-INF/rocketmq-spark-delta.json"


def make(base: Path, full: Path, out: Path) -> None:
    """Write to ``out`` the entries of ``full`` that ``base`` lacks or holds with other contents,
    and a manifest."""
    with zipfile.ZipFile(base) as b, zipfile.ZipFile(full) as f, zipfile.ZipFile(out, "w") as d:
        base_crcs = {i.filename: i.CRC for i in b.infolist()}
        entries: List[List[object]] = []
        for info in f.infolist():
            entries.append([info.filename, info.CRC])
            if base_crcs.get(info.filename) != info.CRC:
                d.writestr(info, f.read(info.filename), compress_type=zipfile.ZIP_DEFLATED)
        manifest = {"base": base.name, "jar": full.name, "entries": entries}
        d.writestr(MANIFEST, json.dumps(manifest), compress_type=zipfile.ZIP_DEFLATED)


def jar_name(delta: Path) -> str:
    with zipfile.ZipFile(delta) as d:
        return str(json.loads(d.read(MANIFEST))["jar"])


def assemble(base: Path, delta: Path, target: Path) -> None:
    """Write the whole jar that ``delta`` describes to ``target`` (atomically), from ``delta`` and
    ``base``."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    try:
        with (
            zipfile.ZipFile(base) as b,
            zipfile.ZipFile(delta) as d,
            zipfile.ZipFile(partial, "w") as out,
        ):
            manifest = json.loads(d.read(MANIFEST))
            if manifest["base"] != base.name:
                raise ValueError(
                    f"{delta.name} is the difference from {manifest['base']}, not from {base.name}"
                )
            own: Dict[str, zipfile.ZipInfo] = {i.filename: i for i in d.infolist()}
            for name, crc in manifest["entries"]:
                source = d if name in own else b
                info = source.getinfo(name)
                if info.CRC != crc:
                    raise ValueError(
                        f"entry {name} of {source.filename} is not the one {delta.name} names"
                    )
                out.writestr(info, source.read(name), compress_type=zipfile.ZIP_DEFLATED)
        os.replace(partial, target)
    finally:
        if partial.exists():
            partial.unlink()


if __name__ == "__main__":  # pragma: no cover - the build's entry point
    if len(sys.argv) != 5 or sys.argv[1] != "make":
        sys.exit("usage: python _jar_delta.py make BASE_JAR FULL_JAR OUT")
    make(Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4]))
