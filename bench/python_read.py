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

"""A batch read as a PySpark user runs it: the Python half of the bench's ``distant`` and ``proxy``
sections.

The bench's JVM (``PythonReads``) owns the broker and any proxy in front of it; this process is the
user's PySpark program (``local[2]``, the wheel installed in ``.venv``). Each ``RUN {json}`` line
names a ``nameServer`` and a ``topic``; this process reads the whole topic with ``read_rocketmq``,
sums the bodies' lengths, and answers ``RESULT {json}`` with the ``seconds`` the read took and the
``bytes`` it summed. ``EXIT`` ends it.
"""

from __future__ import annotations

import json
import time
from typing import Any, Dict

from pyspark.sql import SparkSession
from python_latency import bench_session, reply, serve

from rocketmq_spark import read_rocketmq


def one_read(spark: SparkSession, run: Dict[str, Any], scratch: str) -> None:
    start = time.perf_counter()
    rows = read_rocketmq(spark, run["nameServer"], run["topic"])
    summed = rows.selectExpr("sum(length(body))").head()[0]
    seconds = time.perf_counter() - start
    reply("RESULT " + json.dumps({"seconds": seconds, "bytes": summed}))


def main() -> None:
    spark = bench_session("rocketmq-spark-bench-python-read", {})
    serve(spark, spark.version, one_read, "rocketmq-spark-bench-python-read-")


if __name__ == "__main__":
    main()
