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

"""Demo: a real embedded RocketMQ, written to with write_rocketmq and read back with read_rocketmq.

Run it with dev/demo, which builds the connector, installs this package and starts nothing else.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from pyspark.sql import SparkSession  # noqa: E402

from embedded_rocketmq import EmbeddedRocketMQProcess  # noqa: E402
from rocketmq_spark import (  # noqa: E402
    configure_spark_with_rocketmq,
    read_rocketmq,
    write_rocketmq,
)


def main() -> None:
    print("Starting an embedded RocketMQ name server and broker ...")
    broker = EmbeddedRocketMQProcess().start()
    try:
        print(f"RocketMQ is up; name server at {broker.name_server}")
        topic = "demo-orders"
        broker.create_topic(topic, queues=4)

        spark = configure_spark_with_rocketmq(
            SparkSession.builder.master("local[2]")
            .appName("rocketmq-spark-demo")
            .config("spark.ui.enabled", "false")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config(
                "spark.driver.extraJavaOptions", "-Drocketmq.log.root=it-tests/target/client-logs"
            )
        ).getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")

        orders = spark.createDataFrame(
            [
                (f'{{"order": {i}, "amount": {10 * i}}}', "paid" if i % 3 else "refunded")
                for i in range(12)
            ],
            "body STRING, tags STRING",
        )
        print(f"Writing {orders.count()} messages to topic '{topic}' with write_rocketmq ...")
        write_rocketmq(orders, name_server=broker.name_server, topic=topic)

        print("Reading them back with read_rocketmq:")
        df = read_rocketmq(spark, name_server=broker.name_server, topic=topic)
        # The body as text and the tag from the message's properties (a JSON map, with the client's
        # own keys too).
        df.selectExpr(
            "queueId",
            "queueOffset",
            "CAST(body AS STRING) AS body",
            "get_json_object(properties, '$.TAGS') AS tags",
        ).orderBy("queueId", "queueOffset").show(truncate=False)
        refunded = read_rocketmq(
            spark, name_server=broker.name_server, topic=topic, sub_expression="refunded"
        )
        print(f"Messages tagged 'refunded' (tag filter on the broker): {refunded.count()}")
        spark.stop()
    finally:
        broker.stop()
        print("RocketMQ stopped.")


if __name__ == "__main__":
    main()
