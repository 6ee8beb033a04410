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


"""Stand-ins for Spark that the package's own tests pass to its functions: one that fails when
reached, recorders of the calls a read or a write makes, and a session's conf. None starts a JVM."""

from __future__ import annotations

import threading
from typing import Any, Dict, List, Optional, Tuple


class _NoSpark:
    """Fails the test if the function under test reaches for Spark: the check must come first."""

    isStreaming = False

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"Spark was reached ({name}) before the arguments were checked")


NO_SPARK: Any = _NoSpark()


class StreamRecorder:
    """A streaming DataFrame's writeStream as far as the write functions use it: records each
    call."""

    isStreaming = True

    def __init__(self) -> None:
        self.calls: List[Tuple[str, Any]] = []

    @property
    def writeStream(self) -> "StreamRecorder":
        return self

    def __getattr__(self, name: str) -> Any:
        def record(*args: Any, **kwargs: Any) -> Any:
            self.calls.append((name, kwargs or args))
            return "started query" if name == "start" else self

        return record


class ReadRecorder:
    """``spark`` as far as the read functions use it: ``read`` / ``readStream`` ... ``load()``, each
    call recorded."""

    def __init__(self) -> None:
        self.calls: List[Tuple[str, Any]] = []

    @property
    def read(self) -> "ReadRecorder":
        return self

    @property
    def readStream(self) -> "ReadRecorder":
        return self

    def __getattr__(self, name: str) -> Any:
        def record(*args: Any, **kwargs: Any) -> Any:
            self.calls.append((name, kwargs or args))
            return self

        return record

    def given(self) -> Dict[str, str]:
        return next(dict(kwargs) for name, kwargs in self.calls if name == "options")


class BatchWriteRecorder:
    """A batch DataFrame's ``write`` as far as write_rocketmq uses it; ``save()`` raises ``fail``
    when given."""

    isStreaming = False

    def __init__(self, fail: Optional[BaseException] = None) -> None:
        self.calls: List[Tuple[str, Any]] = []
        self.fail = fail

    @property
    def write(self) -> "BatchWriteRecorder":
        return self

    def __getattr__(self, name: str) -> Any:
        def record(*args: Any, **kwargs: Any) -> Any:
            self.calls.append((name, kwargs or args))
            if name == "save" and self.fail is not None:
                raise self.fail
            return self

        return record


class Conf:
    """A session's ``conf`` as far as start_without_allowlist uses it."""

    def __init__(self, values: Dict[str, str]) -> None:
        self.values = values
        self.lock = threading.Lock()

    def get(self, key: str, default: Optional[str] = None) -> Optional[str]:
        with self.lock:
            return self.values.get(key, default)

    def set(self, key: str, value: str) -> None:
        with self.lock:
            self.values[key] = value

    def unset(self, key: str) -> None:
        with self.lock:
            self.values.pop(key, None)


class Session:
    """A session as far as the real-time start uses it: its ``conf``."""

    def __init__(self, values: Dict[str, str]) -> None:
        self.conf = Conf(values)
