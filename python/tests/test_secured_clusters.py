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


"""Secured clusters from Python: ACL credentials as keywords and from the environment, TLS, a
namespace.

Each secured harness is a RocketMQ process of its own (``dev/rocketmq-harness --acl`` or ``--tls``).
"""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from pathlib import Path
from typing import Iterator

import pytest

from embedded_rocketmq import EmbeddedRocketMQProcess, unique_topic
from rocketmq_spark import jar_path, read_rocketmq, write_rocketmq
from spark_processes import spark_env, spark_java_options, spark_submit


@pytest.fixture(scope="module")
def acl_rocketmq() -> Iterator[EmbeddedRocketMQProcess]:
    harness = EmbeddedRocketMQProcess(log_path=_log("harness-acl.log"), args=["--acl"]).start()
    try:
        yield harness
    finally:
        harness.stop()


@pytest.fixture(scope="module")
def tls_rocketmq() -> Iterator[EmbeddedRocketMQProcess]:
    harness = EmbeddedRocketMQProcess(log_path=_log("harness-tls.log"), args=["--tls"]).start()
    try:
        yield harness
    finally:
        harness.stop()


def _log(name: str) -> Path:
    return Path(__file__).resolve().parents[2] / "it-tests" / "target" / name


def _user(harness: EmbeddedRocketMQProcess, prefix: str, rights: str) -> "tuple[str, str]":
    access_key, secret_key = f"{prefix}-{uuid.uuid4().hex[:8]}", f"secret-{uuid.uuid4()}"
    harness.create_user(access_key, secret_key, rights)
    return access_key, secret_key


def _bodies(df) -> list:
    return sorted(bytes(r.body).decode() for r in df.select("body").collect())


@pytest.mark.e2e
def test_acl_credentials_as_keywords_write_and_read_and_a_wrong_secret_names_only_the_key(
    spark, acl_rocketmq
) -> None:
    access_key, secret_key = _user(acl_rocketmq, "py", "readwrite")
    topic = unique_topic("acl")
    acl_rocketmq.create_topic(topic, queues=2)
    rows = spark.createDataFrame([(f"a{i}",) for i in range(10)], "body STRING")
    write_rocketmq(
        rows, acl_rocketmq.name_server, topic=topic, access_key=access_key, secret_key=secret_key
    )
    assert sorted(acl_rocketmq.bodies(topic)) == sorted(f"a{i}" for i in range(10))
    read = read_rocketmq(
        spark, acl_rocketmq.name_server, topic, access_key=access_key, secret_key=secret_key
    )
    assert _bodies(read) == sorted(f"a{i}" for i in range(10))

    wrong = f"wrong-{secret_key}"
    # B017: a Py4JJavaError in classic, a gRPC error in Connect.
    with pytest.raises(Exception) as caught:  # noqa: B017
        read_rocketmq(
            spark, acl_rocketmq.name_server, topic, access_key=access_key, secret_key=wrong
        ).collect()
    text = str(caught.value)
    assert "ROCKETMQ_ACCESS_DENIED" in text and access_key in text, text[:3000]
    assert wrong not in text and secret_key not in text


def test_acl_credentials_from_the_environment_of_spark_submit(acl_rocketmq, tmp_path) -> None:
    access_key, secret_key = _user(acl_rocketmq, "env", "read")
    topic = unique_topic("acl-env")
    acl_rocketmq.create_topic(topic, queues=2)
    acl_rocketmq.send(topic, 7, "e")
    script = Path(__file__).parent / "scripts" / "secured_read.py"
    command = [
        spark_submit(),
        "--master",
        "local[1]",
        "--jars",
        str(jar_path()),
        "--conf",
        f"spark.driver.extraJavaOptions={spark_java_options()}",
        str(script),
        acl_rocketmq.name_server,
        topic,
    ]
    env = spark_env(ROCKETMQ_ACCESS_KEY=access_key, ROCKETMQ_SECRET_KEY=secret_key)
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-6000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert sorted(result["bodies"]) == sorted(f"e{i}" for i in range(7))
    assert secret_key not in done.stdout and secret_key not in done.stderr


@pytest.mark.e2e
def test_tls_reads_and_writes_with_use_tls_and_plain_text_fails_clearly_and_fast(
    spark, tls_rocketmq
) -> None:
    topic = unique_topic("tls")
    tls_rocketmq.create_topic(topic, queues=2)
    tls_rocketmq.send(topic, 5, "t")
    assert _bodies(read_rocketmq(spark, tls_rocketmq.name_server, topic, use_tls=True)) == [
        f"t{i}" for i in range(5)
    ]
    rows = spark.createDataFrame([("w1",), ("w2",)], "body STRING")
    write_rocketmq(rows, tls_rocketmq.name_server, topic=topic, use_tls=True)
    assert sorted(tls_rocketmq.bodies(topic)) == sorted([f"t{i}" for i in range(5)] + ["w1", "w2"])

    started = time.monotonic()
    # B017: a Py4JJavaError in classic, a gRPC error in Connect.
    with pytest.raises(Exception) as caught:  # noqa: B017
        read_rocketmq(
            spark,
            tls_rocketmq.name_server,
            topic,
            request_timeout_ms=2000,
            metadata_retries=1,
            retry_timeout_ms=0,
        ).collect()
    took_s = time.monotonic() - started
    text = str(caught.value)
    assert "ROCKETMQ_NAME_SERVER_UNREACHABLE" in text and "useTLS" in text, text[:3000]
    assert took_s < 60, f"a plain-text read of a TLS cluster took {took_s:.0f} s to fail"


@pytest.mark.e2e
def test_a_namespace_scopes_what_is_written_and_read(spark, acl_rocketmq) -> None:
    access_key, secret_key = _user(acl_rocketmq, "ns", "readwrite")
    topic, namespace = unique_topic("ns"), "py_tenant"
    acl_rocketmq.create_topic(f"{namespace}%{topic}", queues=2)
    acl_rocketmq.create_topic(topic, queues=2)
    credentials = {"access_key": access_key, "secret_key": secret_key}
    rows = spark.createDataFrame([("n1",), ("n2",)], "body STRING")
    write_rocketmq(rows, acl_rocketmq.name_server, topic=topic, namespace=namespace, **credentials)
    scoped = read_rocketmq(
        spark, acl_rocketmq.name_server, topic, namespace=namespace, **credentials
    )
    assert _bodies(scoped) == ["n1", "n2"]
    assert {r.topic for r in scoped.select("topic").collect()} == {topic}
    assert _bodies(read_rocketmq(spark, acl_rocketmq.name_server, topic, **credentials)) == []


def test_least_privilege_users_read_and_write_a_namespace_through_a_proxy_with_auth(
    spark, acl_rocketmq
) -> None:
    """A managed RocketMQ 5 service as its users see it: a proxy endpoint with authentication on, an
    instance namespace, and applications with the fewest rights (ACL 2.0): a reader with Sub and Get
    on its topic and Sub on its consumer group, a writer with Pub on its topic."""
    proxy = acl_rocketmq.start_proxy()
    topic, namespace = unique_topic("lp"), "py_managed"
    group = f"lp-{topic[-8:]}"
    acl_rocketmq.create_topic(f"{namespace}%{topic}", queues=2)
    reader_key, reader_secret = f"reader-{uuid.uuid4().hex[:8]}", f"secret-{uuid.uuid4()}"
    writer_key, writer_secret = f"writer-{uuid.uuid4().hex[:8]}", f"secret-{uuid.uuid4()}"
    # RocketMQ names a namespaced topic and group this way on the brokers.
    on_broker = f"{namespace}%{topic}"
    acl_rocketmq.create_user_with_rights(
        reader_key, reader_secret, f"Topic:{on_broker}=Sub+Get,Group:{namespace}%{group}=Sub"
    )
    acl_rocketmq.create_user_with_rights(writer_key, writer_secret, f"Topic:{on_broker}=Pub")
    rows = spark.createDataFrame([(f"m{i}",) for i in range(20)], "body STRING")
    write_rocketmq(
        rows, proxy, topic, namespace=namespace, access_key=writer_key, secret_key=writer_secret
    )
    # Through a proxy, planning cannot wait for the broker to index what it acknowledged.
    acl_rocketmq.await_indexed()
    read = read_rocketmq(
        spark,
        proxy,
        topic,
        namespace=namespace,
        consumer_group=group,
        access_key=reader_key,
        secret_key=reader_secret,
    )
    assert _bodies(read) == sorted(f"m{i}" for i in range(20))
    # The reader may not write: the error names its key and what writing needs.
    # B017: a Py4JJavaError in classic, a gRPC error in Connect.
    with pytest.raises(Exception) as caught:  # noqa: B017
        write_rocketmq(
            rows, proxy, topic, namespace=namespace, access_key=reader_key, secret_key=reader_secret
        )
    text = str(caught.value)
    assert "ROCKETMQ_ACCESS_DENIED" in text and reader_key in text and "Pub on the topic" in text, (
        text[:3000]
    )
    assert reader_secret not in text
