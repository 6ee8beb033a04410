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

"""``read_rocketmq``, ``read_rocketmq_stream``, ``write_rocketmq`` and ``write_rocketmq_stream``: typed keywords
in, a plain ``spark.read`` / ``spark.readStream`` / ``df.write`` / ``df.writeStream`` call on the connector out.

Nothing here touches the JVM, so every function works the same in a classic and a Spark Connect session.
"""

from __future__ import annotations

import warnings
from datetime import timedelta
from typing import TYPE_CHECKING, Dict, Optional, Sequence, Union

from rocketmq_spark._options import checked_text, connector_options, required
from rocketmq_spark._positions import EARLIEST, LATEST, QueueOffsets, QueueTimestamps, Timestamp
from rocketmq_spark._trigger import DEFAULT_REAL_TIME_BATCH, real_time_trigger, start_without_allowlist

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.query import StreamingQuery
    from pyspark.sql.streaming.readwriter import DataStreamWriter

#: The connector's short format name (its full name is ``org.apache.spark.sql.rocketmq.RocketMQSourceProvider``).
FORMAT = "rocketmq"

Topics = Union[str, Sequence[str]]
Offsets = Union[str, QueueOffsets]
Timestamps = Union[str, QueueTimestamps]
Duration = Union[str, timedelta]
#: A number of broker groups, or their names.
BrokerGroups = Union[int, str, Sequence[str]]

_OUTPUT_MODES = ("append", "update", "complete")
# A streaming write's own keywords: the query's settings, not connector options.
_STREAM_KEYWORDS = ("checkpoint_location", "output_mode", "processing_time", "available_now", "query_name")


def _read_options(values: Dict[str, object]) -> Dict[str, str]:
    required("name_server", values["name_server"])
    required("topic", values["topic"])
    starts = [
        k
        for k in ("starting_offsets", "starting_timestamp", "starting_offsets_by_timestamp")
        if values.get(k) is not None
    ]
    if len(starts) > 1:
        raise ValueError(f"{' and '.join(starts)} each say where to start: pass only one of them")
    ends = [
        k for k in ("ending_offsets", "ending_timestamp", "ending_offsets_by_timestamp") if values.get(k) is not None
    ]
    if len(ends) > 1:
        raise ValueError(f"{' and '.join(ends)} each say where to end: pass only one of them")
    return connector_options(values)


def read_rocketmq(
    spark: "SparkSession",
    name_server: str,
    topic: Topics,
    *,
    starting_offsets: Optional[Offsets] = None,
    ending_offsets: Optional[Offsets] = None,
    starting_timestamp: Optional[Timestamp] = None,
    starting_offsets_by_timestamp: Optional[Timestamps] = None,
    ending_timestamp: Optional[Timestamp] = None,
    ending_offsets_by_timestamp: Optional[Timestamps] = None,
    sub_expression: Optional[str] = None,
    sql_filter: Optional[str] = None,
    include_extra_columns: Optional[bool] = None,
    min_partitions: Optional[int] = None,
    pull_timeout_ms: Optional[int] = None,
    pull_batch_size: Optional[int] = None,
    pulls_in_flight: Optional[int] = None,
    read_ahead_bytes: Optional[int] = None,
    fail_on_data_loss: Optional[bool] = None,
    expected_broker_groups: Optional[BrokerGroups] = None,
    consumer_group: Optional[str] = None,
    group_offset_fallback: Optional[str] = None,
    request_timeout_ms: Optional[int] = None,
    metadata_retries: Optional[int] = None,
    metadata_retry_interval_ms: Optional[int] = None,
    retry_timeout_ms: Optional[int] = None,
    access_key: Optional[str] = None,
    secret_key: Optional[str] = None,
    security_token: Optional[str] = None,
    namespace: Optional[str] = None,
    use_tls: Optional[bool] = None,
    access_channel: Optional[str] = None,
    producer_clock_skew_ms: Optional[int] = None,
) -> "DataFrame":
    """Read RocketMQ topics as a batch DataFrame, one row per message.

    Reads every queue of ``topic`` (a name or a list of names) from ``starting_offsets`` (default
    ``EARLIEST``) up to ``ending_offsets`` (default ``LATEST``, exclusive); offsets may be a dict
    ``{"topic": {"broker": {queue_id: offset}}}``, or ``GROUP``: where ``consumer_group`` committed its progress
    on the brokers, each queue (``group_offset_fallback``, ``LATEST`` by default or ``EARLIEST``, for queues it has
    not committed). Times are ``datetime`` objects with a time zone or
    epoch milliseconds. Keywords left as ``None`` keep the connector's defaults; each is the option key
    in snake_case (see the option reference, docs/reference/options.md). ``expected_broker_groups`` (a number, or
    broker group names) makes a read whose topic those groups do not all serve wait for them, then fail, instead of
    reading the groups still there (a group whose brokers are all down leaves no trace).
    ``producer_clock_skew_ms`` lets a ``bornTimestamp`` filter narrow the read (by how far producers' clocks may
    run ahead of the brokers').

    The rows have the columns topic, flag, body (binary), properties (JSON string; see
    ``decode_properties``), brokerName, queueId, queueOffset, bornTimestamp and storeTimestamp, then
    tags, keys and msgId when ``include_extra_columns=True``.

    Example::

        >>> df = read_rocketmq(spark, "127.0.0.1:9876", "orders", sub_expression="paid")  # doctest: +SKIP
        >>> df.selectExpr("CAST(body AS STRING)").show()  # doctest: +SKIP
    """
    values = dict(locals())
    del values["spark"]
    if isinstance(starting_offsets, str) and starting_offsets.strip().lower() == LATEST:
        raise ValueError(
            "starting_offsets=LATEST reads nothing in a batch query: use EARLIEST, per-queue offsets, "
            "or read_rocketmq_stream to read what arrives from now on"
        )
    if isinstance(ending_offsets, str) and ending_offsets.strip().lower() == EARLIEST:
        raise ValueError("ending_offsets=EARLIEST reads nothing: use LATEST (the default) or per-queue offsets")
    options = _read_options(values)
    return spark.read.format(FORMAT).options(**options).load()


def read_rocketmq_stream(
    spark: "SparkSession",
    name_server: str,
    topic: Topics,
    *,
    starting_offsets: Optional[Offsets] = None,
    starting_timestamp: Optional[Timestamp] = None,
    starting_offsets_by_timestamp: Optional[Timestamps] = None,
    max_offsets_per_trigger: Optional[int] = None,
    min_offsets_per_trigger: Optional[int] = None,
    max_trigger_delay: Optional[Duration] = None,
    sub_expression: Optional[str] = None,
    sql_filter: Optional[str] = None,
    include_extra_columns: Optional[bool] = None,
    min_partitions: Optional[int] = None,
    pull_timeout_ms: Optional[int] = None,
    pull_batch_size: Optional[int] = None,
    pulls_in_flight: Optional[int] = None,
    read_ahead_bytes: Optional[int] = None,
    fail_on_data_loss: Optional[bool] = None,
    expected_broker_groups: Optional[BrokerGroups] = None,
    consumer_group: Optional[str] = None,
    group_offset_fallback: Optional[str] = None,
    request_timeout_ms: Optional[int] = None,
    metadata_retries: Optional[int] = None,
    metadata_retry_interval_ms: Optional[int] = None,
    retry_timeout_ms: Optional[int] = None,
    access_key: Optional[str] = None,
    secret_key: Optional[str] = None,
    security_token: Optional[str] = None,
    namespace: Optional[str] = None,
    use_tls: Optional[bool] = None,
    access_channel: Optional[str] = None,
) -> "DataFrame":
    """Read RocketMQ topics as a streaming DataFrame (Structured Streaming), one row per message.

    The twin of ``read_rocketmq`` for ``spark.readStream``: same columns, no end options, plus the rate
    limits ``max_offsets_per_trigger``, ``min_offsets_per_trigger`` and ``max_trigger_delay`` (a
    ``timedelta`` or a string like ``"30s"``). A new query starts at ``starting_offsets`` (default ``LATEST``:
    only messages that arrive after it starts; pass ``EARLIEST`` for everything retained, or ``GROUP`` to continue
    where ``consumer_group`` committed, which a stream with ``consumer_group`` does after each micro-batch); a
    restarted query resumes from its checkpoint.

    Example::

        >>> stream = read_rocketmq_stream(spark, "127.0.0.1:9876", "orders",
        ...                               starting_offsets=LATEST, max_offsets_per_trigger=10_000)  # doctest: +SKIP
        >>> query = stream.writeStream.format("console").start()  # doctest: +SKIP
    """
    values = dict(locals())
    del values["spark"]
    options = _read_options(values)
    return spark.readStream.format(FORMAT).options(**options).load()


def _sink_options(values: Dict[str, object]) -> Dict[str, str]:
    """The connector options of a write's keywords, checked: the stream's own keywords and ``df`` left out."""
    values = {k: v for k, v in values.items() if k != "df" and k not in _STREAM_KEYWORDS}
    required("name_server", values["name_server"])
    topic = values["topic"]
    if topic is not None and (not isinstance(topic, str) or "," in topic):
        raise TypeError(
            f"topic must be one topic name (a str) when writing, not {topic!r}: rows go to one "
            "topic, or to each row's topic column"
        )
    return connector_options(values)


def _stream_writer(df: "DataFrame", options: Dict[str, str], stream: Dict[str, object]) -> "DataStreamWriter":
    """``df.writeStream`` on the connector with the stream's own keywords, checked."""
    output_mode, processing_time = stream["output_mode"], stream["processing_time"]
    available_now = stream["available_now"]
    if output_mode is not None and output_mode not in _OUTPUT_MODES:
        raise ValueError(f"output_mode must be one of {', '.join(_OUTPUT_MODES)}, not {output_mode!r}")
    if not isinstance(available_now, bool):
        raise TypeError(f"available_now must be a bool, not {available_now!r}")
    continuous = stream.get("continuous")
    triggers = [k for k in ("processing_time", "available_now", "continuous") if stream.get(k) not in (None, False)]
    if len(triggers) > 1:
        raise ValueError(f"{triggers[0]} and {triggers[1]} are two triggers: pass only one of them")
    for name in ("checkpoint_location", "processing_time", "continuous", "query_name"):
        if stream.get(name) is not None:
            checked_text(name, stream[name])
    if not df.isStreaming:
        raise TypeError(
            "write_rocketmq_stream needs a streaming DataFrame (from spark.readStream); "
            "write a batch DataFrame with write_rocketmq"
        )
    writer = df.writeStream.format(FORMAT).options(**options)
    if stream["checkpoint_location"] is not None:
        writer = writer.option("checkpointLocation", str(stream["checkpoint_location"]))
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
    return writer


def write_rocketmq(
    df: "DataFrame",
    name_server: str,
    topic: Optional[str] = None,
    *,
    producer_group: Optional[str] = None,
    send_timeout_ms: Optional[int] = None,
    send_retries: Optional[int] = None,
    max_in_flight_messages: Optional[int] = None,
    max_in_flight_bytes: Optional[int] = None,
    send_batch_messages: Optional[int] = None,
    send_batch_bytes: Optional[int] = None,
    compression_threshold: Optional[int] = None,
    delivery_delay_ms: Optional[int] = None,
    delivery_guarantee: Optional[str] = None,
    transaction_timeout: Optional[Duration] = None,
    request_timeout_ms: Optional[int] = None,
    metadata_retries: Optional[int] = None,
    metadata_retry_interval_ms: Optional[int] = None,
    retry_timeout_ms: Optional[int] = None,
    access_key: Optional[str] = None,
    secret_key: Optional[str] = None,
    security_token: Optional[str] = None,
    namespace: Optional[str] = None,
    use_tls: Optional[bool] = None,
    access_channel: Optional[str] = None,
    checkpoint_location: Optional[str] = None,
    output_mode: Optional[str] = None,
    processing_time: Optional[str] = None,
    available_now: bool = False,
    query_name: Optional[str] = None,
) -> None:
    """Write a batch DataFrame to RocketMQ, one message per row; returns once every message is acknowledged.

    The DataFrame needs a ``body`` column (string or binary) and, unless ``topic`` is given, a string
    ``topic`` column. Optional columns: ``tags``, ``keys`` (string or array of strings), ``properties``
    (map of strings), ``shardingKey`` and ``deliverTime`` (timestamp or epoch ms).

    A streaming DataFrame goes to :func:`write_rocketmq_stream`. Passing one here (with the keywords
    ``checkpoint_location``, ``output_mode``, ``processing_time``, ``available_now`` and ``query_name``) still
    starts its query and returns the ``StreamingQuery``, with a ``DeprecationWarning``: this is removed in
    0.2.0.

    Example::

        >>> write_rocketmq(spark.createDataFrame([("hi",)], "body STRING"),
        ...                "127.0.0.1:9876", "greetings")  # doctest: +SKIP
    """
    values = dict(locals())
    options = _sink_options(values)
    stream = {k: values[k] for k in _STREAM_KEYWORDS}
    if df.isStreaming:
        warnings.warn(
            "write_rocketmq with a streaming DataFrame is deprecated and stops working in 0.2.0: "
            "use write_rocketmq_stream, which takes the same keywords and returns the StreamingQuery",
            DeprecationWarning,
            stacklevel=2,
        )
        return _stream_writer(df, options, stream).start()  # type: ignore[return-value]  # the deprecated call
    given = [k for k, v in stream.items() if v not in (None, False)]
    if given:
        raise ValueError(
            f"{', '.join(given)} only apply to streaming DataFrames (write_rocketmq_stream); "
            "this one is a batch DataFrame"
        )
    df.write.format(FORMAT).mode("append").options(**options).save()
    return None


def write_rocketmq_stream(
    df: "DataFrame",
    name_server: str,
    topic: Optional[str] = None,
    *,
    producer_group: Optional[str] = None,
    send_timeout_ms: Optional[int] = None,
    send_retries: Optional[int] = None,
    max_in_flight_messages: Optional[int] = None,
    max_in_flight_bytes: Optional[int] = None,
    send_batch_messages: Optional[int] = None,
    send_batch_bytes: Optional[int] = None,
    compression_threshold: Optional[int] = None,
    delivery_delay_ms: Optional[int] = None,
    delivery_guarantee: Optional[str] = None,
    transaction_timeout: Optional[Duration] = None,
    request_timeout_ms: Optional[int] = None,
    metadata_retries: Optional[int] = None,
    metadata_retry_interval_ms: Optional[int] = None,
    retry_timeout_ms: Optional[int] = None,
    access_key: Optional[str] = None,
    secret_key: Optional[str] = None,
    security_token: Optional[str] = None,
    namespace: Optional[str] = None,
    use_tls: Optional[bool] = None,
    access_channel: Optional[str] = None,
    checkpoint_location: Optional[str] = None,
    output_mode: Optional[str] = None,
    processing_time: Optional[str] = None,
    available_now: bool = False,
    real_time: Union[bool, str] = False,
    continuous: Optional[str] = None,
    query_name: Optional[str] = None,
) -> "StreamingQuery":
    """Start a streaming query that writes a streaming DataFrame to RocketMQ, one message per row.

    The rows and the connector keywords are those of :func:`write_rocketmq`. The query's own settings:
    ``checkpoint_location`` (where its progress is kept; Spark's ``spark.sql.streaming.checkpointLocation``
    when not given), ``output_mode`` (append, update or complete), one trigger at most (``processing_time``
    such as ``"10 seconds"``, ``available_now=True``, ``real_time`` or ``continuous``) and ``query_name``.
    Returns the started ``StreamingQuery``.

    ``continuous`` runs the query under Spark's continuous processing, recording its progress at that interval
    (such as ``"1 second"``): each queue read by a task of its own, every row sent as it arrives, at-least-once
    (exactly-once is refused there). It needs a task slot per queue of the source, and supports map-like queries
    only (see docs/real-time.md, "Continuous processing").

    ``real_time`` runs the query in Spark's real-time mode (pyspark 4.2 and later): ``True`` for Spark's batch
    duration of 5 minutes, or a duration such as ``"30 seconds"`` (Spark's minimum is 5 seconds; each batch end
    pauses the query for about 150 ms, so short batches raise the slowest messages' latency). Every row is then
    sent as it arrives, the output mode is ``update`` unless given, asynchronous progress tracking is off (Spark 4.3
    turns it on in real-time mode for its own sinks only), and Spark's check that the sink is one of
    its own is off for this query (the RocketMQ sink is not on Spark's fixed list; Spark then warns instead of
    failing on operators outside its real-time list). Nothing else needs setting.

    Example::

        >>> query = write_rocketmq_stream(counts, "127.0.0.1:9876", "counts", output_mode="update",
        ...                               checkpoint_location="/tmp/cp")  # doctest: +SKIP
        >>> query.awaitTermination()  # doctest: +SKIP
    """
    values = dict(locals())
    del values["real_time"], values["continuous"]
    options = _sink_options(values)
    stream: Dict[str, object] = {k: values[k] for k in _STREAM_KEYWORDS}
    stream["continuous"] = continuous
    if real_time is False:
        return _stream_writer(df, options, stream).start()
    batch = _real_time_batch(real_time)
    given = [k for k in ("processing_time", "available_now", "continuous") if stream[k] not in (None, False)]
    if given:
        raise ValueError(f"{given[0]} and real_time are two triggers: pass only one of them")
    if stream["output_mode"] is None:
        stream["output_mode"] = "update"
    # Spark 4.3 turns on asynchronous progress tracking in real-time mode, for a fixed list of its own sinks only; the
    # RocketMQ sink runs with the offset and commit logs written as each batch ends, as on Spark 4.1 and 4.2.
    writer = _stream_writer(df, options, stream).option("asyncProgressTrackingEnabled", "false")
    return start_without_allowlist(real_time_trigger(writer, batch), df.sparkSession)


def _real_time_batch(real_time: object) -> str:
    """The batch duration ``real_time`` asks for: ``True`` for Spark's default, or the duration given."""
    if real_time is True:
        return DEFAULT_REAL_TIME_BATCH
    if not isinstance(real_time, str):
        raise TypeError(f"real_time must be True or a batch duration such as '30 seconds', not {real_time!r}")
    return checked_text("real_time", real_time)


__all__ = ["FORMAT", "read_rocketmq", "read_rocketmq_stream", "write_rocketmq", "write_rocketmq_stream"]
