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

"""The RocketMQ catalog from Python: ``register_rocketmq_catalog``, then a cluster's topics as Spark
SQL tables."""

from __future__ import annotations

import uuid
from typing import Any, Dict

import pytest

from embedded_rocketmq import unique_topic
from rocketmq_spark import register_rocketmq_catalog


class _Conf:
    def __init__(self) -> None:
        self.values: Dict[str, Any] = {}

    def set(self, key: str, value: Any) -> None:
        self.values[key] = value


class _Session:
    """Records the configuration a function sets; it has nothing else."""

    def __init__(self) -> None:
        self.conf = _Conf()


class _NoSpark:
    """Fails the test if the function under test reaches for Spark: the checks must come first."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"Spark was reached ({name}) before the arguments were checked")


def test_register_sets_the_catalog_and_its_options_only() -> None:
    session = _Session()
    register_rocketmq_catalog(
        session,  # type: ignore[arg-type]
        "rmq",
        name_server="h:1",
        allow_drop_table=True,
        request_timeout_ms=5000,
        access_key="reader",
        secret_key="s3cret",
        use_tls=False,
    )
    assert session.conf.values == {
        "spark.sql.catalog.rmq": "org.apache.spark.sql.rocketmq.RocketMQCatalog",
        "spark.sql.catalog.rmq.nameServer": "h:1",
        "spark.sql.catalog.rmq.allowDropTable": "true",
        "spark.sql.catalog.rmq.requestTimeoutMs": "5000",
        "spark.sql.catalog.rmq.accessKey": "reader",
        "spark.sql.catalog.rmq.secretKey": "s3cret",
        "spark.sql.catalog.rmq.useTLS": "false",
    }

    default = _Session()
    register_rocketmq_catalog(default, name_server="h:1")  # type: ignore[arg-type]
    assert default.conf.values == {
        "spark.sql.catalog.rocketmq": "org.apache.spark.sql.rocketmq.RocketMQCatalog",
        "spark.sql.catalog.rocketmq.nameServer": "h:1",
    }


def test_register_checks_its_arguments_before_spark() -> None:
    spark: Any = _NoSpark()
    with pytest.raises(ValueError, match="catalog name"):
        register_rocketmq_catalog(spark, "my.catalog", name_server="h:1")
    with pytest.raises(ValueError, match="catalog name"):
        register_rocketmq_catalog(spark, "1rmq", name_server="h:1")
    with pytest.raises(TypeError, match="name must be a str"):
        register_rocketmq_catalog(spark, 7, name_server="h:1")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="name_server is required"):
        register_rocketmq_catalog(spark, "rmq", name_server=None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="allow_drop_table must be a bool"):
        register_rocketmq_catalog(
            spark,
            "rmq",
            name_server="h:1",
            allow_drop_table="yes",  # type: ignore[arg-type]
        )
    with pytest.raises(ValueError, match="request_timeout_ms must be a positive int"):
        register_rocketmq_catalog(spark, "rmq", name_server="h:1", request_timeout_ms=0)
    with pytest.raises(TypeError):
        # A catalog's tables are its topics: it takes no topic.
        register_rocketmq_catalog(
            spark,
            "rmq",
            name_server="h:1",
            topic="t",  # type: ignore[call-arg]
        )


def _tables(spark: Any, catalog: str) -> set:
    return {r.tableName for r in spark.sql(f"SHOW TABLES IN {catalog}").collect()}


@pytest.mark.e2e
def test_topics_as_tables_listed_read_written_described_created_and_dropped(
    spark, rocketmq
) -> None:
    topic = unique_topic("catalog")
    rocketmq.create_topic(topic, queues=2)
    rocketmq.send(topic, 5, "sent-")
    # A new name for each registration: a session keeps the catalog it made for a name.
    catalog = f"rmq_{uuid.uuid4().hex[:8]}"
    register_rocketmq_catalog(
        spark, catalog, name_server=rocketmq.name_server, allow_drop_table=True
    )

    listed = _tables(spark, catalog)
    assert topic in listed
    assert not any(
        t.startswith(("%RETRY%", "%DLQ%", "rmq_sys_")) or t == "broker-a" for t in listed
    ), listed

    table = f"{catalog}.`{topic}`"
    assert spark.sql(f"SELECT count(*) AS n FROM {table}").collect()[0].n == 5

    spark.sql(
        f"INSERT INTO {table} SELECT concat('inserted-', CAST(id AS STRING)) AS body FROM range(3)"
    )
    expected = sorted([f"sent-{i}" for i in range(5)] + [f"inserted-{i}" for i in range(3)])
    assert sorted(rocketmq.bodies(topic)) == expected
    read_back = spark.sql(f"SELECT CAST(body AS STRING) AS body FROM {table}").collect()
    assert sorted(r.body for r in read_back) == expected

    described = {
        r.col_name: r.data_type for r in spark.sql(f"DESCRIBE TABLE EXTENDED {table}").collect()
    }
    properties = described["Table Properties"]
    assert "queues.broker-a=2" in properties and "messageCount=8" in properties, properties

    created = unique_topic("catalog-new")
    spark.sql(f"CREATE TABLE {catalog}.`{created}` TBLPROPERTIES ('queues'='3')")
    assert sorted(rocketmq.latest_offsets(created)[created]["broker-a"]) == ["0", "1", "2"]
    assert created in _tables(spark, catalog)

    with pytest.raises(Exception, match="ROCKETMQ_INVALID_TABLE_PROPERTY.QUEUES"):
        spark.sql(
            f"CREATE TABLE {catalog}.`{unique_topic('catalog-bad')}` TBLPROPERTIES ('queues'='abc')"
        )

    spark.sql(f"DROP TABLE {catalog}.`{created}`")
    assert created not in _tables(spark, catalog)
