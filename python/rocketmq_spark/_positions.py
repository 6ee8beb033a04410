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

"""Where a read starts or ends: the earliest/latest sentinels, per-queue offset JSON and
timestamps."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Callable, Dict, Mapping, Union

#: ``starting_offsets`` / ``ending_offsets``: every queue from its first retained message.
EARLIEST = "earliest"
#: ``starting_offsets`` / ``ending_offsets``: every queue from (or up to) its end.
LATEST = "latest"
#: ``starting_offsets``: each queue where ``consumer_group`` committed its progress on the brokers
#: (queues it has not committed start at ``group_offset_fallback``).
GROUP = "group"
#: A queue's offset in per-queue offsets that means "its earliest offset".
EARLIEST_OFFSET = -2
#: A queue's offset in per-queue offsets that means "its latest offset".
LATEST_OFFSET = -1

Offset = Union[int, str]
#: ``{"topic": {"broker": {queue_id: offset}}}``; queue ids may be ints or digit strings.
QueueOffsets = Mapping[str, Mapping[str, Mapping[Union[int, str], Offset]]]
Timestamp = Union[int, datetime]
#: ``{"topic": {"broker": {queue_id: time}}}`` with epoch milliseconds or timezone-aware datetimes.
QueueTimestamps = Mapping[str, Mapping[str, Mapping[Union[int, str], Timestamp]]]

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_SENTINELS = {EARLIEST: EARLIEST_OFFSET, LATEST: LATEST_OFFSET}


def epoch_millis(value: Timestamp, name: str = "timestamp") -> int:
    """Epoch milliseconds of a timezone-aware ``datetime`` (or of an int already in epoch ms).

    The read functions take ``datetime`` objects themselves; this is for options set by hand.

    Parameters
    ----------
    value : datetime or int
        A ``datetime`` with a time zone (RocketMQ store times are instants), or epoch milliseconds
        >= 0.
    name : str, default "timestamp"
        What the value is, for the error messages.

    Returns
    -------
    int
        Milliseconds since 1970-01-01T00:00Z.

    Examples
    --------
    >>> from datetime import datetime, timezone
    >>> epoch_millis(datetime(2024, 1, 2, 3, 4, 5, 600000, tzinfo=timezone.utc))
    1704164645600
    """
    if isinstance(value, datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(
                f"{name} is a naive datetime ({value.isoformat()}): RocketMQ store times are "
                "instants, so give it "
                "a time zone, e.g. datetime(..., tzinfo=timezone.utc)"
            )
        return (value - _EPOCH) // timedelta(milliseconds=1)
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(
            f"{name} must be a datetime or epoch milliseconds (int), not {type(value).__name__}"
        )
    if value < 0:
        raise ValueError(f"{name} must be epoch milliseconds >= 0, not {value}")
    return value


def _queue_id(name: str, topic: str, broker: str, queue: object) -> str:
    text = str(queue) if isinstance(queue, (int, str)) and not isinstance(queue, bool) else ""
    if not text.isdigit():
        raise TypeError(
            f"{name}: queue id {queue!r} of {topic}/{broker} must be an int >= 0, e.g. {{0: 23}}"
        )
    return str(int(text))


def _nested(name: str, value: object, leaf: str) -> Dict[str, Dict[str, Mapping[object, object]]]:
    """Checks the topic -> broker -> queue nesting; returns it as plain dicts."""
    example = f'{{"my-topic": {{"broker-a": {{0: {leaf}}}}}}}'
    if not isinstance(value, Mapping) or not value:
        raise TypeError(f"{name} must be a non-empty dict like {example}, not {value!r}")
    out: Dict[str, Dict[str, Mapping[object, object]]] = {}
    for topic, brokers in value.items():
        if (
            not isinstance(topic, str)
            or not topic
            or not isinstance(brokers, Mapping)
            or not brokers
        ):
            raise TypeError(
                f"{name}: {topic!r} must map a topic name to {{broker name: {{queue id: ...}}}}, "
                f"like {example}"
            )
        out[topic] = {}
        for broker, queues in brokers.items():
            if (
                not isinstance(broker, str)
                or not broker
                or not isinstance(queues, Mapping)
                or not queues
            ):
                raise TypeError(
                    f"{name}: {topic}/{broker!r} must map a broker name to {{queue id: ...}}, "
                    f"like {example}"
                )
            out[topic][broker] = queues
    return out


def _per_queue_json(
    name: str, value: object, leaf: str, convert: Callable[[str, object], int]
) -> str:
    """Checks topic -> broker -> queue -> value nesting and renders it as option JSON."""
    result: Dict[str, Dict[str, Dict[str, int]]] = {}
    for topic, brokers in _nested(name, value, leaf).items():
        for broker, queues in brokers.items():
            for queue, item in queues.items():
                qid = _queue_id(name, topic, broker, queue)
                result.setdefault(topic, {}).setdefault(broker, {})[qid] = convert(
                    f"{topic}/{broker}/{qid}", item
                )
    return json.dumps(result, separators=(",", ":"))


def offsets_json(offsets: QueueOffsets, name: str = "offsets") -> str:
    """Per-queue offsets as the JSON the ``startingOffsets`` / ``endingOffsets`` options take.

    The read functions take the dict itself; this is for options set by hand.

    Parameters
    ----------
    offsets : dict
        ``{"topic": {"broker": {queue_id: offset}}}``: queue ids are ints (or digit strings),
        offsets ints >= 0, or ``EARLIEST`` / ``LATEST`` (``-2`` / ``-1``) for a queue's current
        ends.
    name : str, default "offsets"
        What the offsets are, for the error messages.

    Returns
    -------
    str
        The offsets as compact JSON, queue ids as strings.

    Examples
    --------
    >>> offsets_json({"orders": {"broker-a": {0: 23, 1: EARLIEST}}})
    '{"orders":{"broker-a":{"0":23,"1":-2}}}'
    """

    def offset(where: str, value: object) -> int:
        if isinstance(value, str) and value.lower() in _SENTINELS:
            return _SENTINELS[value.lower()]
        if isinstance(value, int) and not isinstance(value, bool) and value >= EARLIEST_OFFSET:
            return value
        raise ValueError(
            f"{name}: offset {value!r} of {where} must be an int >= 0, EARLIEST (-2) or LATEST (-1)"
        )

    return _per_queue_json(name, offsets, "23", offset)


def timestamps_json(timestamps: QueueTimestamps, name: str = "timestamps") -> str:
    """Per-queue times as the JSON the ``startingOffsetsByTimestamp`` / ``endingOffsetsByTimestamp``
    options take.

    The read functions take the dict itself; this is for options set by hand.

    Parameters
    ----------
    timestamps : dict
        ``{"topic": {"broker": {queue_id: time}}}``: times are ``datetime`` objects with a time
        zone, or epoch milliseconds.
    name : str, default "timestamps"
        What the times are, for the error messages.

    Returns
    -------
    str
        The times as compact JSON of epoch milliseconds, queue ids as strings.

    Examples
    --------
    >>> from datetime import datetime, timezone
    >>> timestamps_json({"orders": {"broker-a": {0: datetime(2024, 1, 1, tzinfo=timezone.utc)}}})
    '{"orders":{"broker-a":{"0":1704067200000}}}'
    """

    def millis(where: str, value: object) -> int:
        return epoch_millis(value, f"{name}: time of {where}")  # type: ignore[arg-type]

    return _per_queue_json(name, timestamps, "datetime(2024, 1, 1, tzinfo=timezone.utc)", millis)


__all__ = [
    "EARLIEST",
    "EARLIEST_OFFSET",
    "LATEST",
    "LATEST_OFFSET",
    "QueueOffsets",
    "QueueTimestamps",
    "epoch_millis",
    "offsets_json",
    "timestamps_json",
]
