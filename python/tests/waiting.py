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

"""The one way the tests and their Spark scripts wait: poll a condition until it holds, up to a
deadline. No imports beyond the standard library, so scripts run by spark-submit can use it too."""

from __future__ import annotations

import time
from typing import Callable


def wait_until(
    what: str, condition: Callable[[], bool], timeout_s: float, poll_s: float = 0.1
) -> None:
    """Polls ``condition`` until it holds; raises TimeoutError naming ``what`` after
    ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout_s} s waiting for {what}")
        time.sleep(poll_s)
