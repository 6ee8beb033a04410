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

"""The converters of keyword values to option text, one per kind of value: the cheap checks
(types, ranges, shapes) made before the JVM is reached."""

from __future__ import annotations

from datetime import timedelta
from typing import Callable, Mapping, Sequence, Union

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
