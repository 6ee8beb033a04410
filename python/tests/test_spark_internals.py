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

"""The Spark internals the connector reads (RocketMQSparkInternals: a running query's execution,
trigger, plan, sink and checkpoint, and the stream thread's local properties) resolve on the pyspark
running this test. dev/test runs it on every pyspark of the matrix, so a Spark release that renames
one fails here, not in a user's job, where the connector only logs a warning and goes without. The
continuous-processing property is checked by what it changes: test_streaming.py's continuous copy
sees its rows only if the sink reads it (Python's foreach writer does not run under continuous
processing)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict

import pytest

from waiting import wait_until

pytestmark = pytest.mark.cross_version


def _internals(spark: Any) -> Any:
    return spark._jvm.org.apache.spark.sql.rocketmq.RocketMQSparkInternals


def _property_recorder(out: Path, names: Dict[str, str]) -> Any:
    """A foreach writer that writes the named local properties of its first task to ``out``."""

    def record(partition_id: int, epoch_id: int) -> bool:
        from pyspark import TaskContext

        context = TaskContext.get()
        assert context is not None
        seen = {key: context.getLocalProperty(name) for key, name in names.items()}
        if not out.exists():
            out.write_text(json.dumps(seen))
        return True

    class Recorder:
        def open(self, partition_id: int, epoch_id: int) -> bool:
            return record(partition_id, epoch_id)

        def process(self, row: Any) -> None:
            pass

        def close(self, error: Any) -> None:
            pass

    return Recorder()


def test_each_spark_internal_the_connector_reads_resolves_on_a_running_query(
    spark: Any, tmp_path: Path
) -> None:
    internals = _internals(spark)
    names = {"query_id": internals.QueryIdProperty(), "run_id": internals.JobGroupProperty()}
    seen = tmp_path / "micro-batch.json"
    checkpoint = tmp_path / "checkpoint"
    query = (
        spark.readStream.format("rate")
        .option("rowsPerSecond", "10")
        .load()
        .writeStream.foreach(_property_recorder(seen, names))
        .option("checkpointLocation", str(checkpoint))
        .start()
    )
    try:
        wait_until("a task of the query's first batch", seen.exists, timeout_s=120)
        # The stream thread's local properties reach its tasks: the query id, and the run id as its
        # job group.
        assert json.loads(seen.read_text()) == {"query_id": query.id, "run_id": query.runId}
        running = internals.runningExecution(spark._jsparkSession, query.id)
        assert running.isDefined(), "the running query is not among the session's active queries"
        execution = running.get()
        assert execution.equals(internals.executionOf(query._jsq))
        trigger = internals.triggerOf(execution)
        assert trigger.getClass().getSimpleName() == "ProcessingTimeTrigger"
        assert not internals.isRealTimeTrigger(trigger)
        assert internals.logicalPlanOf(execution).isStreaming()
        assert "Foreach" in internals.sinkOf(execution).getClass().getSimpleName()
        assert internals.checkpointRootOf(execution).endswith(checkpoint.name)
    finally:
        query.stop()


def test_real_time_mode_s_trigger_is_recognised_where_spark_has_it(spark: Any) -> None:
    jvm = spark._jvm
    try:
        trigger = jvm.org.apache.spark.sql.streaming.Trigger.RealTime("5 seconds")
    except Exception as e:  # py4j: no such method before Spark 4.1
        assert spark.version.startswith(("3.", "4.0.")), (
            f"Spark {spark.version} has no Trigger.RealTime: {e}"
        )
        return
    assert _internals(spark).isRealTimeTrigger(trigger)
