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

"""Column helpers for rows read from RocketMQ."""

from __future__ import annotations

from typing import TYPE_CHECKING, Union

if TYPE_CHECKING:
    from pyspark.sql import Column


def decode_properties(col: Union["Column", str] = "properties") -> "Column":
    """The ``properties`` column (a JSON object string) as a ``map<string,string>`` column.

    Message properties arrive as JSON so that the schema stays fixed; this turns them into a map, so
    ``decode_properties()["TAGS"]`` or ``decode_properties().getItem("KEYS")`` picks one.

    Parameters
    ----------
    col : Column or str, default "properties"
        The column holding the JSON, or its name.

    Returns
    -------
    Column
        A ``map<string,string>`` column (null where the JSON is null).

    Examples
    --------
    >>> from rocketmq_spark import decode_properties, read_rocketmq
    >>> rows = read_rocketmq(spark, "127.0.0.1:9876", "orders")  # doctest: +SKIP
    >>> rows.select(decode_properties()["KEYS"].alias("key")).show()  # doctest: +SKIP
    """
    from pyspark.sql.functions import from_json

    return from_json(col, "map<string,string>")


__all__ = ["decode_properties"]
