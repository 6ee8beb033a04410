"""The README's quick start shows the commands the distribution tests run, for this version."""

from __future__ import annotations

import rocketmq_spark
from embedded_rocketmq import REPO_ROOT

README = (REPO_ROOT / "README.md").read_text()
VERSION = rocketmq_spark.__version__


def test_quick_start_commands_match_the_tests() -> None:
    expected = [
        # test_pip_install.py
        f"pip install python/dist/rocketmq_spark-{VERSION}-py3-none-any.whl",
        "python python/examples/quickstart.py --name-server $NAMESRV --topic quickstart",
        # test_spark_submit_packages.py
        f"--packages io.github.rocketmq-spark:rocketmq-spark-connector_2.13:{VERSION}",
        "build/sbt connector/publishM2",
        # test_local_cluster.py
        f'spark-submit --master "local-cluster[2,1,1024]" --jars rocketmq-spark-connector-assembly_2.13-{VERSION}.jar',
    ]
    missing = [e for e in expected if e not in README]
    assert missing == []


def test_every_public_name_of_the_package_is_in_the_readme() -> None:
    missing = [n for n in rocketmq_spark.__all__ if not n.startswith("_") and n not in ("FORMAT", "OPTION_KEYS")
               and f"`{n}" not in README]
    assert missing == []
