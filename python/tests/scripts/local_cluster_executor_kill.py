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

"""Run by test_executor_kill.py with spark-submit --master local-cluster[2,1,1024] --jars
<assembly>: one application that copies topics one after the other, each with a slow AvailableNow
query, during each of which the test kills one executor JVM with SIGKILL.

Usage: local_cluster_executor_kill.py <name_server> <max_offsets> <copy>...
       where each <copy> is five arguments: <topic> <output_dir> <checkpoint_dir> <report.json> <go>

Prints ``DRIVER_URL spark://CoarseGrainedScheduler@host:port`` (how the test finds this
application's executor processes) once both executors are registered. Then, for copy number n (from
0): prints ``READY n`` once two live executors are registered (after a kill, the worker has started
a new executor in place of the killed one), starts the query once the file <go> exists (the test
sends the messages meanwhile; spark-submit gives a Python driver no stdin), prints ``TASKS_RUNNING``
once tasks run on both executors, then
``TASKS <completed> <busy executors> <executor id> <task id> <launch time, epoch ms>`` (the last
three: the task that started last among those running now) each time that changes, and ``DONE n``
once its report is written. The report holds every body and (queueId, queueOffset) in the output
(none for an <output_dir> of rocketmq://<topic>: the stream then writes to that topic exactly-once,
and the test reads it back), the number of failed task attempts of that copy's query and their task
ids, the executor ids seen while it ran and those still there at its end.

Task states come from Spark's status store task by task: the listener writes a task's entry at its
start and at its end, while a stage's counts (what the status tracker's stage info shows) are
written at most every 100 ms and otherwise only at the stage's next event, so they can show a task
running on an executor that has been idle for seconds.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from typing import Any, Dict, List, Set, Tuple

from pyspark.sql import SparkSession

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from waiting import wait_until  # noqa: E402  (python/tests, next to this script's folder)

# An output of rocketmq://<topic> writes there with deliveryGuarantee=exactly_once instead of to
# Parquet.
ROCKETMQ_SINK = "rocketmq://"
COPY_ARGS = 5


def main() -> None:
    name_server, max_offsets, *rest = sys.argv[1:]
    if not rest or len(rest) % COPY_ARGS:
        raise SystemExit(__doc__)
    copies = [rest[i : i + COPY_ARGS] for i in range(0, len(rest), COPY_ARGS)]
    spark = SparkSession.builder.appName("rocketmq-executor-kill").getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    sc = spark.sparkContext
    jsc = sc._jsc  # test-only: executor registrations

    def executor_ids() -> Set[str]:
        return {e for e in jsc.sc().getExecutorIds().mkString(",").split(",") if e}

    def two_executors() -> bool:
        # Two live executors, each with its block manager (the driver's is the third).
        return len(executor_ids()) >= 2 and jsc.sc().getExecutorMemoryStatus().size() >= 3

    wait_until("the two executors to register", two_executors, 180, 0.2)
    conf = sc.getConf()
    print(
        "DRIVER_URL "
        f"spark://CoarseGrainedScheduler@{conf.get('spark.driver.host')}:"
        f"{conf.get('spark.driver.port')}"
    )
    sys.stdout.flush()
    for number, (topic, output, checkpoint, report_path, go) in enumerate(copies):
        # After the previous copy's kill, the worker starts another executor in place of the killed
        # one.
        wait_until(f"two executors before copy {number}", two_executors, 180, 0.2)
        print(f"READY {number}", flush=True)
        wait_until(
            f"{go} (the test has written the messages)", lambda go=go: os.path.exists(go), 600
        )
        report = copy(spark, executor_ids, name_server, topic, output, checkpoint, max_offsets)
        with open(report_path, "w", encoding="utf-8") as out:
            json.dump(report, out)
        print(f"DONE {number}", flush=True)
    spark.stop()


def copy(
    spark: SparkSession,
    executor_ids: Any,
    name_server: str,
    topic: str,
    output: str,
    checkpoint: str,
    max_offsets: str,
) -> Dict[str, Any]:
    """One copy of ``topic`` into ``output`` while the test kills an executor; what the report
    holds."""
    sc = spark.sparkContext
    executors_seen: Set[str] = executor_ids()
    stages_seen: Set[int] = set()
    done = threading.Event()

    store = sc._jsc.sc().statusStore()  # test-only: task by task, see the module's docstring
    tasks_by_id: Dict[
        int, Tuple[str, str, int]
    ] = {}  # task id -> (status, executor id, launch time)

    def refresh_tasks(tracker: Any) -> None:
        for stage_id in sorted(stages_seen):
            info = tracker.getStageInfo(stage_id)
            if info is None:
                continue
            found = store.taskList(stage_id, info.currentAttemptId, 10000)
            for i in range(found.size()):
                task = found.apply(i)
                tasks_by_id[task.taskId()] = (
                    task.status(),
                    task.executorId(),
                    task.launchTime().getTime(),
                )

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
        # A task pauses 8 ms on every 4th message (a JVM-side sleep): long enough to be killed in
        # the middle.
        .selectExpr(
            "CAST(body AS STRING) AS body",
            "queueId",
            "queueOffset",
            "CASE WHEN queueOffset % 4 = 0 THEN reflect('java.lang.Thread', 'sleep', CAST(8 AS "
            "BIGINT)) END AS pause",
        )
    )
    if output.startswith(ROCKETMQ_SINK):
        # Exactly-once into another topic (the test reads it back with a plain consumer).
        writer = (
            # The pause goes along as a property, so that it stays computed (a dropped column would
            # be pruned).
            copied.selectExpr(
                "body", "map('pause', coalesce(CAST(pause AS STRING), 'none')) AS properties"
            )
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
    stages: List[Any] = [tracker.getStageInfo(s) for s in sorted(stages_seen)]
    rows = [] if output.startswith(ROCKETMQ_SINK) else spark.read.parquet(output).collect()
    return {
        "bodies": [r.body for r in rows],
        "positions": [[r.queueId, r.queueOffset] for r in rows],
        "failed_tasks": sum(s.numFailedTasks for s in stages if s is not None),
        "failed_task_ids": sorted(
            t for t, (status, _, _) in tasks_by_id.items() if status == "FAILED"
        ),
        "stages": len(stages),
        "executors_seen": sorted(executors_seen),
        "executors_at_end": sorted(executor_ids()),
        "batch_ms": [
            p.durationMs["triggerExecution"] for p in query.recentProgress if p.numInputRows > 0
        ],
    }


if __name__ == "__main__":
    main()
