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

"""``register_rocketmq_catalog``: the topics of a RocketMQ cluster as the tables of a Spark SQL
catalog.

Only session configuration is set (``spark.conf.set``), so classic and Spark Connect sessions work
alike.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Mapping, Optional

from rocketmq_spark._converters import checked_text
from rocketmq_spark._options import (
    OPTION_KEYS,
    connector_options,
    required,
    with_options,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: The connector's catalog class, the value of ``spark.sql.catalog.<name>``.
CATALOG_CLASS = "org.apache.spark.sql.rocketmq.RocketMQCatalog"

# A name Spark SQL reads as one identifier without quoting, and that holds no '.' (Spark splits the
# configuration key spark.sql.catalog.<name>.<option> at the first dot after the name).
_CATALOG_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def register_rocketmq_catalog(
    spark: "SparkSession",
    name: str = "rocketmq",
    *,
    name_server: str,
    allow_drop_table: Optional[bool] = None,
    request_timeout_ms: Optional[int] = None,
    metadata_retries: Optional[int] = None,
    metadata_retry_interval_ms: Optional[int] = None,
    retry_timeout_ms: Optional[int] = None,
    max_messages_per_second: Optional[int] = None,
    max_bytes_per_second: Optional[int] = None,
    access_key: Optional[str] = None,
    secret_key: Optional[str] = None,
    security_token: Optional[str] = None,
    namespace: Optional[str] = None,
    use_tls: Optional[bool] = None,
    access_channel: Optional[str] = None,
    options: Optional[Mapping[str, str]] = None,
) -> None:
    """Register the RocketMQ cluster at ``name_server`` as the Spark SQL catalog ``name``: each
    topic is a table.

    Sets ``spark.sql.catalog.<name>`` and one ``spark.sql.catalog.<name>.<option>`` per keyword
    given. Then ``SELECT`` reads a topic, ``INSERT INTO`` writes to it (columns by name: ``body``,
    and optionally ``tags``, ``keys``, ``properties``, ``shardingKey``, ``deliverTime``,
    ``priority``, ``liteTopic``),
    ``SHOW TABLES IN <name>`` lists the topics, ``DESCRIBE TABLE EXTENDED`` shows their queues and
    message counts, ``CREATE TABLE`` creates a topic (table properties ``queues``, default 8 per
    broker group, and ``cluster``), and ``DROP TABLE`` deletes one and its messages, only with
    ``allow_drop_table=True``. ``spark.readStream.table`` and ``writeStream.toTable`` work on the
    tables too.

    Spark keeps the catalog it made for a name for the session's life: register another name to
    change the options. Spark redacts the credential settings (``…accessKey``, ``…secretKey``,
    ``…securityToken``) wherever it shows its configuration; the catalog never shows them.

    Parameters
    ----------
    spark : SparkSession
        The session to register the catalog in (classic or Spark Connect: only its configuration is
        set).
    name : str, default "rocketmq"
        The catalog's name: letters, digits and ``_``, not starting with a digit.
    name_server : str
        The cluster's name server, ``"host:port"`` (several separated by ``;``).
    allow_drop_table : bool, optional
        Whether ``DROP TABLE`` deletes the topic and every message in it (otherwise it fails, saying
        how to allow it).
    request_timeout_ms, metadata_retries, metadata_retry_interval_ms : int, optional
        Metadata requests: the timeout of each, their attempts and the pause between two.
    retry_timeout_ms : int, optional
        How long failed pulls and sends are retried and a missing broker waited for.
    max_messages_per_second, max_bytes_per_second : int, optional
        A cap on the messages, or bytes of message bodies, the whole query moves a second, shared
        out over its tasks that run at once (a managed service's rate quota, say).
    access_key, secret_key, security_token : str, optional
        ACL credentials (the token for temporary ones).
    namespace : str, optional
        The namespace of the topics.
    use_tls : bool, optional
        Connect over TLS.
    access_channel : str, optional
        ``"LOCAL"`` (the default) or ``"CLOUD"``.
    options : dict of str to str, optional
        Catalog options by their keys (each set as ``spark.sql.catalog.<name>.<key>``), for an
        option no keyword gives; an option set on the catalog applies to all its tables. An option
        given both ways with different values is a ``ValueError`` naming both.

    Returns
    -------
    None
        Once the session's configuration is set (nothing is asked of the cluster until a table is
        used).

    Examples
    --------
    >>> from rocketmq_spark import register_rocketmq_catalog
    >>> register_rocketmq_catalog(spark, "rmq", name_server="127.0.0.1:9876")  # doctest: +SKIP
    >>> spark.sql("SELECT CAST(body AS STRING) FROM rmq.orders").show()  # doctest: +SKIP
    >>> spark.sql("INSERT INTO rmq.`orders-copy` SELECT body FROM rmq.orders")  # doctest: +SKIP
    """
    values = dict(locals())
    del values["spark"], values["name"], values["options"]
    checked_text("name", name)
    if not _CATALOG_NAME.match(name):
        raise ValueError(
            "name must be a catalog name of letters, digits and '_' (not starting with a "
            f"digit), not {name!r}"
        )
    required("name_server", name_server)
    keywords = {OPTION_KEYS[kw]: kw for kw, value in values.items() if value is not None}
    settings = with_options(connector_options(values), options, keywords)
    spark.conf.set(f"spark.sql.catalog.{name}", CATALOG_CLASS)
    for key, value in settings.items():
        spark.conf.set(f"spark.sql.catalog.{name}.{key}", value)


__all__ = ["CATALOG_CLASS", "register_rocketmq_catalog"]
