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
        "build/sbt connector/publish",
        "--conf spark.jars.ivySettings=$PWD/dev/ivysettings.xml",
        # test_local_cluster.py
        f'spark-submit --master "local-cluster[2,1,1024]" --jars rocketmq-spark-connector-assembly_2.13-{VERSION}.jar',
    ]
    missing = [e for e in expected if e not in README]
    assert missing == []


def test_every_public_name_of_the_package_is_in_the_readme() -> None:
    missing = [
        n
        for n in rocketmq_spark.__all__
        if not n.startswith("_") and n not in ("FORMAT", "OPTION_KEYS") and f"`{n}" not in README
    ]
    assert missing == []
