"""End to end through the installed wheel: its bundled jar in a plain pip-installed PySpark."""

from __future__ import annotations

import json
import re
import sys
import zipfile
from pathlib import Path

import pyspark
import pytest

import rocketmq_spark
from embedded_rocketmq import REPO_ROOT, unique_topic
from rocketmq_spark import configure_spark_with_rocketmq, jar_path, read_rocketmq, write_rocketmq

SCHEMA = [
    ("topic", "string"), ("flag", "int"), ("body", "binary"), ("properties", "string"),
    ("brokerName", "string"), ("queueId", "int"), ("queueOffset", "bigint"),
    ("bornTimestamp", "timestamp"), ("storeTimestamp", "timestamp"),
]


def test_the_installed_wheel_carries_the_shaded_jar() -> None:
    jar = Path(jar_path())
    assert jar.is_file()
    assert "site-packages" in jar.parts, f"tests must run against the installed wheel, not {jar}"
    assert jar.name == f"rocketmq-spark-connector-assembly_2.13-{rocketmq_spark.__version__}.jar"
    with zipfile.ZipFile(jar) as z:
        classes = [n for n in z.namelist() if n.endswith(".class")]
    assert any(n.startswith("org/apache/spark/sql/rocketmq/RocketMQSourceProvider") for n in classes)
    assert any(n.startswith("org/apache/rocketmq/client/") for n in classes)
    # Everything third-party is relocated: nothing can clash with Spark's netty, guava or jackson.
    foreign = [n for n in classes if not n.startswith(("org/apache/spark/sql/rocketmq/", "org/apache/rocketmq/",
                                                        "io/github/aliyunmq/"))]
    assert foreign == [], foreign[:20]
    assert any(n.startswith("org/apache/spark/sql/rocketmq/shaded/io/netty/") for n in classes)


def test_spark_sees_only_our_jar(spark) -> None:
    assert spark.conf.get("spark.jars") == jar_path()


def test_write_then_read_back(spark, rocketmq) -> None:
    topic = unique_topic()
    rocketmq.create_topic(topic, queues=4)
    rows = [(f"order-{i}", "even" if i % 2 == 0 else "odd") for i in range(100)]
    write_rocketmq(spark.createDataFrame(rows, "body STRING, tags STRING"),
                   name_server=rocketmq.name_server, topic=topic)

    assert sorted(rocketmq.bodies(topic)) == sorted(b for b, _ in rows)

    df = read_rocketmq(spark, name_server=rocketmq.name_server, topic=topic)
    assert df.dtypes == SCHEMA
    got = df.selectExpr("CAST(body AS STRING) AS body", "properties", "queueId").collect()
    assert sorted(r.body for r in got) == sorted(b for b, _ in rows)
    assert {r.queueId for r in got} == {0, 1, 2, 3}
    tags = {r.body: json.loads(r.properties)["TAGS"] for r in got}
    assert tags == dict(rows)

    evens = read_rocketmq(spark, name_server=rocketmq.name_server, topic=topic, sub_expression="even")
    assert evens.count() == 50


def test_read_what_a_plain_client_sent_with_offsets(spark, rocketmq) -> None:
    topic = unique_topic()
    rocketmq.create_topic(topic, queues=1)
    rocketmq.send(topic, 20, "plain-")
    latest = rocketmq.latest_offsets(topic)
    assert latest == {topic: {"broker-a": {"0": 20}}}
    df = read_rocketmq(spark, name_server=rocketmq.name_server, topic=topic,
                       starting_offsets=json.dumps({topic: {"broker-a": {"0": 5}}}),
                       ending_offsets=json.dumps({topic: {"broker-a": {"0": 15}}}), pull_batch_size=4)
    got = [(r.queueOffset, bytes(r.body).decode()) for r in df.orderBy("queueOffset").collect()]
    assert got == [(i, f"plain-{i}") for i in range(5, 15)]


def test_jvm_errors_name_the_option(spark, rocketmq) -> None:
    with pytest.raises(Exception, match=r"ROCKETMQ_INVALID_OPTION_VALUE.*'latest'.*'startingOffsets'"):
        read_rocketmq(spark, name_server=rocketmq.name_server, topic="any", starting_offsets="latest").collect()
    with pytest.raises(Exception, match=r"ROCKETMQ_TOPIC_NOT_FOUND.*'no-such-topic'"):
        read_rocketmq(spark, name_server=rocketmq.name_server, topic="no-such-topic").collect()


def test_python_checks_arguments_before_the_jvm(spark) -> None:
    with pytest.raises(TypeError, match="name_server must be a str"):
        read_rocketmq(spark, name_server=1234, topic="t")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="topic is required"):
        read_rocketmq(spark, name_server="h:1", topic=None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="pull_batch_size must be a positive int, not 0"):
        read_rocketmq(spark, name_server="h:1", topic="t", pull_batch_size=0)
    with pytest.raises(TypeError, match="pull_timeout_ms must be an int"):
        read_rocketmq(spark, name_server="h:1", topic="t", pull_timeout_ms="3000")  # type: ignore[arg-type]


class _FakeBuilder:
    """Stands in for SparkSession.Builder, whose option dict is shared by every builder."""

    def __init__(self, jars: str) -> None:
        self._options = {"spark.jars": jars} if jars else {}

    def config(self, key: str, value: str) -> "_FakeBuilder":
        self._options[key] = value
        return self


def test_configure_appends_to_spark_jars_and_never_overwrites() -> None:
    builder = configure_spark_with_rocketmq(_FakeBuilder("/opt/a.jar,/opt/b.jar"))  # type: ignore[arg-type]
    assert builder._options["spark.jars"] == f"/opt/a.jar,/opt/b.jar,{jar_path()}"
    again = configure_spark_with_rocketmq(builder)  # type: ignore[arg-type]
    assert again._options["spark.jars"] == f"/opt/a.jar,/opt/b.jar,{jar_path()}"
    assert configure_spark_with_rocketmq(_FakeBuilder(""))._options["spark.jars"] == jar_path()  # type: ignore


def test_spark_version_of_the_build_is_the_pinned_pyspark() -> None:
    build = (REPO_ROOT / "build.sbt").read_text()
    spark_version = re.search(r'val sparkVersion = "([^"]+)"', build).group(1)  # type: ignore[union-attr]
    pins = (REPO_ROOT / "python" / "requirements-test.txt").read_text()
    assert f"pyspark=={spark_version}" in pins
    assert pyspark.__version__ == spark_version
    assert sys.version_info >= (3, 10)
