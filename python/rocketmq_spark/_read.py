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

"""``read_rocketmq`` and ``read_rocketmq_stream``: typed keywords in, a plain ``spark.read`` /
``spark.readStream`` call on the connector out.

Nothing here touches the JVM, so every function works the same in a classic and a Spark Connect
session. The connector checks every option when Spark plans the query. A read is planned at its
first action, and a stream's source at its first batch: those errors name the option by its key
(``OPTION_KEYS`` maps keywords to keys).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Mapping, Optional, Sequence, Union, cast

from rocketmq_spark._converters import Duration
from rocketmq_spark._options import (
    FORMAT,
    connector_options,
    option_keywords,
    required,
    with_options,
)
from rocketmq_spark._positions import EARLIEST, LATEST, QueueOffsets, QueueTimestamps, Timestamp

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

Topics = Union[str, Sequence[str]]
Offsets = Union[str, QueueOffsets]
Timestamps = Union[str, QueueTimestamps]
#: A number of broker groups, or their names.
BrokerGroups = Union[int, str, Sequence[str]]


def _read_options(values: Dict[str, object]) -> Dict[str, str]:
    """The options of a read's keywords (``values``, the function's arguments but ``spark``),
    checked; with those of ``options`` added."""
    extra = cast("Optional[Mapping[str, str]]", values.pop("options"))
    required("name_server", values["name_server"])
    if (values["topic"] is None) == (values["topic_pattern"] is None):
        raise ValueError(
            "pass one of topic (a topic name or a list of them) and topic_pattern (a regular "
            "expression)"
        )
    starts = [
        k
        for k in ("starting_offsets", "starting_timestamp", "starting_offsets_by_timestamp")
        if values.get(k) is not None
    ]
    if len(starts) > 1:
        raise ValueError(f"{' and '.join(starts)} each say where to start: pass only one of them")
    ends = [
        k
        for k in ("ending_offsets", "ending_timestamp", "ending_offsets_by_timestamp")
        if values.get(k) is not None
    ]
    if len(ends) > 1:
        raise ValueError(f"{' and '.join(ends)} each say where to end: pass only one of them")
    return with_options(connector_options(values), extra, option_keywords(values))


def read_rocketmq(
    spark: "SparkSession",
    name_server: str,
    topic: Optional[Topics] = None,
    *,
    topic_pattern: Optional[str] = None,
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
    max_messages_per_second: Optional[int] = None,
    max_bytes_per_second: Optional[int] = None,
    access_key: Optional[str] = None,
    secret_key: Optional[str] = None,
    security_token: Optional[str] = None,
    namespace: Optional[str] = None,
    use_tls: Optional[bool] = None,
    access_channel: Optional[str] = None,
    producer_clock_skew_ms: Optional[int] = None,
    options: Optional[Mapping[str, str]] = None,
) -> "DataFrame":
    """Read RocketMQ topics as a batch DataFrame, one row per message.

    Reads every queue of ``topic`` from ``starting_offsets`` up to ``ending_offsets``. Keywords left
    as ``None`` keep the connector's defaults; each is the option key in snake_case (the option
    reference, docs/reference/options.md, has every option's details). The connector checks the
    options when the read first runs: a refused value fails that action, naming the option.

    Parameters
    ----------
    spark : SparkSession
        The session to read with (classic or Spark Connect).
    name_server : str
        The cluster's name server, ``"host:port"`` (several separated by ``;``).
    topic : str or list of str, optional
        The topic to read, or several; or, instead, ``topic_pattern``.
    topic_pattern : str, optional
        Instead of ``topic``: every topic of the cluster whose whole name matches this Java regular
        expression (RocketMQ's retry, dead-letter and system topics never match). A batch read lists
        the topics once; a stream also reads each topic that starts to match while it runs, from its
        first message. A RocketMQ 5 proxy does not list topics: through one, name them with
        ``topic``.
    starting_offsets : str or dict, optional
        Where each queue starts: ``EARLIEST`` (the default), ``GROUP`` (where ``consumer_group``
        committed its progress on the brokers), or per-queue offsets
        ``{"topic": {"broker": {queue_id: offset}}}`` or their JSON (``EARLIEST_OFFSET`` /
        ``LATEST_OFFSET`` for a queue's ends; queues not listed start at their earliest).
    ending_offsets : str or dict, optional
        Where each queue ends, exclusive: ``LATEST`` (the default) or per-queue offsets as above.
    starting_timestamp, ending_timestamp : datetime or int, optional
        Start (end) every queue at its first message stored at or after this time: a ``datetime``
        with a time zone, or epoch milliseconds. One start keyword at most, and one end keyword.
    starting_offsets_by_timestamp, ending_offsets_by_timestamp : dict or str, optional
        The same, one time per queue: ``{"topic": {"broker": {queue_id: time}}}`` or its JSON.
    sub_expression : str, optional
        A tag expression such as ``"paid || shipped"``: only messages whose tag matches are read.
    sql_filter : str, optional
        An SQL92 expression over message properties, evaluated by the brokers (they need
        ``enablePropertyFilter=true``).
    include_extra_columns : bool, optional
        Adds the columns tags, keys and msgId.
    min_partitions : int, optional
        The fewest Spark partitions to read with (large queue ranges are split).
    pull_timeout_ms, pull_batch_size, pulls_in_flight, read_ahead_bytes : int, optional
        How tasks pull: the timeout of one pull, the most messages per pull, the pulls a task keeps
        under way, and the unread bytes at which it stops pulling ahead.
    fail_on_data_loss : bool, optional
        Whether to fail when messages may have been lost (expired or deleted); a batch read always
        does.
    expected_broker_groups : int, str or list of str, optional
        The broker groups (a number, or their names) that must serve each topic: a read waits for
        missing ones (``retry_timeout_ms``), then fails naming them, instead of reading the groups
        still there.
    consumer_group : str, optional
        The consumer group tasks pull as, and whose committed offsets ``starting_offsets=GROUP``
        starts from.
    group_offset_fallback : str, optional
        With ``GROUP``: where a queue the group has not committed starts, ``LATEST`` (the default)
        or ``EARLIEST``.
    request_timeout_ms, metadata_retries, metadata_retry_interval_ms : int, optional
        Metadata requests: the timeout of each, their attempts and the pause between two.
    retry_timeout_ms : int, optional
        How long failed pulls are retried and a missing broker waited for.
    max_messages_per_second, max_bytes_per_second : int, optional
        A cap on the messages, or bytes of message bodies, the whole query moves a second, shared
        out over its tasks that run at once (a managed service's rate quota, say).
    access_key, secret_key, security_token : str, optional
        ACL credentials (the token for temporary ones); see docs/security.md for the other places
        they may come from.
    namespace : str, optional
        The namespace of the topics and the group.
    use_tls : bool, optional
        Connect over TLS.
    access_channel : str, optional
        ``"LOCAL"`` (the default) or ``"CLOUD"``, for managed services that ask for it.
    producer_clock_skew_ms : int, optional
        How far producers' clocks may run ahead of the brokers': lets a ``bornTimestamp`` filter
        narrow the read.
    options : dict of str to str, optional
        Connector options by their keys, as ``.option()`` takes them, for an option no keyword
        gives. An option given both ways with different values is a ``ValueError`` naming both.

    Returns
    -------
    DataFrame
        One row per message, with the columns topic, flag, body (binary), properties (a JSON string;
        see :func:`decode_properties`), brokerName, queueId, queueOffset, bornTimestamp and
        storeTimestamp, then tags, keys and msgId when ``include_extra_columns=True``.

    Examples
    --------
    >>> from rocketmq_spark import EARLIEST, read_rocketmq
    >>> df = read_rocketmq(spark, "127.0.0.1:9876", "orders", starting_offsets=EARLIEST,
    ...                    sub_expression="paid")  # doctest: +SKIP
    >>> df.selectExpr("CAST(body AS STRING)").show()  # doctest: +SKIP
    """
    values = dict(locals())
    del values["spark"]
    if isinstance(starting_offsets, str) and starting_offsets.strip().lower() == LATEST:
        raise ValueError(
            "starting_offsets=LATEST reads nothing in a batch query: use EARLIEST, per-queue "
            "offsets, "
            "or read_rocketmq_stream to read what arrives from now on"
        )
    if isinstance(ending_offsets, str) and ending_offsets.strip().lower() == EARLIEST:
        raise ValueError(
            "ending_offsets=EARLIEST reads nothing: use LATEST (the default) or per-queue offsets"
        )
    settings = _read_options(values)
    return spark.read.format(FORMAT).options(**settings).load()


def read_rocketmq_stream(
    spark: "SparkSession",
    name_server: str,
    topic: Optional[Topics] = None,
    *,
    topic_pattern: Optional[str] = None,
    starting_offsets: Optional[Offsets] = None,
    starting_timestamp: Optional[Timestamp] = None,
    starting_offsets_by_timestamp: Optional[Timestamps] = None,
    max_offsets_per_trigger: Optional[int] = None,
    max_bytes_per_trigger: Optional[int] = None,
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
    max_messages_per_second: Optional[int] = None,
    max_bytes_per_second: Optional[int] = None,
    access_key: Optional[str] = None,
    secret_key: Optional[str] = None,
    security_token: Optional[str] = None,
    namespace: Optional[str] = None,
    use_tls: Optional[bool] = None,
    access_channel: Optional[str] = None,
    options: Optional[Mapping[str, str]] = None,
) -> "DataFrame":
    """Read RocketMQ topics as a streaming DataFrame (Structured Streaming), one row per message.

    The twin of :func:`read_rocketmq` for ``spark.readStream``: the same columns and keywords, no
    end keywords, plus the rate limits. A new query starts at ``starting_offsets``; a restarted one
    resumes from its checkpoint. The connector checks the options when the query runs its first
    batch: a refused value stops the query (``awaitTermination`` raises it), naming the option.

    Parameters
    ----------
    spark : SparkSession
        The session to read with (classic or Spark Connect).
    name_server : str
        The cluster's name server, ``"host:port"`` (several separated by ``;``).
    topic : str or list of str, optional
        The topic to read, or several; or, instead, ``topic_pattern``.
    topic_pattern : str, optional
        Instead of ``topic``, a Java regular expression over topic names, as in ``read_rocketmq``;
        the stream looks for matching topics at each batch and reads one that appears from its first
        message.
    starting_offsets : str or dict, optional
        Where a new query starts: ``LATEST`` (the default: only messages that arrive after it
        starts), ``EARLIEST`` (everything retained), ``GROUP`` (where ``consumer_group`` committed),
        or per-queue offsets ``{"topic": {"broker": {queue_id: offset}}}`` or their JSON.
    starting_timestamp : datetime or int, optional
        Start every queue at its first message stored at or after this time (a ``datetime`` with a
        time zone, or epoch milliseconds). One start keyword at most.
    starting_offsets_by_timestamp : dict or str, optional
        The same, one time per queue: ``{"topic": {"broker": {queue_id: time}}}`` or its JSON.
    max_offsets_per_trigger : int, optional
        The most offsets one micro-batch reads over all queues.
    max_bytes_per_trigger : int, optional
        The most bytes of message bodies one micro-batch reads, estimated from what an offset
        carried in the batch before; a message larger than this goes alone. With
        ``max_offsets_per_trigger``, the tighter holds.
    min_offsets_per_trigger : int, optional
        The fewest new offsets a micro-batch waits for, at most ``max_trigger_delay``.
    max_trigger_delay : timedelta or str, optional
        The longest a trigger is skipped while fewer than ``min_offsets_per_trigger`` offsets are
        new: a ``timedelta`` or the connector's duration text, such as ``"30s"`` or ``"15m"`` (it
        checks the text).
    sub_expression : str, optional
        A tag expression such as ``"paid || shipped"``: only messages whose tag matches are read.
    sql_filter : str, optional
        An SQL92 expression over message properties, evaluated by the brokers.
    include_extra_columns : bool, optional
        Adds the columns tags, keys and msgId.
    min_partitions : int, optional
        The fewest Spark partitions to read each micro-batch with.
    pull_timeout_ms, pull_batch_size, pulls_in_flight, read_ahead_bytes : int, optional
        How tasks pull: the timeout of one pull, the most messages per pull, the pulls a task keeps
        under way, and the unread bytes at which it stops pulling ahead.
    fail_on_data_loss : bool, optional
        Whether to fail when messages may have been lost (expired or deleted) rather than skip them.
    expected_broker_groups : int, str or list of str, optional
        The broker groups (a number, or their names) that must serve each topic.
    consumer_group : str, optional
        The consumer group tasks pull as; the query commits its progress to the brokers for it after
        each micro-batch (the checkpoint stays the source of truth).
    group_offset_fallback : str, optional
        With ``GROUP``: where a queue the group has not committed starts, ``LATEST`` (the default)
        or ``EARLIEST``.
    request_timeout_ms, metadata_retries, metadata_retry_interval_ms : int, optional
        Metadata requests: the timeout of each, their attempts and the pause between two.
    retry_timeout_ms : int, optional
        How long failed pulls are retried and a missing broker waited for.
    max_messages_per_second, max_bytes_per_second : int, optional
        A cap on the messages, or bytes of message bodies, the whole query moves a second, shared
        out over its tasks that run at once (a managed service's rate quota, say).
    access_key, secret_key, security_token : str, optional
        ACL credentials (the token for temporary ones).
    namespace : str, optional
        The namespace of the topics and the group.
    use_tls : bool, optional
        Connect over TLS.
    access_channel : str, optional
        ``"LOCAL"`` (the default) or ``"CLOUD"``.
    options : dict of str to str, optional
        Connector options by their keys, as ``.option()`` takes them, for an option no keyword
        gives. An option given both ways with different values is a ``ValueError`` naming both.

    Returns
    -------
    DataFrame
        A streaming DataFrame with the columns of :func:`read_rocketmq`.

    Examples
    --------
    >>> from rocketmq_spark import read_rocketmq_stream
    >>> stream = read_rocketmq_stream(spark, "127.0.0.1:9876", "orders",
    ...                               max_offsets_per_trigger=10_000)  # doctest: +SKIP
    >>> query = stream.writeStream.format("console").start()  # doctest: +SKIP
    """
    values = dict(locals())
    del values["spark"]
    settings = _read_options(values)
    return spark.readStream.format(FORMAT).options(**settings).load()


__all__ = ["read_rocketmq", "read_rocketmq_stream"]
