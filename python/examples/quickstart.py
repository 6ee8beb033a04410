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

"""Quick start: write a few messages to a RocketMQ topic and read them back, in a plain Python
script.

    pip install rocketmq_spark-0.1.0-py3-none-any.whl
    python quickstart.py --name-server 127.0.0.1:9876 --topic quickstart

The topic must exist. Prints one JSON line: how many messages were written and read back.
"""

from __future__ import annotations

import argparse
import json

from pyspark.sql import SparkSession

from rocketmq_spark import configure_spark_with_rocketmq, read_rocketmq, write_rocketmq


def main() -> None:
    # The docstring's first paragraph (its summary, wrapped at 100 columns), on one line.
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--name-server", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--count", type=int, default=100)
    args = parser.parse_args()

    # The package ships the connector jar; this adds it to the session's spark.jars.
    spark = configure_spark_with_rocketmq(
        SparkSession.builder.appName("rocketmq-quickstart")
    ).getOrCreate()

    greetings = spark.createDataFrame(
        [(f"hello {i}", "greeting") for i in range(args.count)], "body STRING, tags STRING"
    )
    write_rocketmq(greetings, args.name_server, args.topic)

    messages = read_rocketmq(spark, args.name_server, args.topic, sub_expression="greeting")
    bodies = sorted(r.body for r in messages.selectExpr("CAST(body AS STRING) AS body").collect())
    print(
        json.dumps(
            {
                "spark": spark.version,
                "written": args.count,
                "read": len(bodies),
                "first": bodies[0] if bodies else None,
            }
        )
    )
    spark.stop()


if __name__ == "__main__":
    main()
