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

"""Checkpoints move forward across Spark versions: a streaming query's checkpoint written on each
supported pyspark (the fixtures under python/tests/fixtures, one per version, written by
dev/write-checkpoint-fixtures) resumes on this one and reads only what came after it. Runs on every
pyspark of the matrix, each taking the fixtures of its own version and every earlier one (3.5 to 4.x
included; Spark does not read newer ones)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pyspark
import pytest

from embedded_rocketmq import REPO_ROOT, unique_topic

sys.path.insert(0, str(REPO_ROOT / "python" / "tests" / "scripts"))
from checkpoint_fixture import TOPIC, query  # noqa: E402

pytestmark = pytest.mark.cross_version

FIXTURES = REPO_ROOT / "python" / "tests" / "fixtures"


def _version(text: str) -> tuple:
    return tuple(int(p) for p in text.split(".")[:3])


def _fixtures() -> list:
    """The fixtures of this pyspark's version and earlier ones."""
    running = _version(pyspark.__version__)
    found = sorted(
        FIXTURES.glob("checkpoint-spark-*"), key=lambda p: _version(p.name.split("-")[-1])
    )
    return [p for p in found if _version(p.name.split("-")[-1]) <= running]


def test_there_is_a_fixture_of_every_version_of_the_matrix() -> None:
    names = {p.name for p in FIXTURES.glob("checkpoint-spark-*")}
    assert names == {f"checkpoint-spark-{v}" for v in ("3.5.0", "4.0.5", "4.1.4", "4.2.0", "4.3.0")}


def _copy_for_topic(fixture: Path, target: Path, topic: str) -> None:
    """The fixture, its topic renamed (offsets and sources name it; each test reads a topic of its
    own)."""
    shutil.copytree(fixture, target)
    for path in target.rglob("*"):
        if path.is_file():
            text = path.read_bytes()
            if TOPIC.encode() in text:
                path.write_bytes(text.replace(TOPIC.encode(), topic.encode()))


@pytest.mark.parametrize("fixture", _fixtures(), ids=lambda p: p.name.removeprefix("checkpoint-"))
def test_a_checkpoint_of_this_or_an_earlier_spark_resumes_after_what_it_read(
    spark, rocketmq, tmp_path, fixture
):
    topic = unique_topic("ckpt")
    rocketmq.create_topic(topic, queues=1)
    rocketmq.send(topic, 8, "m")  # m0..m4 were read when the fixture was written; m5..m7 were not
    checkpoint = tmp_path / "checkpoint"
    _copy_for_topic(fixture, checkpoint, topic)
    # The sink: a batch function (the fixture's own file sink kept its log beside its output).
    got = []
    q = (
        query(spark, rocketmq.name_server, topic)
        .writeStream.foreachBatch(
            lambda df, _: got.extend((r.queueOffset, r.body) for r in df.collect())
        )
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    q.awaitTermination(180)
    assert not q.isActive and q.exception() is None
    assert sorted(got) == [(i, f"m{i}") for i in range(5, 8)]
