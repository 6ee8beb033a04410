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

"""Writes the checkpoint fixture of the running pyspark:
python/tests/fixtures/checkpoint-spark-<version>.

Usage: checkpoint_fixture.py <name_server>   (run by dev/write-checkpoint-fixtures, once per
pyspark)

Creates nothing itself: topic ``checkpoint-fixture`` (one queue, broker ``broker-a``) must hold
m0..m4. Runs the query of ``test_checkpoint_compat.QUERY`` with ``AvailableNow`` into JSON files,
then copies its checkpoint (without Hadoop's .crc files) next to the other fixtures.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from pyspark.sql import SparkSession

from rocketmq_spark import EARLIEST, configure_spark_with_rocketmq, read_rocketmq_stream

TOPIC = "checkpoint-fixture"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def query(spark, name_server: str, topic: str):
    """The query every fixture comes from, and the one the test restarts."""
    return read_rocketmq_stream(spark, name_server, topic, starting_offsets=EARLIEST).selectExpr(
        "CAST(body AS STRING) AS body", "queueOffset"
    )


def main() -> None:
    import pyspark

    name_server = sys.argv[1]
    builder = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
    spark = configure_spark_with_rocketmq(builder).getOrCreate()
    work = Path(tempfile.mkdtemp(prefix="fixture-"))
    q = (
        query(spark, name_server, TOPIC)
        .writeStream.format("json")
        .option("path", str(work / "out"))
        .option("checkpointLocation", str(work / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    q.awaitTermination()
    read = spark.read.json(str(work / "out")).count()
    assert read == 5, f"the fixture query read {read} rows, not 5"
    target = FIXTURES / f"checkpoint-spark-{pyspark.__version__}"
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(work / "checkpoint", target, ignore=shutil.ignore_patterns("*.crc"))
    print(f"fixture written to {target}")
    spark.stop()


if __name__ == "__main__":
    main()
