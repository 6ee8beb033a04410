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

"""Run by test_executor_kill.py with spark-submit --master local-cluster[2,1,1024] --jars <assembly>: a
slow AvailableNow copy of a topic into Parquet, during which the test kills one executor JVM with SIGKILL.

Usage: local_cluster_executor_kill.py <name_server> <topic> <output_dir> <checkpoint_dir> <max_offsets>
       <report.json> <go>

Prints ``DRIVER_URL spark://CoarseGrainedScheduler@host:port`` (how the test finds this application's
executor processes) once both executors are registered, and starts the query once the file <go> exists
(the test sends the messages meanwhile; spark-submit gives a Python driver no stdin). Prints
``TASKS_RUNNING`` once tasks run on both executors, then ``TASKS <completed> <busy executors> <executor id>
<task id> <launch time, epoch ms>`` (the last three: the task that started last among those running now) each
time that changes. Writes to the report every body and (queueId, queueOffset) in the output (none for an
<output_dir> of rocketmq://<topic>: the stream then writes to that topic exactly-once, and the test reads it
back), the number of failed task attempts and their task ids, the executor ids seen while the query ran and
those still there at the end.

Task states come from Spark's status store task by task: the listener writes a task's entry at its start and
at its end, while a stage's counts (what the status tracker's stage info shows) are written at most every
100 ms and otherwise only at the stage's next event, so they can show a task running on an executor that has
been idle for seconds.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from typing import Any, Dict, Set, Tuple

from pyspark.sql import SparkSession

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from waiting import wait_until  # noqa: E402  (python/tests, next to this script's folder)

# An output of rocketmq://<topic> writes there with deliveryGuarantee=exactly_once instead of to Parquet.
ROCKETMQ_SINK = "rocketmq://"


def main() -> None:
    name_server, topic, output, checkpoint, max_offsets, report_path, go = sys.argv[1:8]
    spark = SparkSession.builder.appName("rocketmq-executor-kill").getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    sc = spark.sparkContext
    jsc = sc._jsc  # test-only: executor registrations
    # The driver's block manager and two executors.
    wait_until("the two executors to register", lambda: jsc.sc().getExecutorMemoryStatus().size() >= 3, 180, 0.2)
    conf = sc.getConf()
    print(f"DRIVER_URL spark://CoarseGrainedScheduler@{conf.get('spark.driver.host')}:{conf.get('spark.driver.port')}")
    sys.stdout.flush()
    wait_until(f"{go} (the test has written the messages)", lambda: os.path.exists(go), 600)

    def executor_ids() -> Set[str]:
        return {e for e in jsc.sc().getExecutorIds().mkString(",").split(",") if e}

    executors_seen: Set[str] = executor_ids()
    stages_seen: Set[int] = set()
    done = threading.Event()

    store = jsc.sc().statusStore()  # test-only: task by task, see the module's docstring
    tasks_by_id: Dict[int, Tuple[str, str, int]] = {}  # task id -> (status, executor id, launch time)

    def refresh_tasks(tracker: Any) -> None:
        for stage_id in sorted(stages_seen):
            info = tracker.getStageInfo(stage_id)
            if info is None:
                continue
            found = store.taskList(stage_id, info.currentAttemptId, 10000)
            for i in range(found.size()):
                task = found.apply(i)
                tasks_by_id[task.taskId()] = (task.status(), task.executorId(), task.launchTime().getTime())

    def watch() -> None:
        announced, last = False, None
        while not done.is_set():
            tracker = sc.statusTracker()
            executors_seen.update(executor_ids())
            stages_seen.update(tracker.getActiveStageIds())
            refresh_tasks(tracker)
            completed = sum(1 for status, _, _ in tasks_by_id.values() if status == "SUCCESS")
            running = [
                (launched, task_id, executor)
                for task_id, (status, executor, launched) in tasks_by_id.items()
                if status == "RUNNING"
            ]
            busy = len({executor for _, _, executor in running})
            if busy >= 2 and not announced:
                print("TASKS_RUNNING", flush=True)
                announced = True
            if announced and running:
                launched, task_id, executor = max(running)
                now = (completed, busy, executor, task_id, launched)
                if now != last:
                    print("TASKS " + " ".join(str(v) for v in now), flush=True)
                    last = now
            done.wait(0.05)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()

    copied = (
        spark.readStream.format("rocketmq")
        .option("nameServer", name_server)
        .option("topic", topic)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", max_offsets)
        .load()
        # A task pauses 8 ms on every 4th message (a JVM-side sleep): long enough to be killed in the middle.
        .selectExpr(
            "CAST(body AS STRING) AS body",
            "queueId",
            "queueOffset",
            "CASE WHEN queueOffset % 4 = 0 THEN reflect('java.lang.Thread', 'sleep', CAST(8 AS BIGINT)) END AS pause",
        )
    )
    if output.startswith(ROCKETMQ_SINK):
        # Exactly-once into another topic (the test reads it back with a plain consumer).
        writer = (
            # The pause goes along as a property, so that it stays computed (a dropped column would be pruned).
            copied.selectExpr("body", "map('pause', coalesce(CAST(pause AS STRING), 'none')) AS properties")
            .writeStream.format("rocketmq")
            .option("nameServer", name_server)
            .option("topic", output[len(ROCKETMQ_SINK) :])
            .option("deliveryGuarantee", "exactly_once")
        )
    else:
        writer = copied.writeStream.format("parquet").option("path", output)
    query = writer.option("checkpointLocation", checkpoint).trigger(availableNow=True).start()
    query.awaitTermination()
    done.set()
    watcher.join()
    if query.exception() is not None:
        raise SystemExit(f"the query failed: {query.exception()}")

    tracker = sc.statusTracker()
    for job in tracker.getJobIdsForGroup(str(query.runId)):
        info = tracker.getJobInfo(job)
        if info is not None:
            stages_seen.update(info.stageIds)
    refresh_tasks(tracker)
    stages: Any = [tracker.getStageInfo(s) for s in sorted(stages_seen)]
    rows = [] if output.startswith(ROCKETMQ_SINK) else spark.read.parquet(output).collect()
    report = {
        "bodies": [r.body for r in rows],
        "positions": [[r.queueId, r.queueOffset] for r in rows],
        "failed_tasks": sum(s.numFailedTasks for s in stages if s is not None),
        "failed_task_ids": sorted(t for t, (status, _, _) in tasks_by_id.items() if status == "FAILED"),
        "stages": len(stages),
        "executors_seen": sorted(executors_seen),
        "executors_at_end": sorted(executor_ids()),
        "batch_ms": [p.durationMs["triggerExecution"] for p in query.recentProgress if p.numInputRows > 0],
    }
    with open(report_path, "w", encoding="utf-8") as out:
        json.dump(report, out)
    spark.stop()


if __name__ == "__main__":
    main()
