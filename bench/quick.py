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

"""Batch read throughput by pullsInFlight and batch write throughput by sendBatchMessages, on the embedded
broker with RocketMQ's default limits (the seed of dev/bench). Prints the median of three runs per setting.

Usage (after build/sbt connector/assembly itTests/exportHarnessClasspath and dev/build-python):
    .venv/bin/python bench/quick.py read|write [messages]
"""

import statistics
import sys
import time
from pathlib import Path
from typing import Callable, Iterable

root = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(root / "python" / "tests"))
from pyspark.sql import DataFrame, SparkSession  # noqa: E402

from embedded_rocketmq import EmbeddedRocketMQProcess  # noqa: E402

QUEUES = 8


def median_rate(name: str, messages: int, settings: Iterable[str], run: Callable[[str, int], None]) -> None:
    """Times three runs of ``run(setting, attempt)`` per setting and prints the median rate."""
    for setting in settings:
        times = []
        for attempt in range(3):
            started = time.monotonic()
            run(setting, attempt)
            times.append(time.monotonic() - started)
        median = statistics.median(times)
        spread = [round(messages / t) for t in sorted(times)]
        print(f"{name}={setting}: {messages / median:.0f} msg/s (runs {spread})", flush=True)


def write(df: DataFrame, name_server: str, topic: str, batch_messages: str) -> None:
    (
        df.write.format("rocketmq")
        .option("nameServer", name_server)
        .option("topic", topic)
        .option("sendBatchMessages", batch_messages)
        .save()
    )


def main() -> None:
    mode = sys.argv[1]
    messages = int(sys.argv[2]) if len(sys.argv) > 2 else 200_000
    jar = str(next((root / "connector" / "target" / "scala-2.13").glob("*assembly*.jar")))
    mq = EmbeddedRocketMQProcess().start()
    try:
        spark = (
            SparkSession.builder.master("local[2]")
            .config("spark.jars", jar)
            .config("spark.ui.enabled", "false")
            .config("spark.driver.host", "127.0.0.1")
            .getOrCreate()
        )
        spark.sparkContext.setLogLevel("ERROR")
        rows = spark.range(messages, numPartitions=QUEUES).selectExpr("repeat('x', 1024) AS body").cache()
        rows.count()
        if mode == "read":
            topic = f"bench-read-{time.time_ns()}"
            mq.create_topic(topic, queues=QUEUES)
            write(rows, mq.name_server, topic, "128")

            def read(pulls_in_flight: str, _: int) -> None:
                (
                    spark.read.format("rocketmq")
                    .option("nameServer", mq.name_server)
                    .option("topic", topic)
                    .option("pullsInFlight", pulls_in_flight)
                    .load()
                    .write.format("noop")
                    .mode("overwrite")
                    .save()
                )

            median_rate("pullsInFlight", messages, ["1", "4", "8"], read)
        else:

            def write_fresh(batch_messages: str, attempt: int) -> None:
                topic = f"bench-write-{batch_messages}-{attempt}-{time.time_ns()}"
                mq.create_topic(topic, queues=QUEUES)  # timed with the write: a few milliseconds
                write(rows, mq.name_server, topic, batch_messages)

            median_rate("sendBatchMessages", messages, ["1", "128"], write_fresh)
    finally:
        mq.stop()


if __name__ == "__main__":
    main()
