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

"""Keyword arguments to connector options: one converter per option, checked before the JVM is
reached.

Every keyword is the option key in snake_case (``pullBatchSize`` is ``pull_batch_size``). The checks
here are the cheap ones (types, ranges, shapes); the connector checks the rest and names the option
too. Durations are only converted here (a ``timedelta`` to the connector's text): the connector
alone reads their grammar and their bounds, and ``naming_keywords`` turns its error about a
keyword's value into one naming the keyword.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from typing import Dict, Iterator, Mapping, Optional, Tuple

from rocketmq_spark._converters import (
    Convert,
    _access_channel,
    _broker_groups,
    _delivery_guarantee,
    _duration,
    _flag,
    _group_fallback,
    _int32,
    _non_negative,
    _non_negative_int32,
    _offsets,
    _positive,
    _timestamp,
    _timestamps,
    _topics,
    checked_text,
)

#: Converter of each kind of value, by the kind's name in the connector's option declarations.
_CONVERTERS: Dict[str, Convert] = {
    "text": checked_text,
    "name server": checked_text,
    "group name": checked_text,
    "sql92": checked_text,
    "topics": _topics,
    "topic": checked_text,
    "topic pattern": checked_text,
    "positive int": _int32,
    "non-negative int": _non_negative_int32,
    "positive long": _positive,
    "non-negative long": _non_negative,
    "boolean": _flag,
    "duration": _duration,
    "epoch millis": _timestamp,
    "offsets": _offsets,
    "group fallback": _group_fallback,
    "per-queue timestamps": _timestamps,
    "namespace": checked_text,
    "access channel": _access_channel,
    "delivery guarantee": _delivery_guarantee,
    # At least 2 s, and twice the brokers' check interval: the connector checks that, as every
    # duration's text.
    "transaction timeout": _duration,
    "broker groups": _broker_groups,
}

#: Keyword -> (option key, kind of value). The keywords of read_rocketmq, read_rocketmq_stream,
#: write_rocketmq, write_rocketmq_stream and register_rocketmq_catalog are drawn from here; a test
#: checks this table against the connector's own option declarations (key, kind, which functions
#: take it, and whether it is required).
_OPTIONS: Dict[str, Tuple[str, str]] = {
    "name_server": ("nameServer", "name server"),
    "topic": ("topic", "topics"),
    "topic_pattern": ("topicPattern", "topic pattern"),
    "starting_offsets": ("startingOffsets", "offsets"),
    "ending_offsets": ("endingOffsets", "offsets"),
    "sub_expression": ("subExpression", "text"),
    "pull_timeout_ms": ("pullTimeoutMs", "positive long"),
    "pull_batch_size": ("pullBatchSize", "positive int"),
    "pulls_in_flight": ("pullsInFlight", "positive int"),
    "read_ahead_bytes": ("readAheadBytes", "positive long"),
    "fail_on_data_loss": ("failOnDataLoss", "boolean"),
    "expected_broker_groups": ("expectedBrokerGroups", "broker groups"),
    "request_timeout_ms": ("requestTimeoutMs", "positive long"),
    "metadata_retries": ("metadataRetries", "positive int"),
    "metadata_retry_interval_ms": ("metadataRetryIntervalMs", "non-negative long"),
    "retry_timeout_ms": ("retryTimeoutMs", "non-negative long"),
    "max_messages_per_second": ("maxMessagesPerSecond", "positive long"),
    "max_bytes_per_second": ("maxBytesPerSecond", "positive long"),
    "send_timeout_ms": ("sendTimeoutMs", "positive long"),
    "max_in_flight_messages": ("maxInFlightMessages", "positive int"),
    "max_in_flight_bytes": ("maxInFlightBytes", "positive long"),
    "send_batch_messages": ("sendBatchMessages", "positive int"),
    "send_batch_bytes": ("sendBatchBytes", "positive long"),
    "starting_timestamp": ("startingTimestamp", "epoch millis"),
    "starting_offsets_by_timestamp": ("startingOffsetsByTimestamp", "per-queue timestamps"),
    "ending_timestamp": ("endingTimestamp", "epoch millis"),
    "ending_offsets_by_timestamp": ("endingOffsetsByTimestamp", "per-queue timestamps"),
    "producer_clock_skew_ms": ("producerClockSkewMs", "non-negative long"),
    "max_offsets_per_trigger": ("maxOffsetsPerTrigger", "positive long"),
    "max_bytes_per_trigger": ("maxBytesPerTrigger", "positive long"),
    "min_offsets_per_trigger": ("minOffsetsPerTrigger", "positive long"),
    "max_trigger_delay": ("maxTriggerDelay", "duration"),
    "min_partitions": ("minPartitions", "positive int"),
    "sql_filter": ("sqlFilter", "sql92"),
    "consumer_group": ("consumerGroup", "group name"),
    "group_offset_fallback": ("groupOffsetFallback", "group fallback"),
    "include_extra_columns": ("includeExtraColumns", "boolean"),
    "producer_group": ("producerGroup", "group name"),
    "send_retries": ("sendRetries", "non-negative int"),
    "compression_threshold": ("compressionThreshold", "positive int"),
    "delivery_delay_ms": ("deliveryDelayMs", "positive long"),
    "trace_enabled": ("traceEnabled", "boolean"),
    "trace_topic": ("traceTopic", "topic"),
    "delivery_guarantee": ("deliveryGuarantee", "delivery guarantee"),
    "transaction_timeout": ("transactionTimeout", "transaction timeout"),
    "broker_transaction_check_interval": ("brokerTransactionCheckInterval", "duration"),
    "broker_transaction_check_max": ("brokerTransactionCheckMax", "positive int"),
    "access_key": ("accessKey", "text"),
    "secret_key": ("secretKey", "text"),
    "security_token": ("securityToken", "text"),
    "namespace": ("namespace", "namespace"),
    "use_tls": ("useTLS", "boolean"),
    "access_channel": ("accessChannel", "access channel"),
    "allow_drop_table": ("allowDropTable", "boolean"),
}

#: Keyword argument -> connector option key, for every option the functions accept.
OPTION_KEYS: Mapping[str, str] = {kw: key for kw, (key, _) in _OPTIONS.items()}

#: The connector's short format name (its full name is
#: ``org.apache.spark.sql.rocketmq.RocketMQSourceProvider``).
FORMAT = "rocketmq"


def connector_options(values: Mapping[str, object]) -> Dict[str, str]:
    """Options for the keywords that are set (not ``None``), as the connector's keys and strings."""
    out: Dict[str, str] = {}
    for kw, value in values.items():
        if value is None:
            continue
        key, kind = _OPTIONS[kw]
        out[key] = _CONVERTERS[kind](kw, value)
    return out


def option_keywords(values: Mapping[str, object]) -> Dict[str, str]:
    """Option key -> keyword, for the connector options set by keywords (for the errors that name
    them)."""
    return {
        OPTION_KEYS[kw]: kw
        for kw, value in values.items()
        if value is not None and kw in OPTION_KEYS
    }


def required(name: str, value: Optional[object]) -> None:
    if value is None:
        raise ValueError(f"{name} is required: pass {name}='...'")


def _text_example(value: object) -> str:
    """What ``options`` would take for ``value``: the text the connector reads (booleans in lower
    case)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def with_options(
    typed: Mapping[str, str], options: Optional[Mapping[str, str]], keywords: Mapping[str, str]
) -> Dict[str, str]:
    """The options set by keywords (``typed``, option key -> text) with those of the ``options``
    escape hatch added.

    ``keywords`` names the keyword behind each key of ``typed``, for the error when ``options``
    gives the same option (keys match case-insensitively, as Spark matches them) a different text;
    the same text twice is fine. The values of ``options`` go to Spark as given: the connector
    checks them, as it checks every option.
    """
    merged = dict(typed)
    if options is None:
        return merged
    if not isinstance(options, Mapping):
        raise TypeError(
            "options must be a dict of option keys to str values, such as {'pullBatchSize': "
            "'64'}, "
            f"not {type(options).__name__}"
        )
    typed_keys = {key.lower(): key for key in typed}
    seen: Dict[str, str] = {}
    for key, value in options.items():
        if not isinstance(key, str) or not key:
            raise TypeError(
                f"options: {key!r} is not an option key: pass keys as str, such as 'pullBatchSize'"
            )
        if not isinstance(value, str):
            raise TypeError(
                f"options[{key!r}] must be a str (the option's text, as .option() takes it), "
                f"not {type(value).__name__}: pass {_text_example(value)!r}"
            )
        folded = key.lower()
        if folded in seen:
            raise ValueError(
                f"options[{seen[folded]!r}] and options[{key!r}] are one option (Spark matches "
                "keys "
                "case-insensitively): pass it once"
            )
        seen[folded] = key
        if folded in typed_keys:
            typed_key = typed_keys[folded]
            if typed[typed_key].strip() != value.strip():
                raise ValueError(
                    f"option {typed_key} is given twice with different values: "
                    f"{keywords[typed_key]} gives "
                    f"{typed[typed_key]!r}, options[{key!r}] gives {value!r}; pass it once"
                )
            continue
        merged[key] = value
    return merged


# The connector's error about an option's value (ROCKETMQ_INVALID_OPTION_VALUE.<kind> and
# ROCKETMQ_INVALID_OFFSETS_JSON .<shape>): "[<condition>] Invalid value '<value>' for option
# '<key>': <what is allowed>", on one line.
_INVALID_VALUE = re.compile(
    r"\[ROCKETMQ_INVALID_(?:OPTION_VALUE|OFFSETS_JSON)[\w.]*\] Invalid value '.*?' for option "
    r"'(?P<key>\w+)'[^\n]*",
    re.DOTALL,
)


def keyword_error(error: BaseException, keywords: Mapping[str, str]) -> Optional[ValueError]:
    """A ``ValueError`` naming the keyword when ``error`` is the connector's refusal of a value a
    keyword gave.

    ``keywords`` maps option keys to the keywords that set them; ``None`` for any other error (an
    option given through ``options`` is named by the key its caller wrote, so its error is left as
    it is).
    """
    found = _INVALID_VALUE.search(str(error))
    if found is None:
        return None
    by_key = {key.lower(): keyword for key, keyword in keywords.items()}
    keyword = by_key.get(found.group("key").lower())
    if keyword is None:
        return None
    return ValueError(f"{keyword} (option {found.group('key')}): {found.group(0).strip()}")


@contextmanager
def naming_keywords(keywords: Mapping[str, str]) -> Iterator[None]:
    """Runs a Spark call that checks the options; the connector's refusal of a keyword's value is
    re-raised as a ``ValueError`` naming the keyword and the option (the connector's exception is
    its ``__cause__``)."""
    try:
        yield
    except Exception as error:
        translated = keyword_error(error, keywords)
        if translated is None:
            raise
        raise translated from error
