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

"""A write's keywords, checked: the connector options they set, and ``df.writeStream`` on the
connector configured by a streaming write's keywords. Shared by ``write_rocketmq`` (its deprecated
streaming path), ``write_rocketmq_stream`` and ``rocketmq_stream_writer``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Mapping, Optional, Tuple, cast

from rocketmq_spark._converters import checked_text
from rocketmq_spark._options import (
    FORMAT,
    connector_options,
    option_keywords,
    required,
    with_options,
)
from rocketmq_spark._trigger import real_time_trigger

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.streaming.readwriter import DataStreamWriter

_OUTPUT_MODES = ("append", "update", "complete")
# A streaming write's own keywords: the query's settings, not connector options.
STREAM_KEYWORDS = (
    "checkpoint_location",
    "output_mode",
    "processing_time",
    "available_now",
    "continuous",
    "query_name",
)
# The writer option real-time mode sets (see write_rocketmq_stream), and the keyword that sets it:
# Spark 4.3's check that a sink of an asynchronously tracked query is one of its own, by name,
# passed (see stream_writer).
_SINK_CHECK_OVERRIDE = "_asyncProgressTrackingOverrideSinkSupportCheck"

# A write's keywords that are not connector options: the DataFrame, the escape hatch and the
# stream's own settings.
_NOT_SINK_OPTIONS = ("df", "options", "real_time") + STREAM_KEYWORDS


def sink_options(values: Mapping[str, object]) -> Tuple[Dict[str, str], Dict[str, str]]:
    """The connector options of a write's keywords, checked, and the keyword behind each
    (``options`` not added)."""
    sink = {k: v for k, v in values.items() if k not in _NOT_SINK_OPTIONS}
    required("name_server", sink["name_server"])
    topic = sink["topic"]
    if topic is not None and (not isinstance(topic, str) or "," in topic):
        raise TypeError(
            f"topic must be one topic name (a str) when writing, not {topic!r}: rows go to one "
            "topic, or to each row's topic column"
        )
    return connector_options(sink), option_keywords(sink)


def stream_writer(
    df: "DataFrame",
    values: Mapping[str, object],
    caller: str,
    real_time_batch: Optional[str] = None,
) -> Tuple["DataStreamWriter", Dict[str, str]]:
    """``df.writeStream`` on the connector, configured by a streaming write's keywords (``values``),
    checked; and the option key -> keyword of the options keywords set. ``real_time_batch``:
    real-time mode, with that batch duration.
    """
    typed, keywords = sink_options(values)
    stream = {k: values.get(k) for k in STREAM_KEYWORDS}
    output_mode, available_now = stream["output_mode"], stream["available_now"]
    processing_time, continuous = stream["processing_time"], stream["continuous"]
    if output_mode is not None and output_mode not in _OUTPUT_MODES:
        raise ValueError(
            f"output_mode must be one of {', '.join(_OUTPUT_MODES)}, not {output_mode!r}"
        )
    if not isinstance(available_now, bool):
        raise TypeError(f"available_now must be a bool, not {available_now!r}")
    triggers = [
        k
        for k in ("processing_time", "available_now", "continuous")
        if stream[k] not in (None, False)
    ]
    if real_time_batch is not None and triggers:
        raise ValueError(f"{triggers[0]} and real_time are two triggers: pass only one of them")
    if len(triggers) > 1:
        raise ValueError(f"{triggers[0]} and {triggers[1]} are two triggers: pass only one of them")
    for name in ("checkpoint_location", "processing_time", "continuous", "query_name"):
        if stream[name] is not None:
            checked_text(name, stream[name])
    if not df.isStreaming:
        raise TypeError(
            f"{caller} needs a streaming DataFrame (from spark.readStream); write a batch "
            "DataFrame with write_rocketmq"
        )
    # Writer options the query's keywords set: compared with those of `options` too, then set one by
    # one.
    settings: Dict[str, str] = {}
    if stream["checkpoint_location"] is not None:
        settings["checkpointLocation"] = str(stream["checkpoint_location"])
        keywords["checkpointLocation"] = "checkpoint_location"
    if real_time_batch is not None:
        # Spark 4.3 tracks a stateless real-time query's progress asynchronously (its offset and
        # commit logs written while the next batch runs; a stateful query's as each batch ends), and
        # then refuses any sink not on a list of its own by name (Kafka's is). A real-time write is
        # at-least-once, as Kafka's sink is, so this sink passes that check and Spark decides as for
        # Kafka's. Spark 4.1 and 4.2 ignore the option.
        settings[_SINK_CHECK_OVERRIDE] = "true"
        keywords[_SINK_CHECK_OVERRIDE] = "real_time"
        if output_mode is None:
            output_mode = "update"
    extra = cast("Optional[Mapping[str, str]]", values.get("options"))
    merged = with_options({**typed, **settings}, extra, keywords)
    writer = df.writeStream.format(FORMAT).options(
        **{k: v for k, v in merged.items() if k not in settings}
    )
    if "checkpointLocation" in settings:
        writer = writer.option("checkpointLocation", settings["checkpointLocation"])
    if output_mode is not None:
        writer = writer.outputMode(str(output_mode))
    if processing_time is not None:
        writer = writer.trigger(processingTime=str(processing_time))
    elif available_now:
        writer = writer.trigger(availableNow=True)
    elif continuous is not None:
        writer = writer.trigger(continuous=str(continuous))
    if stream["query_name"] is not None:
        writer = writer.queryName(str(stream["query_name"]))
    if real_time_batch is not None:
        writer = real_time_trigger(
            writer.option(_SINK_CHECK_OVERRIDE, settings[_SINK_CHECK_OVERRIDE]), real_time_batch
        )
    return writer, keywords


__all__ = ["STREAM_KEYWORDS", "sink_options", "stream_writer"]
