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

"""Licence files shipped with every artifact: the thin jar, the shaded jar and the wheel."""

from __future__ import annotations

import re
import zipfile
from importlib.metadata import distribution
from pathlib import Path

import pytest

from rocketmq_spark import __version__, jar_path

REPO_ROOT = Path(__file__).resolve().parents[2]
LICENSE = (REPO_ROOT / "LICENSE").read_text(encoding="utf-8")
NOTICE = (REPO_ROOT / "NOTICE").read_text(encoding="utf-8")

# What the shaded jar bundles: a relocated (or RocketMQ's own) package in the jar, and the Maven
# coordinates (group:artifact:) its NOTICE must name for it.
BUNDLED = {
    "org/apache/rocketmq/client/": "org.apache.rocketmq:rocketmq-client:",
    "org/apache/rocketmq/remoting/": "org.apache.rocketmq:rocketmq-remoting:",
    "org/apache/rocketmq/logging/ch/qos/logback/": "ch.qos.logback:logback-classic:",
    "org/apache/spark/sql/rocketmq/shaded/io/netty/buffer/": "io.netty:netty-buffer:",
    "org/apache/spark/sql/rocketmq/shaded/com/google/common/": "com.google.guava:guava:",
    "org/apache/spark/sql/rocketmq/shaded/"
    "com/alibaba/fastjson2/": "com.alibaba.fastjson2:fastjson2:",
    "org/apache/spark/sql/rocketmq/shaded/"
    "io/opentelemetry/sdk/": "io.opentelemetry:opentelemetry-sdk:",
    "org/apache/spark/sql/rocketmq/shaded/"
    "org/apache/commons/lang3/": "org.apache.commons:commons-lang3:",
    "org/apache/spark/sql/rocketmq/shaded/org/yaml/snakeyaml/": "org.yaml:snakeyaml:",
}

# What it no longer bundles: parts of the RocketMQ client's dependency tree no class of the
# connector reaches (the broker's and the proxy's gRPC, metrics exporters and their HTTP client; see
# build.sbt, clientExclusions).
NOT_BUNDLED = [
    "io/grpc/",
    "io/prometheus/",
    "okhttp3/",
    "okio/",
    "kotlin/",
    "javassist/",
    "org/reflections/",
    "com/alibaba/fastjson/",
    "io/netty/handler/codec/mqtt/",
    "io/netty/channel/epoll/",
]


def is_apache_license(text: str) -> bool:
    return (
        "Apache License" in text
        and "Version 2.0, January 2004" in text
        and "END OF TERMS AND CONDITIONS" in text
    )


def thin_jar() -> Path:
    # The one this checkout built (dev/test does, for connector/publish), not whatever a repository
    # holds.
    jar = (
        REPO_ROOT
        / "connector"
        / "target"
        / "scala-2.13"
        / f"rocketmq-spark-connector_2.13-{__version__}.jar"
    )
    if not jar.is_file():
        pytest.fail(f"no thin jar at {jar}; build it with: build/sbt connector/package")
    return jar


def test_the_project_licence_is_apache_2() -> None:
    assert is_apache_license(LICENSE)
    assert "rocketmq-spark" in NOTICE and "Apache License, Version 2.0" in NOTICE


def test_the_thin_jar_carries_our_license_and_notice() -> None:
    with zipfile.ZipFile(thin_jar()) as jar:
        assert jar.read("META-INF/LICENSE").decode() == LICENSE
        assert jar.read("META-INF/NOTICE").decode() == NOTICE


def test_the_shaded_jar_names_what_it_bundles_with_their_licences() -> None:
    with zipfile.ZipFile(jar_path()) as jar:
        names = jar.namelist()
        assert jar.read("META-INF/LICENSE").decode() == LICENSE
        notice = jar.read("META-INF/NOTICE").decode()
        legal = {
            n: jar.read(n).decode("utf-8", "replace")
            for n in names
            if n.startswith("META-INF/licenses/")
        }
    # Ours first, then the bundled libraries.
    assert notice.startswith(NOTICE.strip())
    bundled_list = notice.split("Notices of the bundled libraries")[0]
    listed = re.findall(r"^(?:    embeds )?([\w.-]+:[\w.-]+:[^\s:]+)", bundled_list, re.MULTILINE)
    for package, coordinates in BUNDLED.items():
        assert any(n.startswith(package) for n in names), (
            f"the jar no longer has {package}: update BUNDLED"
        )
        assert any(c.startswith(coordinates) for c in listed), (
            f"NOTICE does not name {coordinates} ({package})"
        )
    shaded = "org/apache/spark/sql/rocketmq/shaded/"
    assert [p for p in NOT_BUNDLED if any(n.startswith(shaded + p) for n in names)] == []
    # Every listed library says which licence it is under.
    entries = re.split(r"\n(?=[\w.-]+:[\w.-]+:\S+\n)", bundled_list)
    assert len(entries) > len(BUNDLED)
    for entry in entries[1:]:
        assert re.search(r"Apache|MIT|BSD|Eclipse|Mozilla|MPL|GPL|WTFPL", entry), entry
    # Their own licence and notice files are kept apart from ours, and their notices are reproduced
    # in ours.
    assert is_apache_license(legal["META-INF/licenses/org.apache.rocketmq.rocketmq-client/LICENSE"])
    rocketmq_notice = legal["META-INF/licenses/org.apache.rocketmq.rocketmq-client/NOTICE"].strip()
    assert rocketmq_notice.startswith("rocketmq-client") and rocketmq_notice in notice
    for path in legal:
        library = path.split("/")[2]
        group, _, artifact = library.rpartition(".")
        assert any(c.startswith(f"{group}:{artifact}:") for c in listed) or library in notice, path
    assert not [
        n for n in names if re.fullmatch(r"META-INF/(LICEN[CS]E|NOTICE)[^/]+", n, re.IGNORECASE)
    ]


def test_the_installed_wheel_carries_license_and_notice() -> None:
    dist = distribution("rocketmq-spark")
    assert dist.version == __version__
    licence_files = dist.metadata.get_all("License-File") or []
    assert sorted(licence_files) == ["LICENSE", "NOTICE"]
    assert dist.read_text("licenses/LICENSE") == LICENSE
    # The wheel ships the shaded jars, so its NOTICE is theirs, one after another: each names what
    # it bundles.
    notices = []
    for spark, scala in (("4.2.0", "2.13"), ("3.5.0", "2.12"), ("3.5.0", "2.13")):
        with zipfile.ZipFile(jar_path(spark, scala)) as jar:
            notices.append(jar.read("META-INF/NOTICE").decode())
    assert dist.read_text("licenses/NOTICE") == "\n".join(notices)
