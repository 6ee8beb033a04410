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

"""Read from and write to Apache RocketMQ with PySpark, batch and streaming.

The functions build ordinary ``spark.read`` / ``spark.readStream`` / ``df.write`` /
``df.writeStream`` calls on the connector's data source (format ``rocketmq``). Each keyword argument
is one connector option, named as its key in snake_case (``name_server`` is ``nameServer``); unknown
keywords are a ``TypeError``, and ``options={"key": "value"}`` passes an option by its key.
``rocketmq_stream_writer`` returns the ``DataStreamWriter`` that ``write_rocketmq_stream`` starts,
configured and not started. Nothing here touches the JVM, so classic and Spark Connect sessions work
alike.

Attach the connector jar first: ``configure_spark_with_rocketmq(builder)`` for a session you start,
``add_rocketmq_jar(spark)`` for a Spark Connect client, or ``jar_path()`` for your own launcher.
``register_rocketmq_catalog(spark, "rmq", name_server=...)`` makes the cluster's topics tables of
Spark SQL.
"""

from __future__ import annotations

from rocketmq_spark._catalog import register_rocketmq_catalog
from rocketmq_spark._columns import decode_properties
from rocketmq_spark._jar import add_rocketmq_jar, configure_spark_with_rocketmq, jar_path
from rocketmq_spark._options import FORMAT, OPTION_KEYS
from rocketmq_spark._positions import (
    EARLIEST,
    EARLIEST_OFFSET,
    GROUP,
    LATEST,
    LATEST_OFFSET,
    epoch_millis,
    offsets_json,
    timestamps_json,
)
from rocketmq_spark._read import read_rocketmq, read_rocketmq_stream
from rocketmq_spark._trigger import real_time_trigger
from rocketmq_spark._version import __version__
from rocketmq_spark._write import write_rocketmq
from rocketmq_spark._write_stream import rocketmq_stream_writer, write_rocketmq_stream

__all__ = [
    "EARLIEST",
    "EARLIEST_OFFSET",
    "FORMAT",
    "GROUP",
    "LATEST",
    "LATEST_OFFSET",
    "OPTION_KEYS",
    "__version__",
    "add_rocketmq_jar",
    "configure_spark_with_rocketmq",
    "decode_properties",
    "epoch_millis",
    "jar_path",
    "offsets_json",
    "read_rocketmq",
    "read_rocketmq_stream",
    "real_time_trigger",
    "register_rocketmq_catalog",
    "rocketmq_stream_writer",
    "timestamps_json",
    "write_rocketmq",
    "write_rocketmq_stream",
]
