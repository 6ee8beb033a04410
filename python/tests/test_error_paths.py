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

"""The connector's errors reach Python with their message, raised on the driver or in a task.

Plain ``spark.read.format("rocketmq")`` / ``df.write.format("rocketmq")`` on purpose: the package
checks options in Python first, and these tests are about the JVM's errors. They run on whatever
pyspark the interpreter has: in the main suite (the pyspark the jar is built against) and, through
``dev/test-spark-version``, on older Spark releases the jar must also run on (4.0, Databricks 17.3
LTS). Assertions name options, columns, values and condition names, never whole messages.
"""

from __future__ import annotations

import re
import threading
from typing import Any, Callable, Optional

import pytest
from pyspark.errors import IllegalArgumentException, PySparkException

from embedded_rocketmq import unique_topic

pytestmark = pytest.mark.cross_version

#: What a user sees when the JVM exception cannot even be rendered (NoClassDefFoundError of
#: org/apache/spark/BreakingChangeInfo on Spark 4.0): Py4J's empty answer instead of our message. (A
#: bare "An error occurred while calling oNN.save." is fine: it heads every Java exception pyspark
#: does not convert.)
BROKEN = re.compile(
    r"NoClassDefFoundError|BreakingChangeInfo|Answer from Java side is empty"
    r"|An error occurred while calling o\d+\.get\w+"
)

ANY_ADDRESS = "127.0.0.1:1"  # never contacted: options are checked before any name server is


def condition_of(error) -> str:
    """The condition: getCondition on pyspark 4 (getErrorClass, its deprecated alias, on 3.5)."""
    return error.getCondition() if hasattr(error, "getCondition") else error.getErrorClass()


def message_of(error: BaseException) -> str:
    text = str(error)
    broken = BROKEN.search(text)
    assert broken is None, (
        f"the connector's error did not reach Python ({broken.group()}):\n{text[:3000]}"
    )
    return text


def failure_of(spark: Any, action: Callable[[], Any], timeout_s: float = 120.0) -> BaseException:
    """The exception ``action`` raises. If it has not ended after ``timeout_s`` (a task whose error
    was lost never reports back, and its job waits forever), its jobs are cancelled and the test
    fails."""
    outcome: list = []

    def run() -> None:
        try:
            action()
            outcome.append(None)
        except BaseException as e:  # noqa: B036 - handed to the test thread
            outcome.append(e)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive():
        spark.sparkContext.cancelAllJobs()
        worker.join(60)
        pytest.fail(
            f"the action did not end within {timeout_s:.0f} s: the error raised in its task never "
            f"reached the driver (then: {outcome[0] if outcome else 'still running'!s:.300})"
        )
    error: Optional[BaseException] = outcome[0]
    assert error is not None, "the action was expected to fail"
    return error


def batch_read(spark: Any, **options: str) -> Any:
    reader = spark.read.format("rocketmq")
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load()


def test_an_invalid_option_value_names_the_option_and_the_value(spark) -> None:
    with pytest.raises(IllegalArgumentException) as caught:
        batch_read(spark, nameServer=ANY_ADDRESS, topic="any", pullBatchSize="lots").collect()
    text = message_of(caught.value)
    assert "pullBatchSize" in text and "lots" in text
    condition = condition_of(caught.value)
    assert condition is not None and condition.startswith("ROCKETMQ_"), condition
    parameters = caught.value.getMessageParameters() or {}
    assert "pullBatchSize" in parameters.values() and "lots" in parameters.values(), parameters


def test_a_missing_required_option_is_named(spark) -> None:
    with pytest.raises(IllegalArgumentException) as caught:
        batch_read(spark, topic="any").collect()
    assert "nameServer" in message_of(caught.value)
    assert (condition_of(caught.value) or "").startswith("ROCKETMQ_")


def test_writing_without_a_body_column_names_the_column(spark, rocketmq) -> None:
    df = spark.createDataFrame([("k", "t")], "keys STRING, tags STRING")
    with pytest.raises(IllegalArgumentException) as caught:
        (
            df.write.format("rocketmq")
            .option("nameServer", rocketmq.name_server)
            .option("topic", unique_topic("nobody"))
            .mode("append")
            .save()
        )
    text = message_of(caught.value)
    assert "'body'" in text or "`body`" in text or '"body"' in text, text[:2000]
    assert (condition_of(caught.value) or "").startswith("ROCKETMQ_")


def test_reading_a_topic_the_broker_does_not_have_names_the_topic(spark, rocketmq) -> None:
    topic = unique_topic("absent")
    with pytest.raises(PySparkException) as caught:
        batch_read(spark, nameServer=rocketmq.name_server, topic=topic).collect()
    text = message_of(caught.value)
    assert topic in text and rocketmq.name_server in text
    assert (condition_of(caught.value) or "").startswith("ROCKETMQ_")


def test_an_error_in_a_task_fails_the_job_with_its_condition_and_column(spark, rocketmq) -> None:
    topic = unique_topic("nullbody")
    rocketmq.create_topic(topic, queues=1)
    df = spark.createDataFrame([("fine",), (None,)], "body STRING").coalesce(1)
    # Raised by the data writer on an executor; the job fails with the task's exception as its
    # cause.
    error = failure_of(
        spark,
        lambda: (
            df.write.format("rocketmq")
            .option("nameServer", rocketmq.name_server)
            .option("topic", topic)
            .mode("append")
            .save()
        ),
    )
    text = message_of(error)
    assert "NULL_COLUMN" in text and "body" in text, text[:3000]


def test_an_invalid_option_of_a_stream_stops_the_query_with_the_option_named(
    spark, tmp_path
) -> None:
    stream = (
        spark.readStream.format("rocketmq")
        .option("nameServer", ANY_ADDRESS)
        .option("topic", "any")
        .option("maxOffsetsPerTrigger", "many")
        .load()
    )
    query = None
    with pytest.raises(Exception) as caught:
        query = (
            stream.writeStream.format("noop")
            .option("checkpointLocation", str(tmp_path / "cp"))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination(120)
    if query is not None:
        query.stop()
    text = message_of(caught.value)
    assert "maxOffsetsPerTrigger" in text and "many" in text, text[:3000]
