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
import threading
from typing import TYPE_CHECKING, Any, List, Optional, Tuple, cast

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession
    from pyspark.sql.streaming.query import StreamingQuery
    from pyspark.sql.streaming.readwriter import DataStreamWriter

#: Spark's batch duration of a real-time query when none is given (Scala's ``Trigger.RealTime()``).
DEFAULT_REAL_TIME_BATCH = "5 minutes"

# Spark checks a real-time query's sink against a fixed list of its own sinks (console, foreach,
# memory, Kafka) unless this is false; the RocketMQ sink is not on the list.
_ALLOWLIST_CHECK = "spark.sql.streaming.realTimeMode.allowlistCheck"


def _spark_version(version: str) -> Tuple[int, int]:
    found = re.match(r"(\d+)\.(\d+)", version)
    if found is None:
        raise ValueError(f"Cannot read the Spark version {version!r}")
    return int(found.group(1)), int(found.group(2))


def real_time_trigger(
    writer: "DataStreamWriter", batch_duration: str = "5 seconds"
) -> "DataStreamWriter":
    """Set Spark's real-time trigger on ``writer`` and return it, or fail saying which Spark has it.

    Each batch then runs for ``batch_duration``, every message going through the query as it
    arrives; the checkpoint is written when a batch ends. The query needs output mode ``update`` and
    a sink Spark allows in real-time mode (see docs/real-time.md;
    ``write_rocketmq_stream(real_time=...)`` does all of it for the RocketMQ sink). pyspark 4.2 and
    later only: Spark 4.1 runs real-time queries too, but its Python API cannot ask for one (use
    Scala there, ``Trigger.RealTime``).

    Parameters
    ----------
    writer : DataStreamWriter
        The writer of the query, such as
        ``df.writeStream.outputMode("update").foreach(handle_row)``.
    batch_duration : str, default "5 seconds"
        How long each batch runs: at least ``spark.sql.streaming.realTimeMode.minBatchDuration`` (5
        seconds by default).

    Returns
    -------
    DataStreamWriter
        ``writer``, with the real-time trigger set.

    Raises
    ------
    RuntimeError
        On pyspark before 4.2, naming the Spark versions that have the trigger.

    Examples
    --------
    >>> from rocketmq_spark import read_rocketmq_stream, real_time_trigger
    >>> writer = (
    ...     read_rocketmq_stream(spark, "127.0.0.1:9876", "orders")
    ...     .writeStream.outputMode("update")
    ...     .foreach(handle_row)
    ...     .option("checkpointLocation", "/chk/orders")
    ... )  # doctest: +SKIP
    >>> query = real_time_trigger(writer, "30 seconds").start()  # doctest: +SKIP
    """
    import pyspark

    if _spark_version(pyspark.__version__) < (4, 2):
        raise RuntimeError(
            "The real-time trigger needs pyspark 4.2 or later; this is pyspark "
            f"{pyspark.__version__}. Spark 4.1 "
            "runs real-time queries from Scala (Trigger.RealTime); older Spark has no real-time "
            "mode: use a "
            "processing-time trigger there."
        )
    # pyspark's type hints list the trigger's keywords one overload each and leave realTime out.
    trigger: Any = writer.trigger
    return cast("DataStreamWriter", trigger(realTime=batch_duration))


class _Lifted:
    """The allowlist check lifted for one session: its value before, and the starts under way that
    need it off."""

    def __init__(self, before: Optional[str]) -> None:
        self.before = before
        self.starting = 0


# Sessions whose allowlist check is lifted by starts under way, matched by identity (the list holds
# each session while it is lifted). Guarded by _LOCK, held only while the setting and the count
# change, never while Spark starts a query: starts run side by side, and a start that waits on
# something starting another query cannot deadlock.
_LOCK = threading.Lock()
_LIFTED: List[Tuple["SparkSession", _Lifted]] = []


def _lifted(spark: "SparkSession") -> Optional[_Lifted]:
    return next((state for session, state in _LIFTED if session is spark), None)


def start_without_allowlist(writer: "DataStreamWriter", spark: "SparkSession") -> "StreamingQuery":
    """Start ``writer``'s real-time query with Spark's sink allowlist check off for that query
    alone.

    Spark reads the setting when the query starts (the sink's check, and the copy of the session the
    query keeps for its operator checks), so the session's own value is put back right after, as it
    was. Starts from several threads at once share one lifting: the first saves the session's value
    and turns the check off, the last to finish puts the value back (so none starts with the check
    back on, and none saves another's ``false`` as the value to restore).
    """
    with _LOCK:
        state = _lifted(spark)
        if state is None:
            state = _Lifted(spark.conf.get(_ALLOWLIST_CHECK, None))
            spark.conf.set(_ALLOWLIST_CHECK, "false")
            _LIFTED.append((spark, state))
        state.starting += 1
    try:
        return writer.start()
    finally:
        with _LOCK:
            state.starting -= 1
            if state.starting == 0:
                _LIFTED[:] = [(session, s) for session, s in _LIFTED if s is not state]
                if state.before is None:
                    spark.conf.unset(_ALLOWLIST_CHECK)
                else:
                    spark.conf.set(_ALLOWLIST_CHECK, state.before)


__all__ = ["DEFAULT_REAL_TIME_BATCH", "real_time_trigger"]
