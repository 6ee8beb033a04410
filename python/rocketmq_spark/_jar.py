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

from pathlib import Path
from typing import TYPE_CHECKING

from rocketmq_spark._version import __version__

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def jar_path() -> str:
    """Return the absolute path of the self-contained connector jar bundled with this package.

    Use it when you launch Spark yourself, e.g. ``spark-submit --jars $(python -c ...)``.

    Example::

        >>> from rocketmq_spark import jar_path
        >>> jar_path().endswith(".jar")
        True
    """
    jars = sorted((Path(__file__).parent / "jars").glob("rocketmq-spark-connector-assembly_*.jar"))
    if not jars:
        raise FileNotFoundError(
            "The RocketMQ connector jar is missing from the rocketmq_spark package. Install the "
            "package from a wheel, or in a source checkout run dev/build-python first."
        )
    return str(jars[-1].resolve())


def configure_spark_with_rocketmq(builder: "SparkSession.Builder") -> "SparkSession.Builder":
    """Add the bundled connector jar to ``spark.jars`` of a session builder and return the builder.

    Jars already configured on the builder are kept: the connector jar is appended. Call it before
    ``getOrCreate()``; ``spark.jars`` cannot change once the session has started.

    Example::

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
    resolves. Classic sessions should use ``configure_spark_with_rocketmq`` before they start instead.

    Example::

        >>> from pyspark.sql import SparkSession
        >>> spark = SparkSession.builder.remote("sc://spark-connect-host:15002").getOrCreate()  # doctest: +SKIP
        >>> add_rocketmq_jar(spark)  # doctest: +SKIP
    """
    spark.addArtifacts(jar_path())


__all__ = ["add_rocketmq_jar", "configure_spark_with_rocketmq", "jar_path", "__version__"]
