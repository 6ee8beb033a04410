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

"""Spark's real-time trigger, or a clear error where pyspark has none."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Tuple, cast

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession
    from pyspark.sql.streaming.query import StreamingQuery
    from pyspark.sql.streaming.readwriter import DataStreamWriter

#: Spark's batch duration of a real-time query when none is given (Scala's ``Trigger.RealTime()``).
DEFAULT_REAL_TIME_BATCH = "5 minutes"

# Spark checks a real-time query's sink against a fixed list of its own sinks (console, foreach, memory, Kafka)
# unless this is false; the RocketMQ sink is not on the list.
_ALLOWLIST_CHECK = "spark.sql.streaming.realTimeMode.allowlistCheck"


def _spark_version(version: str) -> Tuple[int, int]:
    found = re.match(r"(\d+)\.(\d+)", version)
    if found is None:
        raise ValueError(f"Cannot read the Spark version {version!r}")
    return int(found.group(1)), int(found.group(2))


def real_time_trigger(writer: "DataStreamWriter", batch_duration: str = "5 seconds") -> "DataStreamWriter":
    """Set Spark's real-time trigger on ``writer`` and return it, or fail saying which Spark has it.

    Each batch then runs for ``batch_duration`` (at least ``spark.sql.streaming.realTimeMode.minBatchDuration``,
    5 seconds by default), every message going through the query as it arrives; the checkpoint is written when a
    batch ends. The query needs output mode ``update`` and a sink Spark allows in real-time mode (see
    docs/real-time.md; ``write_rocketmq_stream(real_time=...)`` does all of it for the RocketMQ sink). pyspark 4.2
    and later only: Spark 4.1 runs real-time queries too, but its Python API cannot
    ask for one (use Scala there, ``Trigger.RealTime``).

    Example::

        query = real_time_trigger(
            read_rocketmq_stream(spark, "127.0.0.1:9876", "orders").writeStream.outputMode("update")
            .foreach(handle_row).option("checkpointLocation", "/chk/orders")
        ).start()
    """
    import pyspark

    if _spark_version(pyspark.__version__) < (4, 2):
        raise RuntimeError(
            f"The real-time trigger needs pyspark 4.2 or later; this is pyspark {pyspark.__version__}. Spark 4.1 "
            "runs real-time queries from Scala (Trigger.RealTime); older Spark has no real-time mode: use a "
            "processing-time trigger there."
        )
    # pyspark's type hints list the trigger's keywords one overload each and leave realTime out.
    trigger: Any = writer.trigger
    return cast("DataStreamWriter", trigger(realTime=batch_duration))


def start_without_allowlist(writer: "DataStreamWriter", spark: "SparkSession") -> "StreamingQuery":
    """Start ``writer``'s real-time query with Spark's sink allowlist check off for that query alone.

    Spark reads the setting when the query starts (the sink's check, and the copy of the session the query keeps
    for its operator checks), so the session's own value is put back right after, as it was.
    """
    before = spark.conf.get(_ALLOWLIST_CHECK, None)
    spark.conf.set(_ALLOWLIST_CHECK, "false")
    try:
        return writer.start()
    finally:
        if before is None:
            spark.conf.unset(_ALLOWLIST_CHECK)
        else:
            spark.conf.set(_ALLOWLIST_CHECK, before)


__all__ = ["DEFAULT_REAL_TIME_BATCH", "real_time_trigger"]
