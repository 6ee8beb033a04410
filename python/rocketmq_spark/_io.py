"""``read_rocketmq`` and ``write_rocketmq``: keyword arguments in, connector options out."""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Optional, Union

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

FORMAT = "rocketmq"

#: Keyword argument -> connector option key, for every option the functions accept.
OPTION_KEYS: Dict[str, str] = {
    "name_server": "nameServer",
    "topic": "topic",
    "starting_offsets": "startingOffsets",
    "ending_offsets": "endingOffsets",
    "sub_expression": "subExpression",
    "pull_timeout_ms": "pullTimeoutMs",
    "pull_batch_size": "pullBatchSize",
    "fail_on_data_loss": "failOnDataLoss",
    "request_timeout_ms": "requestTimeoutMs",
    "metadata_retries": "metadataRetries",
    "metadata_retry_interval_ms": "metadataRetryIntervalMs",
    "send_timeout_ms": "sendTimeoutMs",
    "max_in_flight_messages": "maxInFlightMessages",
}

OptionValue = Union[str, int, bool, None]


def _check_text(name: str, value: object, required: bool) -> None:
    if value is None:
        if required:
            raise ValueError(f"{name} is required: pass {name}='...'")
        return
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, not {type(value).__name__}: pass {name}='...'")
    if required and not value.strip():
        raise ValueError(f"{name} must not be empty")


def _check_positive_int(name: str, value: object) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}: pass e.g. {name}=1000")
    if value <= 0:
        raise ValueError(f"{name} must be a positive int, not {value}")


def _options(**kwargs: OptionValue) -> Dict[str, str]:
    """Map keyword arguments that are set onto connector option keys, as strings."""
    out: Dict[str, str] = {}
    for name, value in kwargs.items():
        if value is None:
            continue
        key = OPTION_KEYS[name]
        if isinstance(value, bool):
            out[key] = "true" if value else "false"
        else:
            out[key] = str(value)
    return out


def read_rocketmq(
    spark: "SparkSession",
    name_server: str,
    topic: str,
    *,
    starting_offsets: Optional[str] = None,
    ending_offsets: Optional[str] = None,
    sub_expression: Optional[str] = None,
    pull_timeout_ms: Optional[int] = None,
    pull_batch_size: Optional[int] = None,
    fail_on_data_loss: Optional[bool] = None,
    request_timeout_ms: Optional[int] = None,
    metadata_retries: Optional[int] = None,
    metadata_retry_interval_ms: Optional[int] = None,
) -> "DataFrame":
    """Read RocketMQ topics as a batch DataFrame (one row per message).

    Options left as ``None`` keep the connector's defaults. The rows have the columns topic, flag,
    body, properties, brokerName, queueId, queueOffset, bornTimestamp and storeTimestamp.

    Example::

        >>> df = read_rocketmq(spark, name_server="127.0.0.1:9876", topic="orders")  # doctest: +SKIP
        >>> df.selectExpr("CAST(body AS STRING)").show()  # doctest: +SKIP
    """
    _check_text("name_server", name_server, required=True)
    _check_text("topic", topic, required=True)
    for name, value in (("starting_offsets", starting_offsets), ("ending_offsets", ending_offsets),
                        ("sub_expression", sub_expression)):
        _check_text(name, value, required=False)
    for name, number in (("pull_timeout_ms", pull_timeout_ms), ("pull_batch_size", pull_batch_size),
                         ("request_timeout_ms", request_timeout_ms), ("metadata_retries", metadata_retries)):
        _check_positive_int(name, number)
    if fail_on_data_loss is not None and not isinstance(fail_on_data_loss, bool):
        raise TypeError("fail_on_data_loss must be a bool: pass fail_on_data_loss=True or False")
    options = _options(
        name_server=name_server, topic=topic, starting_offsets=starting_offsets,
        ending_offsets=ending_offsets, sub_expression=sub_expression, pull_timeout_ms=pull_timeout_ms,
        pull_batch_size=pull_batch_size, fail_on_data_loss=fail_on_data_loss,
        request_timeout_ms=request_timeout_ms, metadata_retries=metadata_retries,
        metadata_retry_interval_ms=metadata_retry_interval_ms,
    )
    return spark.read.format(FORMAT).options(**options).load()


def write_rocketmq(
    df: "DataFrame",
    name_server: str,
    topic: Optional[str] = None,
    *,
    send_timeout_ms: Optional[int] = None,
    max_in_flight_messages: Optional[int] = None,
    request_timeout_ms: Optional[int] = None,
    metadata_retries: Optional[int] = None,
    metadata_retry_interval_ms: Optional[int] = None,
) -> None:
    """Write a DataFrame to RocketMQ, one message per row; returns once every message is acknowledged.

    The DataFrame needs a ``body`` column (string or binary) and, unless ``topic`` is given, a
    string ``topic`` column; an optional string ``tags`` column sets each message's tag.

    Example::

        >>> df = spark.createDataFrame([("hello",)], "body STRING")  # doctest: +SKIP
        >>> write_rocketmq(df, name_server="127.0.0.1:9876", topic="greetings")  # doctest: +SKIP
    """
    _check_text("name_server", name_server, required=True)
    _check_text("topic", topic, required=False)
    for name, number in (("send_timeout_ms", send_timeout_ms), ("max_in_flight_messages", max_in_flight_messages),
                         ("request_timeout_ms", request_timeout_ms), ("metadata_retries", metadata_retries)):
        _check_positive_int(name, number)
    options = _options(
        name_server=name_server, topic=topic, send_timeout_ms=send_timeout_ms,
        max_in_flight_messages=max_in_flight_messages, request_timeout_ms=request_timeout_ms,
        metadata_retries=metadata_retries, metadata_retry_interval_ms=metadata_retry_interval_ms,
    )
    df.write.format(FORMAT).mode("append").options(**options).save()
