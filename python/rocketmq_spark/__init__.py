"""Read from and write to Apache RocketMQ with PySpark.

The functions build ordinary ``spark.read`` / ``df.write`` calls on the connector's data source
(format ``rocketmq``); each keyword argument is one connector option, its name the option key in
snake_case (``name_server`` is ``nameServer``). They never touch the JVM directly.
"""

from __future__ import annotations

from rocketmq_spark._jar import configure_spark_with_rocketmq, jar_path
from rocketmq_spark._io import FORMAT, OPTION_KEYS, read_rocketmq, write_rocketmq
from rocketmq_spark._version import __version__

__all__ = [
    "FORMAT",
    "OPTION_KEYS",
    "__version__",
    "configure_spark_with_rocketmq",
    "jar_path",
    "read_rocketmq",
    "write_rocketmq",
]
