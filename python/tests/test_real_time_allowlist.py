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


"""Real-time starts lift Spark's allowlist check and put the setting back, also when two threads
start queries of one session at once."""

from __future__ import annotations

import threading
from typing import List, Optional

import pytest

from rocketmq_spark import _trigger
from spark_stand_ins import Session


class _SlowStart:
    """A writer whose ``start()`` records the allowlist setting it sees, overlapping the other
    thread's start."""

    def __init__(
        self,
        session: Session,
        barrier: threading.Barrier,
        seen: List[Optional[str]],
        fail: bool,
        failed: threading.Event,
    ) -> None:
        self.session, self.barrier, self.seen, self.fail, self.failed = (
            session,
            barrier,
            seen,
            fail,
            failed,
        )

    def start(self) -> str:
        self.barrier.wait()  # both starts under way at once
        # The other start ends (fails, its lifting given back) while this one is still under way.
        if not self.fail:
            assert self.failed.wait(10), "the failing start did not end"
        self.seen.append(self.session.conf.get(_trigger._ALLOWLIST_CHECK))
        if self.fail:
            raise RuntimeError("this start fails")
        return "started"


@pytest.mark.parametrize("before", [None, "true"])
def test_real_time_starts_from_two_threads_at_once_all_start_lifted_and_put_the_setting_back(
    before,
) -> None:
    values = {} if before is None else {_trigger._ALLOWLIST_CHECK: before}
    session = Session(values)
    barrier = threading.Barrier(2, timeout=10)
    seen: List[Optional[str]] = []
    outcomes: List[str] = []
    failed = threading.Event()

    def start(fail: bool) -> None:
        writer = _SlowStart(session, barrier, seen, fail, failed)
        try:
            outcomes.append(
                _trigger.start_without_allowlist(writer, session)  # type: ignore[arg-type]
            )
        except RuntimeError as e:
            outcomes.append(str(e))
        finally:
            if fail:
                failed.set()

    threads = [threading.Thread(target=start, args=(fail,)) for fail in (True, False)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert sorted(outcomes) == ["started", "this start fails"]
    assert seen == ["false", "false"], "a start saw the check already put back by the other"
    assert session.conf.values == values, "the setting was not put back as it was"
    assert _trigger._LIFTED == []
