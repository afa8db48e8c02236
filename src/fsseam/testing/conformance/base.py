"""What every part of the backend conformance suite shares: its settings and the
increment loop of its concurrency tests."""

from __future__ import annotations

from typing import Any

from ...backends.base import Backend
from ...errors import Conflict
from ...versions import IfMatch

MiB = 1 << 20


def increment(backend: Backend, key: str, times: int) -> tuple[int, int]:
    """Read-modify-write ``times`` increments of the integer in ``key``, retrying every lost
    compare-and-swap. Returns (successes, conflicts)."""
    done = conflicts = 0
    while done < times:
        blob = backend.read(key)
        value = int(blob.data.decode())
        try:
            backend.write(key, str(value + 1).encode(), IfMatch(blob.version))
        except Conflict:
            conflicts += 1
            continue
        done += 1
    return done, conflicts


def increment_worker(spec: tuple[str, dict[str, Any]], key: str, times: int) -> tuple[int, int]:
    """Entry point of a child process: its own backend over the same storage."""
    from ...backends.registry import open_backend

    url, options = spec
    return increment(open_backend(url, options), key, times)


class Settings:
    """The knobs a backend's subclass may turn, and what the tests read through them."""

    threads: int = 4
    increments: int = 25
    large_size: int = 8 * MiB + 3
    keeps_history: bool | None = None
    """Whether the storage under the ``backend`` fixture keeps older versions; None: as
    ``capabilities.history`` says. Object stores keep them only in a versioned bucket, so
    their suites say which kind of bucket the fixture makes."""
    mount_points: tuple[str, ...] = ()
    """Directories the fixture's root shows before any test writes (the other mount points
    of a mounted workspace, empty stores): listings of the root are compared without them,
    and ``test_mount_points_are_listed`` checks that they are there."""

    def root_entries(self, backend: Backend) -> list[tuple[str, str]]:
        """(name, kind) of the root's entries, the fixture's mount points left out."""
        return [
            (e.name, e.kind)
            for e in backend.list("")
            if not (e.kind == "directory" and e.name in self.mount_points)
        ]
