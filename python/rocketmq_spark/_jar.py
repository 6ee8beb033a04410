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

"""The connector jar shipped inside this package, and attaching it to a Spark session."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

from rocketmq_spark import _jar_delta
from rocketmq_spark._version import __version__

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


# The jars this package ships, by the Spark line and Scala version they are built for. Spark 4.x is
# Scala 2.13 only; pyspark 3.5 from PyPI runs Scala 2.12, a Spark 3.5 cluster may run either.
_JAR_PREFIXES = {
    ("4", "2.13"): "rocketmq-spark-connector-assembly_2.13-",
    ("3.5", "2.12"): "rocketmq-spark-connector-spark35-assembly_2.12-",
    ("3.5", "2.13"): "rocketmq-spark-connector-spark35-assembly_2.13-",
}
_SUPPORTED = "Spark 3.5.x (Scala 2.12 or 2.13) and 4.0 to 4.3 (Scala 2.13)"


def _spark_line(spark_version: str) -> str:
    """'4' for Spark 4.0 to 4.3, '3.5' for 3.5.x; ValueError naming what is supported otherwise."""
    parts = spark_version.split(".")
    try:
        major, minor = int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        raise ValueError(
            f"Cannot read the Spark version '{spark_version}'; the connector supports {_SUPPORTED}."
        ) from None
    if major == 4 and minor <= 3:
        return "4"
    if (major, minor) == (3, 5):
        return "3.5"
    raise ValueError(
        f"Spark {spark_version} is not supported by the RocketMQ connector; it supports "
        f"{_SUPPORTED}."
    )


def jar_path(spark_version: str | None = None, scala_version: str | None = None) -> str:
    """The absolute path of the self-contained connector jar bundled with this package for a Spark
    version.

    Use it when you launch Spark yourself, e.g. ``spark-submit --jars $(python -c ...)``, or upload
    the jar matching your cluster's runtime. The Spark 4 jar is in the package as it is. The Spark
    3.5 jars share all but their connector classes with it, so the package holds only what differs;
    the first call for one writes the whole jar (about 16 MB, a second or two, no network) to
    ``$ROCKETMQ_SPARK_JAR_CACHE`` or else ``~/.cache/rocketmq-spark`` and returns that path.

    Parameters
    ----------
    spark_version : str, optional
        The Spark version to run, such as ``"3.5.2"``; the installed pyspark's by default.
    scala_version : str, optional
        ``"2.12"`` or ``"2.13"``; by default the Scala that version's pyspark runs (2.12 for Spark
        3.5, 2.13 for Spark 4).

    Returns
    -------
    str
        The jar's absolute path.

    Raises
    ------
    ValueError
        For an unsupported Spark or Scala version, naming the supported ones.

    Examples
    --------
    >>> from rocketmq_spark import jar_path
    >>> jar_path().endswith(".jar")
    True
    >>> "spark35-assembly_2.12" in jar_path("3.5.2")
    True
    """
    if spark_version is None:
        import pyspark

        spark_version = pyspark.__version__
    line = _spark_line(spark_version)
    scala = scala_version or ("2.12" if line == "3.5" else "2.13")
    prefix = _JAR_PREFIXES.get((line, scala))
    if prefix is None:
        raise ValueError(
            f"Spark {spark_version} with Scala {scala} is not supported by the RocketMQ connector; "
            f"it supports {_SUPPORTED}."
        )
    jars = Path(__file__).parent / "jars"
    jar = jars / f"{prefix}{__version__}.jar"
    delta = jars / f"{prefix}{__version__}.delta"
    if not jar.is_file() and delta.is_file():
        return str(_whole_jar(delta, jars / f"{_JAR_PREFIXES[('4', '2.13')]}{__version__}.jar"))
    if not jar.is_file():
        raise FileNotFoundError(
            f"The RocketMQ connector jar for Spark {spark_version} (Scala {scala}) is missing "
            "from the rocketmq_spark "
            "package. Install the package from a wheel, or in a source checkout run "
            "dev/build-python first."
        )
    return str(jar.resolve())


def _cache_dir() -> Path:
    """Where jars made from a delta go: $ROCKETMQ_SPARK_JAR_CACHE, else the user's cache
    directory."""
    if os.environ.get("ROCKETMQ_SPARK_JAR_CACHE"):
        return Path(os.environ["ROCKETMQ_SPARK_JAR_CACHE"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rocketmq-spark"


def _whole_jar(delta: Path, base: Path) -> Path:
    """The whole jar ``delta`` describes, made from it and ``base`` on first use and kept in the
    cache directory, under a folder named by the delta's contents (a rebuilt package of the same
    version never meets a stale one)."""
    digest = hashlib.sha256(delta.read_bytes()).hexdigest()[:16]
    target = _cache_dir() / digest / _jar_delta.jar_name(delta)
    if not target.is_file():
        _jar_delta.assemble(base, delta, target)
    return target.resolve()


def configure_spark_with_rocketmq(builder: "SparkSession.Builder") -> "SparkSession.Builder":
    """Add the bundled connector jar to ``spark.jars`` of a session builder and return the builder.

    The jar is the one for the installed pyspark's version (see :func:`jar_path`). Jars already
    configured on the builder are kept: the connector jar is appended. Call it before
    ``getOrCreate()``; ``spark.jars`` cannot change once the session has started.

    Parameters
    ----------
    builder : SparkSession.Builder
        The builder of a classic session, such as ``SparkSession.builder.master("local[2]")``.

    Returns
    -------
    SparkSession.Builder
        ``builder``, with the jar in ``spark.jars``.

    Examples
    --------
    >>> from pyspark.sql import SparkSession
    >>> builder = configure_spark_with_rocketmq(SparkSession.builder.master("local[2]"))
    >>> spark = builder.getOrCreate()  # doctest: +SKIP
    """
    jar = jar_path()
    # Builder keeps its settings in `_options`; there is no public getter for a pending value.
    existing = str(getattr(builder, "_options", {}).get("spark.jars", "") or "")
    jars = [j for j in existing.split(",") if j.strip()]
    if jar not in jars:
        jars.append(jar)
    return builder.config("spark.jars", ",".join(jars))


def add_rocketmq_jar(spark: "SparkSession") -> None:
    """Upload the bundled connector jar to a running Spark Connect session (``spark.addArtifacts``).

    For a client of a Spark Connect server that was started without the connector: the jar becomes
    part of this session's classpath on the server and its executors, and ``format("rocketmq")``
    resolves. The jar is the one for the server's Spark version (Scala 2.12 for a 3.5 server; upload
    ``jar_path(spark.version, "2.13")`` yourself for a Scala 2.13 one). Classic sessions should use
    :func:`configure_spark_with_rocketmq` before they start instead.

    Parameters
    ----------
    spark : SparkSession
        A Spark Connect session.

    Returns
    -------
    None
        Once the jar is uploaded.

    Examples
    --------
    >>> from pyspark.sql import SparkSession
    >>> spark = SparkSession.builder.remote(
    ...     "sc://spark-connect-host:15002"
    ... ).getOrCreate()  # doctest: +SKIP
    >>> add_rocketmq_jar(spark)  # doctest: +SKIP
    """
    spark.addArtifacts(jar_path(spark.version))


__all__ = ["add_rocketmq_jar", "configure_spark_with_rocketmq", "jar_path", "__version__"]
