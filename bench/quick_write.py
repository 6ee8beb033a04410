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

"""Batch write throughput by sendBatchMessages, on the embedded broker (the seed of dev/bench).

Usage (after build/sbt connector/assembly itTests/exportHarnessClasspath and dev/build-python):
    .venv/bin/python bench/quick_write.py [messages]
"""

import statistics
import sys
import time
from pathlib import Path

root = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(root / "python" / "tests"))
from embedded_rocketmq import EmbeddedRocketMQProcess
from pyspark.sql import SparkSession

N = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
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
    df = spark.range(N, numPartitions=8).selectExpr("repeat('x', 1024) AS body").cache()
    df.count()
    for batch in [1, 128, 1, 128]:
        times = []
        for r in range(3):
            topic = f"w{batch}-{r}-{int(time.time() * 1000)}"
            mq.create_topic(topic, queues=8)
            t = time.monotonic()
            (
                df.write.format("rocketmq")
                .option("nameServer", mq.name_server)
                .option("topic", topic)
                .option("sendBatchMessages", str(batch))
                .save()
            )
            times.append(time.monotonic() - t)
        m = statistics.median(times)
        print(
            f"sendBatchMessages={batch}: median {m:.2f}s = {N / m:.0f} msg/s (runs {[round(x, 2) for x in times]})",
            flush=True,
        )
finally:
    mq.stop()
