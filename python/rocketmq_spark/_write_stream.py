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

"""``write_rocketmq_stream`` and ``rocketmq_stream_writer``: typed keywords in, a plain
``df.writeStream`` call on the connector out.

Nothing here touches the JVM, so every function works the same in a classic and a Spark Connect
session. The connector checks every option when Spark plans the query; when that happens in a call
made here (a stream's ``start``), its refusal of a keyword's value is re-raised as a ``ValueError``
naming the keyword. A stream's sink is planned at its first batch: those errors name the option by
its key (``OPTION_KEYS`` maps keywords to keys).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Optional, Union

from rocketmq_spark._converters import Duration, checked_text
from rocketmq_spark._options import naming_keywords
from rocketmq_spark._sink import stream_writer
from rocketmq_spark._trigger import DEFAULT_REAL_TIME_BATCH, start_without_allowlist

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.streaming.query import StreamingQuery
    from pyspark.sql.streaming.readwriter import DataStreamWriter


def rocketmq_stream_writer(
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
    broker_transaction_check_interval: Optional[Duration] = None,
    broker_transaction_check_max: Optional[int] = None,
    request_timeout_ms: Optional[int] = None,
    metadata_retries: Optional[int] = None,
    metadata_retry_interval_ms: Optional[int] = None,
    retry_timeout_ms: Optional[int] = None,
    max_messages_per_second: Optional[int] = None,
    max_bytes_per_second: Optional[int] = None,
    trace_enabled: Optional[bool] = None,
    trace_topic: Optional[str] = None,
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
    continuous: Optional[str] = None,
    query_name: Optional[str] = None,
    options: Optional[Mapping[str, str]] = None,
) -> "DataStreamWriter":
    """The ``DataStreamWriter`` :func:`write_rocketmq_stream` starts, configured and not started.

    ``df.writeStream`` with format ``rocketmq``, the connector options, the checkpoint location,
    output mode, trigger and query name set as :func:`write_rocketmq_stream` sets them (the same
    keywords and checks), for a query you finish yourself: add a writer option or a trigger of your
    own, then call ``start()``, or ``toTable(...)`` to write to a table of the RocketMQ catalog.
    ``foreachBatch(f)`` or ``foreach(f)`` on it replaces the RocketMQ sink by ``f`` (the checkpoint,
    trigger and name stay; the connector options then do nothing: write each batch with
    :func:`write_rocketmq` inside ``f``). Real-time mode is started by
    ``write_rocketmq_stream(real_time=...)``, which also lifts Spark's sink allowlist check around
    ``start()``.

    The connector checks its options when the started query runs its first batch: a refused value
    stops the query, naming the option.

    Parameters
    ----------
    df : DataFrame
        The rows to write: a streaming DataFrame (from ``spark.readStream``), with the columns
        :func:`write_rocketmq` takes.
    name_server : str
        The cluster's name server, ``"host:port"`` (several separated by ``;``).
    topic : str, optional
        The topic every row goes to; without it, each row's ``topic`` column.
    producer_group, send_timeout_ms, send_retries : optional
        The sink's keywords, as :func:`write_rocketmq` takes them.
    max_in_flight_messages, max_in_flight_bytes : optional
        The sink's keywords, as :func:`write_rocketmq` takes them.
    send_batch_messages, send_batch_bytes, compression_threshold, delivery_delay_ms : optional
        The sink's keywords, as :func:`write_rocketmq` takes them.
    delivery_guarantee, transaction_timeout : optional
        The delivery guarantee and the transactions' timeout, as :func:`write_rocketmq` takes them;
        an exactly-once stream needs ``checkpoint_location`` (or Spark's
        ``spark.sql.streaming.checkpointLocation``).
    broker_transaction_check_interval, broker_transaction_check_max : optional
        The brokers' check-back settings, stated, as :func:`write_rocketmq` takes them.
    request_timeout_ms, metadata_retries, metadata_retry_interval_ms : int, optional
        Metadata requests, as :func:`write_rocketmq` takes them.
    retry_timeout_ms : int, optional
        Retries, as :func:`write_rocketmq` takes them.
    max_messages_per_second, max_bytes_per_second : int, optional
        A cap on the messages, or bytes of message bodies, the whole query moves a second, shared
        out over its tasks that run at once (a managed service's rate quota, say).
    trace_enabled, trace_topic : optional
        Message traces of the rows written, as :func:`write_rocketmq` takes them.
    access_key, secret_key, security_token, namespace, use_tls, access_channel : optional
        The connection's keywords, as :func:`write_rocketmq` takes them.
    checkpoint_location : str, optional
        Where the query keeps its progress (Spark's ``spark.sql.streaming.checkpointLocation`` when
        not given).
    output_mode : str, optional
        ``"append"``, ``"update"`` or ``"complete"``.
    processing_time : str, optional
        A trigger interval, such as ``"10 seconds"``. One trigger at most.
    available_now : bool, default False
        Process what is there when the query starts, then stop.
    continuous : str, optional
        Continuous processing, recording progress at this interval, such as ``"1 second"`` (see
        docs/continuous.md).
    query_name : str, optional
        The query's name.
    options : dict of str to str, optional
        Writer options by their keys, as ``.option()`` takes them, for an option no keyword gives.
        An option given both ways (``checkpointLocation`` is ``checkpoint_location``'s) with
        different values is a ``ValueError`` naming both.

    Returns
    -------
    DataStreamWriter
        The configured writer, not started.

    Examples
    --------
    >>> from rocketmq_spark import read_rocketmq_stream, rocketmq_stream_writer
    >>> orders = read_rocketmq_stream(spark, "127.0.0.1:9876", "orders")  # doctest: +SKIP
    >>> writer = rocketmq_stream_writer(orders.select("body"), "127.0.0.1:9876", "orders-copy",
    ...                                 checkpoint_location="/chk/orders-copy")  # doctest: +SKIP
    >>> query = writer.trigger(processingTime="30 seconds").start()  # doctest: +SKIP
    """
    writer, _ = stream_writer(df, dict(locals()), "rocketmq_stream_writer")
    return writer


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
    broker_transaction_check_interval: Optional[Duration] = None,
    broker_transaction_check_max: Optional[int] = None,
    request_timeout_ms: Optional[int] = None,
    metadata_retries: Optional[int] = None,
    metadata_retry_interval_ms: Optional[int] = None,
    retry_timeout_ms: Optional[int] = None,
    max_messages_per_second: Optional[int] = None,
    max_bytes_per_second: Optional[int] = None,
    trace_enabled: Optional[bool] = None,
    trace_topic: Optional[str] = None,
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
    options: Optional[Mapping[str, str]] = None,
) -> "StreamingQuery":
    """Start a streaming query that writes a streaming DataFrame to RocketMQ, one message per row.

    The rows and the connector keywords are those of :func:`write_rocketmq`; the query's own
    keywords set its checkpoint, output mode, trigger (one at most) and name. It starts the writer
    :func:`rocketmq_stream_writer` returns for the same keywords. The connector checks the sink's
    options when the query runs its first batch: a refused value stops the query
    (``awaitTermination`` raises it), naming the option.

    ``continuous`` runs the query under Spark's continuous processing: each queue read by a task of
    its own, every row sent as it arrives, at-least-once (exactly-once is refused there). It needs a
    task slot per queue of the source, and supports map-like queries only (see docs/real-time.md,
    "Continuous processing").

    ``real_time`` runs the query in Spark's real-time mode (pyspark 4.2 and later): every row is
    sent as it arrives, the output mode is ``update`` unless given, Spark 4.3 tracks a stateless
    query's progress asynchronously as it does for its Kafka sink (the writer passes Spark's check
    that such a sink is one of its own: a real-time write is at-least-once, as Kafka's is), and
    Spark's real-time sink allowlist check is off for this query (the RocketMQ sink is not on
    Spark's fixed list; Spark then warns instead of failing on operators outside its real-time
    list). Nothing else needs setting. Queries started so from several threads at once are safe: the
    session's setting is put back once the last of them has started.

    Parameters
    ----------
    df : DataFrame
        The rows to write: a streaming DataFrame (from ``spark.readStream``), with the columns
        :func:`write_rocketmq` takes.
    name_server : str
        The cluster's name server, ``"host:port"`` (several separated by ``;``).
    topic : str, optional
        The topic every row goes to; without it, each row's ``topic`` column.
    producer_group, send_timeout_ms, send_retries : optional
        The sink's keywords, as :func:`write_rocketmq` takes them.
    max_in_flight_messages, max_in_flight_bytes : optional
        The sink's keywords, as :func:`write_rocketmq` takes them.
    send_batch_messages, send_batch_bytes, compression_threshold, delivery_delay_ms : optional
        The sink's keywords, as :func:`write_rocketmq` takes them.
    delivery_guarantee, transaction_timeout : optional
        The delivery guarantee and the transactions' timeout, as :func:`write_rocketmq` takes them;
        an exactly-once stream needs ``checkpoint_location`` (or Spark's
        ``spark.sql.streaming.checkpointLocation``).
    broker_transaction_check_interval, broker_transaction_check_max : optional
        The brokers' check-back settings, stated, as :func:`write_rocketmq` takes them.
    request_timeout_ms, metadata_retries, metadata_retry_interval_ms : int, optional
        Metadata requests, as :func:`write_rocketmq` takes them.
    retry_timeout_ms : int, optional
        Retries, as :func:`write_rocketmq` takes them.
    max_messages_per_second, max_bytes_per_second : int, optional
        A cap on the messages, or bytes of message bodies, the whole query moves a second, shared
        out over its tasks that run at once (a managed service's rate quota, say).
    trace_enabled, trace_topic : optional
        Message traces of the rows written, as :func:`write_rocketmq` takes them.
    access_key, secret_key, security_token, namespace, use_tls, access_channel : optional
        The connection's keywords, as :func:`write_rocketmq` takes them.
    checkpoint_location : str, optional
        Where the query keeps its progress (Spark's ``spark.sql.streaming.checkpointLocation`` when
        not given).
    output_mode : str, optional
        ``"append"``, ``"update"`` or ``"complete"``.
    processing_time : str, optional
        A trigger interval, such as ``"10 seconds"``. One trigger at most.
    available_now : bool, default False
        Process what is there when the query starts, then stop.
    real_time : bool or str, default False
        Real-time mode: ``True`` for Spark's batch duration of 5 minutes, or a duration such as
        ``"30 seconds"`` (Spark's minimum is 5 seconds; each batch end pauses the query for about
        150 ms).
    continuous : str, optional
        Continuous processing, recording progress at this interval, such as ``"1 second"``.
    query_name : str, optional
        The query's name.
    options : dict of str to str, optional
        Writer options by their keys, as ``.option()`` takes them, for an option no keyword gives.
        An option given both ways with different values is a ``ValueError`` naming both.

    Returns
    -------
    StreamingQuery
        The started query.

    Examples
    --------
    >>> from rocketmq_spark import write_rocketmq_stream
    >>> query = write_rocketmq_stream(counts, "127.0.0.1:9876", "counts", output_mode="update",
    ...                               checkpoint_location="/chk/counts")  # doctest: +SKIP
    >>> query.awaitTermination()  # doctest: +SKIP
    """
    values = dict(locals())
    batch = None if real_time is False else _real_time_batch(real_time)
    writer, keywords = stream_writer(df, values, "write_rocketmq_stream", batch)
    with naming_keywords(keywords):
        if batch is None:
            return writer.start()
        return start_without_allowlist(writer, df.sparkSession)


def _real_time_batch(real_time: object) -> str:
    """The batch duration ``real_time`` asks for: ``True`` for Spark's default, or the duration
    given."""
    if real_time is True:
        return DEFAULT_REAL_TIME_BATCH
    if not isinstance(real_time, str):
        raise TypeError(
            f"real_time must be True or a batch duration such as '30 seconds', not {real_time!r}"
        )
    return checked_text("real_time", real_time)


__all__ = ["rocketmq_stream_writer", "write_rocketmq_stream"]
