"""The Python keywords and the connector's options must not drift apart.

The connector's option registry (RocketMQOptionKeys, in the jar this package ships) is read through the
classic session's JVM gateway: a test may do that, the package never does.
"""

from __future__ import annotations

import inspect
import re
from typing import Any, Dict, Set

from rocketmq_spark import OPTION_KEYS, read_rocketmq, read_rocketmq_stream, write_rocketmq

# Which functions take an option, by the query type the connector gives it.
FUNCTIONS_BY_QUERY_TYPE = {
    "streaming and batch": {"read_rocketmq", "read_rocketmq_stream"},
    "batch query": {"read_rocketmq"},
    "streaming query": {"read_rocketmq_stream"},
    "sink (batch and streaming)": {"write_rocketmq"},
    "source and sink": {"read_rocketmq", "read_rocketmq_stream", "write_rocketmq"},
}
FUNCTIONS = {f.__name__: f for f in (read_rocketmq, read_rocketmq_stream, write_rocketmq)}
# Keywords that are not connector options: the session or DataFrame, and the streaming query's own settings.
NOT_OPTIONS = {"spark", "df", "checkpoint_location", "output_mode", "processing_time", "available_now", "query_name"}


def snake_case(key: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()


def connector_options(spark: Any) -> Dict[str, str]:
    """Option key -> query type text, from the connector's own registry."""
    registry = spark._jvm.org.apache.spark.sql.rocketmq.RocketMQOptionKeys.all()
    docs = [registry.apply(i) for i in range(registry.size())]
    return {d.key(): d.queryType().text() for d in docs}


def test_every_connector_option_is_a_keyword_of_the_right_functions(spark) -> None:
    options = connector_options(spark)
    assert len(options) >= 28 and "nameServer" in options

    assert dict(OPTION_KEYS) == {snake_case(k): k for k in options}, "OPTION_KEYS and the connector differ"

    expected: Dict[str, Set[str]] = {name: set() for name in FUNCTIONS}
    for key, query_type in options.items():
        for name in FUNCTIONS_BY_QUERY_TYPE[query_type]:
            expected[name].add(snake_case(key))
    for name, function in FUNCTIONS.items():
        keywords = set(inspect.signature(function).parameters) - NOT_OPTIONS
        assert keywords == expected[name], (
            f"{name}: keywords without a connector option: {sorted(keywords - expected[name])}; "
            f"connector options without a keyword: {sorted(expected[name] - keywords)}")
