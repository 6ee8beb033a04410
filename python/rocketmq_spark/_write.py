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

"""``write_rocketmq``: typed keywords in, a plain ``df.write`` call on the connector out.

Nothing here touches the JVM, so it works the same in a classic and a Spark Connect session. The
connector checks every option when Spark plans the query; when that happens in a call made here (a
batch write's ``save``; a deprecated streaming write's ``start`` is wrapped alike), its refusal of a
keyword's value is re-raised as a ``ValueError`` naming the keyword.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Mapping, Optional

from rocketmq_spark._converters import Duration
from rocketmq_spark._options import FORMAT, naming_keywords, with_options
from rocketmq_spark._sink import STREAM_KEYWORDS, sink_options, stream_writer

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


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
    query_name: Optional[str] = None,
    options: Optional[Mapping[str, str]] = None,
) -> None:
    """Write a batch DataFrame to RocketMQ, one message per row; returns once every message is
    acknowledged.

    The DataFrame needs a ``body`` column (string or binary) and, unless ``topic`` is given, a
    string ``topic`` column. Optional columns: ``tags``, ``keys`` (string or array of strings;
    required by a compacted topic), ``properties`` (map of strings), ``shardingKey``,
    ``deliverTime`` (timestamp or epoch ms), ``priority`` (int, RocketMQ 5.4+) and ``liteTopic``
    (string, RocketMQ 5.5+).
    The connector checks the options before anything is sent; its refusal of a keyword's value is
    raised as a ``ValueError`` naming the keyword and the option (the connector's error is its
    ``__cause__``).

    A streaming DataFrame goes to :func:`write_rocketmq_stream`. Passing one here (with the keywords
    ``checkpoint_location``, ``output_mode``, ``processing_time``, ``available_now`` and
    ``query_name``) still starts its query and returns the ``StreamingQuery``, with a
    ``DeprecationWarning``: this is removed in 0.2.0.

    Parameters
    ----------
    df : DataFrame
        The rows to write: a batch DataFrame.
    name_server : str
        The cluster's name server, ``"host:port"`` (several separated by ``;``).
    topic : str, optional
        The topic every row goes to; without it, each row's ``topic`` column.
    producer_group : str, optional
        The producer group the tasks' producers join.
    send_timeout_ms, send_retries : int, optional
        The timeout of one send attempt, and the most resends of one message (unset: as many as
        ``retry_timeout_ms`` allows).
    max_in_flight_messages, max_in_flight_bytes : int, optional
        The most messages, and body bytes, a task has sent but not yet seen acknowledged.
    send_batch_messages, send_batch_bytes : int, optional
        The most messages, and bytes, one send request carries.
    compression_threshold : int, optional
        Bodies larger than this many bytes are compressed.
    delivery_delay_ms : int, optional
        Deliver every message this long after it is sent (RocketMQ 5 timer messages; a
        ``deliverTime`` column wins).
    delivery_guarantee : str, optional
        ``"at_least_once"`` (the default) or ``"exactly_once"`` (RocketMQ transactions; see
        docs/exactly-once.md).
    transaction_timeout : timedelta or str, optional
        With ``exactly_once``: how long half messages wait for the driver's decision (the connector
        checks its bounds: at least twice the brokers' ``transactionCheckInterval``, 60 seconds on
        RocketMQ 5's defaults): a ``timedelta`` or the connector's duration text such as ``"2m"``.
    broker_transaction_check_interval : timedelta or str, optional
        With ``exactly_once``: the brokers' ``transactionCheckInterval``, stated instead of asked
        (asking is an admin request a least-privilege user may not make; unset, RocketMQ 5's 30 s is
        assumed where a broker won't say).
    broker_transaction_check_max : int, optional
        With ``exactly_once``: the brokers' ``transactionCheckMax``, stated as the interval is
        (default asked, else 15).
    request_timeout_ms, metadata_retries, metadata_retry_interval_ms : int, optional
        Metadata requests: the timeout of each, their attempts and the pause between two.
    retry_timeout_ms : int, optional
        How long failed sends are retried and a missing broker waited for.
    max_messages_per_second, max_bytes_per_second : int, optional
        A cap on the messages, or bytes of message bodies, the whole query moves a second, shared
        out over its tasks that run at once (a managed service's rate quota, say).
    trace_enabled : bool, optional
        Record each message written in RocketMQ's message trace, as RocketMQ's producers do with
        trace on (default ``False``; see docs/operations.md#message-traces).
    trace_topic : str, optional
        The topic trace records go to (default ``RMQ_SYS_TRACE_TOPIC``).
    access_key, secret_key, security_token : str, optional
        ACL credentials (the token for temporary ones).
    namespace : str, optional
        The namespace of the topic and the producer group.
    use_tls : bool, optional
        Connect over TLS.
    access_channel : str, optional
        ``"LOCAL"`` (the default) or ``"CLOUD"``.
    checkpoint_location, output_mode, processing_time, available_now, query_name : optional
        Deprecated here, for a streaming ``df`` only: see :func:`write_rocketmq_stream`.
    options : dict of str to str, optional
        Connector options by their keys, as ``.option()`` takes them, for an option no keyword
        gives. An option given both ways with different values is a ``ValueError`` naming both.

    Returns
    -------
    None
        Once every message is acknowledged (for a streaming ``df``, deprecated: its started
        ``StreamingQuery``).

    Examples
    --------
    >>> from rocketmq_spark import write_rocketmq
    >>> rows = spark.createDataFrame(
    ...     [("hello", "greeting")], "body STRING, tags STRING"
    ... )  # doctest: +SKIP
    >>> write_rocketmq(rows, "127.0.0.1:9876", "greetings", send_timeout_ms=5000)  # doctest: +SKIP
    """
    values = dict(locals())
    typed, keywords = sink_options(values)
    if df.isStreaming:
        warnings.warn(
            "write_rocketmq with a streaming DataFrame is deprecated and stops working in 0.2.0: "
            "use write_rocketmq_stream, which takes the same keywords and returns the "
            "StreamingQuery",
            DeprecationWarning,
            stacklevel=2,
        )
        writer, keywords = stream_writer(df, values, "write_rocketmq")
        with naming_keywords(keywords):
            return writer.start()  # type: ignore[return-value]  # the deprecated call
    given = [k for k in STREAM_KEYWORDS if values.get(k) not in (None, False)]
    if given:
        raise ValueError(
            f"{', '.join(given)} only apply to streaming DataFrames (write_rocketmq_stream); "
            "this one is a batch DataFrame"
        )
    settings = with_options(typed, options, keywords)
    batch_writer = df.write.format(FORMAT).mode("append").options(**settings)
    with naming_keywords(keywords):
        batch_writer.save()
    return None


__all__ = ["write_rocketmq"]
