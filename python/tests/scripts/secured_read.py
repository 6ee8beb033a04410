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


"""Run by test_secured_clusters.py through spark-submit, with ROCKETMQ_ACCESS_KEY and
ROCKETMQ_SECRET_KEY set.

Usage: secured_read.py <name_server> <topic>

Reads <topic> with format("rocketmq") and no credential options: the connector takes them from the
driver's environment. Prints one JSON line: the bodies read.
"""

from __future__ import annotations

import json
import sys

from pyspark.sql import SparkSession


def main() -> None:
    name_server, topic = sys.argv[1], sys.argv[2]
    spark = (
        SparkSession.builder.appName("rocketmq-secured-read")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("WARN")
    rows = (
        spark.read.format("rocketmq")
        .option("nameServer", name_server)
        .option("topic", topic)
        .load()
    )
    bodies = [bytes(r.body).decode() for r in rows.select("body").collect()]
    spark.stop()
    print(json.dumps({"bodies": bodies}))


if __name__ == "__main__":
    main()
