"""The connector across JVMs: a streaming read by two executor processes (local-cluster)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyspark

from embedded_rocketmq import unique_topic


def test_two_executors_read_a_16_queue_topic(rocketmq, tmp_path: Path) -> None:
    topic = unique_topic("cluster")
    rocketmq.create_topic(topic, queues=16)
    rocketmq.send(topic, 3200, "m-")
    script = Path(__file__).parent / "scripts" / "local_cluster_stream.py"
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    work = Path(pyspark.__file__).parent / "work"  # local-cluster workers write here
    try:
        done = subprocess.run(
            [sys.executable, str(script), rocketmq.name_server, topic, str(tmp_path / "out"), str(tmp_path / "cp")],
            capture_output=True, text=True, timeout=600, env=env,
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    assert done.returncode == 0, done.stderr[-4000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["executors"] == 2
    assert result["rows"] == 3200
    assert result["distinct_positions"] == 3200
    assert result["queues"] == 16
    assert result["executor_processes"] == 2
    assert result["batches"] >= 4  # maxOffsetsPerTrigger=1000 over 3200 messages
    assert result["queues_on_one_executor"] == 16
