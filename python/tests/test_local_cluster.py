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

"""A Databricks-style cluster library: the shaded jar alone (--jars) on local-cluster with two
executor JVMs, writing to and reading from a 16-queue topic."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pyspark

from embedded_rocketmq import unique_topic
from rocketmq_spark import jar_path
from spark_processes import spark_env, submit_command

ROWS = 3200


def test_the_assembly_alone_on_two_executors_writes_and_reads_a_16_queue_topic(
    rocketmq, tmp_path: Path
) -> None:
    topic = unique_topic("cluster")
    rocketmq.create_topic(topic, queues=16)
    script = Path(__file__).parent / "scripts" / "local_cluster_stream.py"
    command = submit_command(
        "local-cluster[2,1,1024]",
        jar_path(),
        script,
        rocketmq.name_server,
        topic,
        str(tmp_path / "out"),
        str(tmp_path / "cp"),
        str(ROWS),
        # A queue's preferred executor is a locality hint: let the scheduler wait for it on a busy
        # machine.
        conf={"spark.locality.wait": "10s"},
    )
    work = Path(pyspark.__file__).parent / "work"  # local-cluster workers write here
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=600, env=spark_env())
    finally:
        shutil.rmtree(work, ignore_errors=True)
    assert done.returncode == 0, done.stderr[-4000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])

    # Written by both executor processes; every message in RocketMQ once, over all 16 queues.
    assert result["executors"] == 2
    assert result["writer_processes"] == 2
    stored = rocketmq.bodies(topic)
    assert len(stored) == ROWS and len({b.split(":")[0] for b in stored}) == ROWS
    assert sum(rocketmq.latest_offsets(topic)[topic]["broker-a"].values()) == ROWS
    assert len(rocketmq.latest_offsets(topic)[topic]["broker-a"]) == 16

    # Read back by both executor processes, each message once, in rate-limited batches.
    assert result["rows"] == ROWS
    assert result["distinct_ids"] == ROWS
    assert result["distinct_positions"] == ROWS
    assert result["queues"] == 16
    assert result["reader_processes"] == 2
    assert result["batches"] >= 3  # maxOffsetsPerTrigger = ROWS / 3
    assert result["queues_on_one_executor"] == 16
