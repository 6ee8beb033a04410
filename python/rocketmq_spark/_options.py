"""Keyword arguments to connector options: one converter per option, checked before the JVM is reached.

Every keyword is the option key in snake_case (``pullBatchSize`` is ``pull_batch_size``). The checks here
are the cheap ones (types, ranges, shapes); the connector checks the rest and names the option too.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Callable, Dict, Mapping, Optional, Sequence, Tuple

from rocketmq_spark._positions import EARLIEST, LATEST, epoch_millis, offsets_json, timestamps_json

Convert = Callable[[str, object], str]


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
                raise ValueError(f"{name}: {t!r} is not a topic name: pass names like ['orders', 'refunds']")
        return ",".join(value)
    raise TypeError(f"{name} must be a topic name or a list of topic names, not {value!r}")


def _integer(name: str, value: object, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}: pass e.g. {name}={max(minimum, 1000)}")
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


def _int32(name: str, value: object) -> str:
    number = _integer(name, value, 1)
    if number > 2**31 - 1:
        raise ValueError(f"{name} must be at most {2**31 - 1}, not {number}")
    return str(number)


def _flag(name: str, value: object) -> str:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool: pass {name}=True or {name}=False, not {value!r}")
    return "true" if value else "false"


def _offsets(name: str, value: object) -> str:
    if isinstance(value, Mapping):
        return offsets_json(value, name)
    if isinstance(value, str) and (value.strip().lower() in (EARLIEST, LATEST) or value.lstrip().startswith("{")):
        return value.strip()
    raise ValueError(f"{name} must be EARLIEST, LATEST, a dict like {{'topic': {{'broker-a': {{0: 23}}}}}} "
                     f"or its JSON, not {value!r}")


def _timestamp(name: str, value: object) -> str:
    return str(epoch_millis(value, name))  # type: ignore[arg-type]


def _timestamps(name: str, value: object) -> str:
    if isinstance(value, Mapping):
        return timestamps_json(value, name)
    if isinstance(value, str) and value.lstrip().startswith("{"):
        return value.strip()
    raise TypeError(f"{name} must be a dict like {{'topic': {{'broker-a': {{0: datetime(...)}}}}}} or its JSON, "
                    f"not {value!r}")


_DURATION = re.compile(r"^\d+\s*(ms|s|m|min|h|d)?$")


def _duration(name: str, value: object) -> str:
    if isinstance(value, timedelta):
        millis = value // timedelta(milliseconds=1)
        if millis < 0:
            raise ValueError(f"{name} must not be negative, not {value}")
        return f"{millis}ms"
    if isinstance(value, str) and _DURATION.match(value.strip().lower()):
        return value.strip()
    raise ValueError(f"{name} must be a timedelta or a duration string such as '30s', '15m', '1h' or '500ms', "
                     f"not {value!r}")


#: Keyword -> (option key, converter). The keywords of read_rocketmq, read_rocketmq_stream and
#: write_rocketmq are drawn from here; a test checks this table against the connector's own options.
_OPTIONS: Dict[str, Tuple[str, Convert]] = {
    "name_server": ("nameServer", checked_text),
    "topic": ("topic", _topics),
    "starting_offsets": ("startingOffsets", _offsets),
    "ending_offsets": ("endingOffsets", _offsets),
    "sub_expression": ("subExpression", checked_text),
    "pull_timeout_ms": ("pullTimeoutMs", _positive),
    "pull_batch_size": ("pullBatchSize", _int32),
    "fail_on_data_loss": ("failOnDataLoss", _flag),
    "request_timeout_ms": ("requestTimeoutMs", _positive),
    "metadata_retries": ("metadataRetries", _int32),
    "metadata_retry_interval_ms": ("metadataRetryIntervalMs", _non_negative),
    "send_timeout_ms": ("sendTimeoutMs", _positive),
    "max_in_flight_messages": ("maxInFlightMessages", _int32),
    "starting_timestamp": ("startingTimestamp", _timestamp),
    "starting_offsets_by_timestamp": ("startingOffsetsByTimestamp", _timestamps),
    "ending_timestamp": ("endingTimestamp", _timestamp),
    "ending_offsets_by_timestamp": ("endingOffsetsByTimestamp", _timestamps),
    "max_offsets_per_trigger": ("maxOffsetsPerTrigger", _positive),
    "min_offsets_per_trigger": ("minOffsetsPerTrigger", _positive),
    "max_trigger_delay": ("maxTriggerDelay", _duration),
    "min_partitions": ("minPartitions", _int32),
    "sql_filter": ("sqlFilter", checked_text),
    "consumer_group": ("consumerGroup", checked_text),
    "include_extra_columns": ("includeExtraColumns", _flag),
    "producer_group": ("producerGroup", checked_text),
    "send_retries": ("sendRetries", _non_negative),
    "compression_threshold": ("compressionThreshold", _int32),
    "delivery_delay_ms": ("deliveryDelayMs", _positive),
}

#: Keyword argument -> connector option key, for every option the functions accept.
OPTION_KEYS: Mapping[str, str] = {kw: key for kw, (key, _) in _OPTIONS.items()}

def connector_options(values: Mapping[str, object]) -> Dict[str, str]:
    """Options for the keywords that are set (not ``None``), as the connector's keys and strings."""
    out: Dict[str, str] = {}
    for kw, value in values.items():
        if value is None:
            continue
        key, convert = _OPTIONS[kw]
        out[key] = convert(kw, value)
    return out


def required(name: str, value: Optional[object]) -> None:
    if value is None:
        raise ValueError(f"{name} is required: pass {name}='...'")
