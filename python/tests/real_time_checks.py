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

"""What the real-time tests share (test_real_time_stateless.py, test_real_time_stateful.py): the
pyspark they run on, what it can ask for, and how a real-time start is refused before 4.2."""

from __future__ import annotations

from typing import Any, Callable, Optional

import pyspark
import pytest

PYSPARK = tuple(int(p) for p in pyspark.__version__.split(".")[:2])
HAS_TRIGGER = PYSPARK >= (4, 2)
# Spark 4.3 runs stateful operators (aggregations, deduplication) in real-time mode, and tracks a
# stateless real-time query's progress asynchronously: the 4.3 leg of dev/test. Spark 4.2 refuses a
# shuffle or a stateful operator in real-time mode, and writes both logs at each batch end.
HAS_STATEFUL = PYSPARK >= (4, 3)


def refused_before_4_2(start: Callable[[], Any]) -> bool:
    """On pyspark before 4.2: asserts that ``start`` (a real-time start) fails naming the pyspark it
    needs, and returns True. On 4.2 and later: returns False, ``start`` not called."""
    if HAS_TRIGGER:
        return False
    with pytest.raises(RuntimeError) as refused:
        start()
    needs = f"needs pyspark 4.2 or later; this is pyspark {pyspark.__version__}"
    assert needs in str(refused.value), str(refused.value)
    return True


def execution_of(query: Any) -> Optional[str]:
    """The class that runs ``query`` in the Spark driver (None over Spark Connect, whose client
    cannot see it)."""
    jsq = getattr(query, "_jsq", None)
    return None if jsq is None else jsq.streamingQuery().getClass().getSimpleName()
