"""The time one finder call may take (``Limits.finder_seconds``), read on a clock a test
can replace: a budget is then run out at a chosen step of a search, with no sleep."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

__all__ = ["Deadline", "OutOfTime", "clock"]

clock: Callable[[], float] = time.monotonic
"""The finders' clock, in seconds. Looked up at every reading, so a test that replaces it
(``monkeypatch.setattr(fsseam.deadline, "clock", ...)``) decides when time is up."""


class OutOfTime(Exception):
    """The call's time is up; ``key`` is the first file it did not search."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


class Deadline:
    """When one call must stop. Reading it costs one clock reading, so a walk asks it at
    every file: no stretch of a walk (a page of a listing, a huge directory's files that a
    filter leaves out) runs on unchecked."""

    __slots__ = ("_at",)

    def __init__(self, seconds: float) -> None:
        self._at = clock() + seconds if seconds > 0 else math.inf

    def passed(self) -> bool:
        return clock() >= self._at  # never, against inf

    def left(self) -> float:
        """Seconds left (``inf`` without a limit; 0 or less once passed)."""
        return self._at - clock()

    def check(self, key: str) -> None:
        """OutOfTime at ``key`` once the time is up."""
        if clock() >= self._at:
            raise OutOfTime(key)
