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

"""Which jar runs on which Spark: the package's choice by version, and what each jar's bytecode may
touch."""

from __future__ import annotations

import struct
import zipfile
from pathlib import Path

import pytest

from rocketmq_spark import __version__, jar_path

pytestmark = pytest.mark.cross_version


def test_each_supported_spark_gets_its_own_jar() -> None:
    assert (
        Path(jar_path("4.0.5")).name == f"rocketmq-spark-connector-assembly_2.13-{__version__}.jar"
    )
    assert jar_path("4.3.0") == jar_path("4.0.0") == jar_path("4.2.0", "2.13")
    assert (
        Path(jar_path("3.5.0")).name
        == f"rocketmq-spark-connector-spark35-assembly_2.12-{__version__}.jar"
    )
    assert (
        Path(jar_path("3.5.2", "2.13")).name
        == f"rocketmq-spark-connector-spark35-assembly_2.13-{__version__}.jar"
    )
    assert all(Path(jar_path(v)).is_file() for v in ("3.5.9", "4.1.4"))


def _entries(jar: Path) -> list[tuple[str, int]]:
    with zipfile.ZipFile(jar) as z:
        return [(i.filename, i.CRC) for i in z.infolist()]


@pytest.mark.parametrize(
    ("scala", "built"),
    [
        ("2.12", "connector-spark35/scala-2.12/target/scala-2.12"),
        ("2.13", "connector-spark35/scala-2.13/target/scala-2.13"),
    ],
)
def test_a_spark35_jar_made_from_the_package_is_the_jar_the_build_made(
    scala: str, built: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The package holds the Spark 3.5 jars as differences from the Spark 4 jar; jar_path writes
    them whole, once."""
    monkeypatch.setenv("ROCKETMQ_SPARK_JAR_CACHE", str(tmp_path))
    made = Path(jar_path("3.5.0", scala))
    assert made.is_relative_to(tmp_path)
    name = f"rocketmq-spark-connector-spark35-assembly_{scala}-{__version__}.jar"
    original = Path(__file__).resolve().parents[2] / built / name
    if not original.is_file():
        pytest.fail(
            f"{original} is missing: run build/sbt "
            f"connectorSpark35_{scala.replace('.', '')}/assembly"
        )
    assert made.name == name and _entries(made) == _entries(original)
    with zipfile.ZipFile(made) as z:
        assert z.testzip() is None
    mtime = made.stat().st_mtime_ns
    assert (
        jar_path("3.5.0", scala) == str(made) and made.stat().st_mtime_ns == mtime
    )  # made once, then reused


@pytest.mark.parametrize(
    ("version", "scala", "text"),
    [
        ("3.4.1", None, "Spark 3.4.1 is not supported"),
        ("4.4.0", None, "Spark 4.4.0 is not supported"),
        ("5.0.0", None, "Spark 5.0.0 is not supported"),
        ("4.1.0", "2.12", "Spark 4.1.0 with Scala 2.12 is not supported"),
        ("latest", None, "Cannot read the Spark version 'latest'"),
    ],
)
def test_an_unsupported_spark_is_refused_naming_what_is_supported(
    version: str, scala: str | None, text: str
) -> None:
    with pytest.raises(ValueError) as e:
        jar_path(version, scala)
    assert text in str(e.value)
    assert "Spark 3.5.x (Scala 2.12 or 2.13) and 4.0 to 4.3 (Scala 2.13)" in str(e.value)


def _class_versions(jar: str) -> dict[str, int]:
    """Each class file's major version (52: Java 8, 61: Java 17)."""
    versions = {}
    with zipfile.ZipFile(jar) as z:
        for name in z.namelist():
            if name.endswith(".class") and not name.startswith("META-INF/"):
                with z.open(name) as f:
                    versions[name] = struct.unpack(">4sHH", f.read(8))[2]
    return versions


def test_the_scala_2_12_jar_is_java_8_bytecode_throughout() -> None:
    """Databricks 15.4 LTS runs Spark 3.5 on JDK 8 by default: one newer class and the query fails
    to load."""
    versions = _class_versions(jar_path("3.5.0"))
    assert len(versions) > 1000
    newer = {name: v for name, v in versions.items() if v > 52}
    assert not newer, f"{len(newer)} classes newer than Java 8, e.g. {sorted(newer.items())[:5]}"


def _referenced_classes(class_file: bytes) -> set[str]:
    """The classes a class file's constant pool names (CONSTANT_Class entries), as a/b/C."""
    sizes = {
        3: 4,
        4: 4,
        5: 8,
        6: 8,
        7: 2,
        8: 2,
        9: 4,
        10: 4,
        11: 4,
        12: 4,
        15: 3,
        16: 2,
        17: 4,
        18: 4,
        19: 2,
        20: 2,
    }
    count = struct.unpack(">H", class_file[8:10])[0]
    utf8: dict[int, str] = {}
    class_refs: list[int] = []
    pos, index = 10, 1
    while index < count:
        tag = class_file[pos]
        if tag == 1:
            length = struct.unpack(">H", class_file[pos + 1 : pos + 3])[0]
            utf8[index] = class_file[pos + 3 : pos + 3 + length].decode("utf-8", "replace")
            pos += 3 + length
        else:
            if tag == 7:
                class_refs.append(struct.unpack(">H", class_file[pos + 1 : pos + 3])[0])
            pos += 1 + sizes[tag]
        index += 2 if tag in (5, 6) else 1
    return {utf8[i].lstrip("[").removeprefix("L").removesuffix(";") for i in class_refs}


def _running_spark_classes() -> set[str]:
    """The classes of the running pyspark's jars."""
    import pyspark

    classes = set()
    for jar in (Path(pyspark.__file__).parent / "jars").glob("*.jar"):
        with zipfile.ZipFile(jar) as z:
            classes.update(n.removesuffix(".class") for n in z.namelist() if n.endswith(".class"))
    return classes


#: The classes of real-time mode: loaded only where Spark has it (4.1 and later), by reflection from
#: RocketMQMicroBatchStream.apply, never named by another class of ours.
REAL_TIME_ONLY = "org/apache/spark/sql/rocketmq/RocketMQRealTime"
REAL_TIME_API = "org/apache/spark/sql/connector/read/streaming/SupportsRealTimeMode"


def test_the_jar_touches_no_spark_class_the_running_spark_lacks() -> None:
    """Every Spark or Scala class the connector's own bytecode names exists in the pyspark running
    this test, with the jar jar_path() picks for it. dev/test runs it on every pyspark of the
    matrix, 3.5.0 and 4.0.5 (the oldest of each line) included: Spark 4.1 added
    org.apache.spark.BreakingChangeInfo, whose absence crashed every error on 4.0, and a jar built
    against a newer Spark than the cluster's fails the same way. The real-time classes are exempt
    where Spark has no real-time mode: nothing of ours names them, so nothing loads them there."""
    import pyspark

    spark = _running_spark_classes()
    assert len(spark) > 10000
    real_time = REAL_TIME_API in spark
    missing: dict[str, set[str]] = {}
    naming_real_time: dict[str, set[str]] = {}
    with zipfile.ZipFile(jar_path()) as z:
        for name in z.namelist():
            if (
                name.startswith("org/apache/spark/sql/rocketmq/")
                and name.endswith(".class")
                and "/shaded/" not in name
            ):
                real_time_class = name.startswith(REAL_TIME_ONLY)
                for ref in _referenced_classes(z.read(name)):
                    ours = ref.startswith("org/apache/spark/sql/rocketmq/")
                    if ours and ref.startswith(REAL_TIME_ONLY) and not real_time_class:
                        naming_real_time.setdefault(ref, set()).add(name)
                    exempt = real_time_class and not real_time
                    if (
                        ref.startswith(("org/apache/spark/", "scala/"))
                        and not ours
                        and ref not in spark
                        and not exempt
                    ):
                        missing.setdefault(ref, set()).add(name)
    assert not missing, f"classes pyspark {pyspark.__version__} lacks: {sorted(missing)[:10]}"
    assert not naming_real_time, (
        f"real-time classes named outside real-time mode: {naming_real_time}"
    )


def test_real_time_classes_are_in_the_jar_exactly_where_spark_has_real_time_mode() -> None:
    """The Spark 4 jar carries them (they load on 4.1 and later); the Spark 3.5 jars have none."""
    import pyspark

    with zipfile.ZipFile(jar_path()) as z:
        classes = [n for n in z.namelist() if n.startswith(REAL_TIME_ONLY)]
    if pyspark.__version__.startswith("3.5."):
        assert classes == []
    else:
        assert f"{REAL_TIME_ONLY}MicroBatchStream.class" in classes
        assert f"{REAL_TIME_ONLY}PartitionReader.class" in classes
