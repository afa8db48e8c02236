"""The bounds of fsseam's kept history: ``max_versions`` per file, ``max_bytes`` in all."""

from __future__ import annotations

import builtins
import threading
from collections.abc import Callable

from ..errors import FsError
from ..messages import Reason
from .kept_store import HistoryStore, KeptEntry

__all__ = ["DAMAGED", "Budget"]

DAMAGED = Reason.history_index_damaged


class Budget:
    """What the copies of one history store may hold, and the eviction of the oldest."""

    def __init__(self, store: HistoryStore, max_versions: int, max_bytes: int,
                 entries: Callable[[str], builtins.list[KeptEntry]]) -> None:
        self.store = store
        self.max_versions = max_versions
        self.max_bytes = max_bytes
        # A file's index for a change made with its lock held (a damaged one set aside).
        self._entries = entries
        self._used: int | None = None
        self._lock = threading.Lock()

    def trim(self, key: str, entries: builtins.list[KeptEntry]) -> None:
        """At most ``max_versions`` entries, and no copy that no entry names."""
        del entries[: max(0, len(entries) - self.max_versions)]
        self.store.save(key, entries)
        named = {e.sha256 for e in entries if e.sha256 is not None}
        for sha, size in self.store.copies(key).items():
            if sha not in named:
                self.store.drop(key, sha)
                self.grew(-size)

    def grew(self, n: int) -> None:
        """Count ``n`` more bytes kept (a first count scans the store). Called with a
        file's lock held, so it never evicts: :meth:`enforce` does, after the lock."""
        with self._lock:
            self._used = self._scan_usage() if self._used is None else self._used + n

    def enforce(self) -> None:
        with self._lock:
            over = self._used is not None and self._used > self.max_bytes
        if over:
            self.evict()

    def _scan_usage(self) -> int:
        return sum(sum(self.store.copies(k).values()) for k in self.store.files())

    def evict(self) -> None:
        """Drop the oldest copies, over every file, until the total fits ``max_bytes``.
        A copy's age is that of the newest entry naming it (a found-in-place version,
        which has no time, counts as oldest). Files are locked one at a time."""
        candidates: builtins.list[tuple[float, str, str, int]] = []
        total = 0
        for key in self.store.files():
            sizes = self.store.copies(key)
            total += sum(sizes.values())
            newest: dict[str, float] = {}
            try:
                listed = self.store.entries(key)
            except FsError as err:
                if err.reason != DAMAGED:
                    raise
                continue  # its copies wait for the file's next change to set the index aside
            for e in listed:
                if e.sha256 in sizes:
                    newest[e.sha256] = max(newest.get(e.sha256, 0.0), e.time or 0.0)
            candidates += [(newest.get(sha, 0.0), key, sha, size) for sha, size in sizes.items()]
        candidates.sort()
        doomed: dict[str, set[str]] = {}
        for _, key, sha, size in candidates:
            if total <= self.max_bytes:
                break
            doomed.setdefault(key, set()).add(sha)
            total -= size
        for key, shas in doomed.items():
            with self.store.lock(key):
                entries = [e for e in self._entries(key) if e.sha256 not in shas]
                self.store.save(key, entries)
                for sha in shas:
                    self.store.drop(key, sha)
        with self._lock:
            self._used = total
