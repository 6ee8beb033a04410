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

"""The Python keywords and the connector's options must not drift apart.

The connector's option declarations (RocketMQOptions.registry, in the jar this package ships) are
read through the classic session's JVM gateway: a test may do that, the package never does. For
every option the test checks the keyword's name, the kind of value it converts, its type hint,
whether it is required, and which functions take it.
"""

from __future__ import annotations

import inspect
import re
from typing import Any, Dict, NamedTuple, Set

from rocketmq_spark import (
    OPTION_KEYS,
    read_rocketmq,
    read_rocketmq_stream,
    register_rocketmq_catalog,
    rocketmq_stream_writer,
    write_rocketmq,
    write_rocketmq_stream,
)
from rocketmq_spark._options import _CONVERTERS, _OPTIONS

# Which functions take an option, by the query type the connector gives it.
FUNCTIONS_BY_QUERY_TYPE = {
    "streaming and batch": {"read_rocketmq", "read_rocketmq_stream"},
    "batch query": {"read_rocketmq"},
    "streaming query": {"read_rocketmq_stream"},
    "sink (batch and streaming)": {
        "write_rocketmq",
        "write_rocketmq_stream",
        "rocketmq_stream_writer",
    },
    "source and sink": {
        "read_rocketmq",
        "read_rocketmq_stream",
        "write_rocketmq",
        "write_rocketmq_stream",
        "rocketmq_stream_writer",
        "register_rocketmq_catalog",
    },
    "catalog": {"register_rocketmq_catalog"},
}
FUNCTIONS = {
    f.__name__: f
    for f in (
        read_rocketmq,
        read_rocketmq_stream,
        write_rocketmq,
        write_rocketmq_stream,
        rocketmq_stream_writer,
        register_rocketmq_catalog,
    )
}
# Options a function does not take although their query type applies: a catalog's tables are its
# topics.
NOT_TAKEN = {"register_rocketmq_catalog": {"topic"}}
WRITES = {"write_rocketmq", "write_rocketmq_stream", "rocketmq_stream_writer"}
READS = {"read_rocketmq", "read_rocketmq_stream"}
# Keywords that are not connector options: the session or DataFrame, the catalog's name, the options
# given by key, and the streaming query's own settings.
NOT_OPTIONS = {
    "spark",
    "df",
    "name",
    "options",
    "checkpoint_location",
    "output_mode",
    "processing_time",
    "available_now",
    "real_time",
    "continuous",
    "query_name",
}
# The type hint each kind of value gets (an option the connector does not require is Optional,
# None = unset).
HINTS = {
    "text": "str",
    "name server": "str",
    "group name": "str",
    "sql92": "str",
    "topics": "Topics",
    "topic": "str",
    "topic pattern": "str",
    "positive int": "int",
    "non-negative int": "int",
    "positive long": "int",
    "non-negative long": "int",
    "boolean": "bool",
    "duration": "Duration",
    "epoch millis": "Timestamp",
    "offsets": "Offsets",
    "group fallback": "str",
    "per-queue timestamps": "Timestamps",
    "namespace": "str",
    "access channel": "str",
    "delivery guarantee": "str",
    "transaction timeout": "Duration",
    "broker groups": "BrokerGroups",
}


class Declared(NamedTuple):
    kind: str
    query_type: str
    required: bool


def snake_case(key: str) -> str:
    # An acronym is one word: useTLS -> use_tls.
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", key).lower()


def connector_options(spark: Any) -> Dict[str, Declared]:
    """Option key -> what the connector declares of it."""
    registry = spark._jvm.org.apache.spark.sql.rocketmq.options.RocketMQOptions.registry()
    options = [registry.apply(i) for i in range(registry.size())]
    return {
        o.key(): Declared(o.kind().name(), o.queryType().text(), o.isRequired()) for o in options
    }


def test_every_connector_option_is_a_keyword_of_the_right_functions(spark) -> None:
    options = connector_options(spark)
    assert len(options) >= 28 and "nameServer" in options

    assert dict(OPTION_KEYS) == {snake_case(k): k for k in options}, (
        "OPTION_KEYS and the connector differ"
    )
    kinds = {kw: kind for kw, (_, kind) in _OPTIONS.items()}
    assert kinds == {snake_case(k): d.kind for k, d in options.items()}, "kinds of value differ"
    assert set(_CONVERTERS) == set(HINTS) and set(kinds.values()) <= set(_CONVERTERS)

    expected: Dict[str, Set[str]] = {name: set() for name in FUNCTIONS}
    for key, declared in options.items():
        for name in FUNCTIONS_BY_QUERY_TYPE[declared.query_type]:
            if snake_case(key) not in NOT_TAKEN.get(name, set()):
                expected[name].add(snake_case(key))
    for name, function in FUNCTIONS.items():
        keywords = set(inspect.signature(function).parameters) - NOT_OPTIONS
        assert keywords == expected[name], (
            f"{name}: keywords without a connector option: {sorted(keywords - expected[name])}; "
            f"connector options without a keyword: {sorted(expected[name] - keywords)}"
        )


def test_keyword_types_and_defaults_follow_the_declarations(spark) -> None:
    options = connector_options(spark)
    for name, function in FUNCTIONS.items():
        for kw, parameter in inspect.signature(function).parameters.items():
            if kw in NOT_OPTIONS:
                continue
            declared = options[OPTION_KEYS[kw]]
            # Required: nameServer everywhere. A read takes topic or topic_pattern (the function
            # checks it has one); a write may take its topic from a column.
            required = declared.required
            hint = "str" if (kw == "topic" and name in WRITES) else HINTS[declared.kind]
            if required:
                assert parameter.default is inspect.Parameter.empty, (
                    f"{name}({kw}) must be required"
                )
                assert parameter.annotation == hint, (
                    f"{name}({kw}): {parameter.annotation} is not {hint}"
                )
            else:
                assert parameter.default is None, (
                    f"{name}({kw}) must default to None (the connector's default)"
                )
                assert parameter.annotation == f"Optional[{hint}]", (
                    f"{name}({kw}): {parameter.annotation} is not Optional[{hint}]"
                )


def test_int_kinds_are_bounded_as_the_connector_bounds_them() -> None:
    for kind, (low, high) in {
        "positive int": (1, 2**31 - 1),
        "non-negative int": (0, 2**31 - 1),
        "positive long": (1, 2**63 - 1),
        "non-negative long": (0, 2**63 - 1),
    }.items():
        convert = _CONVERTERS[kind]
        assert convert("k", low) == str(low) and convert("k", high) == str(high)
        for bad in (low - 1, high + 1):
            try:
                convert("k", bad)
            except ValueError:
                continue
            raise AssertionError(f"{kind} accepted {bad}")


def test_expected_broker_groups_takes_a_number_or_names() -> None:
    convert = _CONVERTERS["broker groups"]
    assert convert("expected_broker_groups", 2) == "2"
    assert convert("expected_broker_groups", ["broker-a", "broker-b"]) == "broker-a,broker-b"
    assert convert("expected_broker_groups", "broker-a,broker-b") == "broker-a,broker-b"
    for bad, error in (
        (0, ValueError),
        (True, TypeError),
        ([], TypeError),
        ([""], TypeError),
        (1.5, TypeError),
    ):
        try:
            convert("expected_broker_groups", bad)
        except error as e:
            assert "expected_broker_groups" in str(e)
            continue
        raise AssertionError(f"{bad!r} was accepted")
