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

"""The README's and the install guide's commands are those the distribution tests run, for this
version; the Python API page names every public name of the package; the README's links lead to
files that exist."""

from __future__ import annotations

import re

import rocketmq_spark
from embedded_rocketmq import REPO_ROOT

README = (REPO_ROOT / "README.md").read_text()
INSTALL = (REPO_ROOT / "docs" / "install.md").read_text()
PYTHON_API = (REPO_ROOT / "docs" / "python.md").read_text()
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
        'spark-submit --master "local-cluster[2,1,1024]" --jars '
        f"rocketmq-spark-connector-assembly_2.13-{VERSION}.jar",
    ]
    for page, text in (("README.md", README), ("docs/install.md", INSTALL)):
        missing = [e for e in expected if e not in text]
        assert missing == [], page


def test_every_public_name_of_the_package_is_on_the_python_api_page() -> None:
    missing = [
        n
        for n in rocketmq_spark.__all__
        if not n.startswith("_")
        and n not in ("FORMAT", "OPTION_KEYS")
        and f"`{n}" not in PYTHON_API
    ]
    assert missing == []


def test_the_readme_links_lead_to_files_that_exist() -> None:
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README)
    local = [t for t in targets if not t.startswith(("http://", "https://"))]
    assert len(local) >= 10
    assert [t for t in local if not (REPO_ROOT / t).exists()] == []
