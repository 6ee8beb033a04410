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
from datetime import timedelta
from typing import Callable, Dict, Iterator, Mapping, Optional, Sequence, Tuple, Union

from rocketmq_spark._positions import (
    EARLIEST,
    GROUP,
    LATEST,
    epoch_millis,
    offsets_json,
    timestamps_json,
)

Convert = Callable[[str, object], str]
Duration = Union[str, timedelta]


def checked_text(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, not {type(value).__name__}: pass {name}='...'")
    if not value.strip():
        raise ValueError(f"{name} must not be empty or blank")
    return value


def _topics(name: str, value: object) -> str:
    if isinstance(value, str):
        return checked_text(name, value)
    if isinstance(value, Sequence) and value and all(isinstance(t, str) for t in value):
        for t in value:
            if not t.strip() or "," in t:
                raise ValueError(
                    f"{name}: {t!r} is not a topic name: pass names like ['orders', 'refunds']"
                )
        return ",".join(value)
    raise TypeError(f"{name} must be a topic name or a list of topic names, not {value!r}")


def _broker_groups(name: str, value: object) -> str:
    """A number of broker groups, or their names (a list, or one comma-separated str); the JVM
    checks the names."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(_integer(name, value, 1))
    if isinstance(value, str):
        return checked_text(name, value)
    if (
        isinstance(value, Sequence)
        and value
        and all(isinstance(g, str) and g.strip() for g in value)
    ):
        return ",".join(value)
    raise TypeError(
        f"{name} must be a number of broker groups or a list of their names, not {value!r}"
    )


def _integer(name: str, value: object, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(
            f"{name} must be an int, not {type(value).__name__}: pass e.g. "
            f"{name}={max(minimum, 1000)}"
        )
    if value < minimum:
        allowed = "a positive int" if minimum == 1 else f"an int >= {minimum}"
        raise ValueError(f"{name} must be {allowed}, not {value}")
    if value > 2**63 - 1:
        raise ValueError(f"{name} is too large: {value}")
    return value


def _positive(name: str, value: object) -> str:
    return str(_integer(name, value, 1))


def _non_negative(name: str, value: object) -> str:
    return str(_integer(name, value, 0))


def _int32(name: str, value: object, minimum: int = 1) -> str:
    number = _integer(name, value, minimum)
    if number > 2**31 - 1:
        raise ValueError(f"{name} must be at most {2**31 - 1}, not {number}")
    return str(number)


def _non_negative_int32(name: str, value: object) -> str:
    return _int32(name, value, 0)


def _flag(name: str, value: object) -> str:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool: pass {name}=True or {name}=False, not {value!r}")
    return "true" if value else "false"


def _offsets(name: str, value: object) -> str:
    if isinstance(value, Mapping):
        return offsets_json(value, name)
    if isinstance(value, str) and (
        value.strip().lower() in (EARLIEST, LATEST, GROUP) or value.lstrip().startswith("{")
    ):
        return value.strip()
    raise ValueError(
        f"{name} must be EARLIEST, LATEST, GROUP, a dict like {{'topic': {{'broker-a': {{0: "
        "23}}} "
        f"or its JSON, not {value!r}"
    )


def _group_fallback(name: str, value: object) -> str:
    if isinstance(value, str) and value.strip().lower() in (EARLIEST, LATEST):
        return value.strip().lower()
    raise ValueError(
        f"{name} must be EARLIEST or LATEST (where a queue the group has not committed starts), "
        f"not {value!r}"
    )


def _timestamp(name: str, value: object) -> str:
    return str(epoch_millis(value, name))  # type: ignore[arg-type]


def _timestamps(name: str, value: object) -> str:
    if isinstance(value, Mapping):
        return timestamps_json(value, name)
    if isinstance(value, str) and value.lstrip().startswith("{"):
        return value.strip()
    raise TypeError(
        f"{name} must be a dict like {{'topic': {{'broker-a': {{0: datetime(...)}}}}}} or its "
        f"JSON, not {value!r}"
    )


# The connector's duration units, largest first, in milliseconds (RocketMQOptionKind.Duration).
_DURATION_UNITS = (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1_000), ("ms", 1))


def _duration(name: str, value: object) -> str:
    """A duration option's text: a ``timedelta`` in its largest whole unit (``"90s"``, ``"10m"``), a
    str as given.

    Only the type is converted: the connector reads the text (its grammar: a whole number and a unit
    of ms, s, m, min, h or d; a bare number is milliseconds) and checks its bounds, and its error
    names the option.
    """
    if isinstance(value, timedelta):
        millis, rest = divmod(value, timedelta(milliseconds=1))
        if rest:
            raise ValueError(
                f"{name} must be a whole number of milliseconds (the connector's unit), not {value}"
            )
        unit, size = next(
            (u, n) for u, n in _DURATION_UNITS if millis % n == 0 and (millis != 0 or n == 1)
        )
        return f"{millis // size}{unit}"
    if isinstance(value, str):
        return value
    raise TypeError(
        f"{name} must be a timedelta or a duration string such as '30s', '15m' or '500ms', not "
        f"{type(value).__name__}"
    )


def _access_channel(name: str, value: object) -> str:
    text = checked_text(name, value).strip().upper()
    if text not in ("LOCAL", "CLOUD"):
        raise ValueError(f"{name} must be 'LOCAL' or 'CLOUD', not {value!r}")
    return text


def _delivery_guarantee(name: str, value: object) -> str:
    text = checked_text(name, value).strip().lower()
    if text not in ("at_least_once", "exactly_once"):
        raise ValueError(f"{name} must be 'at_least_once' or 'exactly_once', not {value!r}")
    return text


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
