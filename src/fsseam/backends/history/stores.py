"""Where fsseam's own history lives: the per-file index entries and the store protocol,
and the store in process memory (``directory`` has the one on disk)."""

from __future__ import annotations

import builtins
import contextlib
import threading
from collections.abc import Iterator
from typing import Protocol

from pydantic import BaseModel, Field

from ...versions import Version

__all__ = ["HistoryStore", "KeptEntry", "MemoryHistoryStore"]


class KeptEntry(BaseModel):
    """One version in a file's index: a write fsseam made (with its owner), a version it
    found in place before replacing it, or a deletion."""

    kind: str = ""
    value: str = ""
    sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    """The copy's name; None while no copy is kept (a copy made by ``copy``). Checked, since
    an index read from disk names the file that is read back."""
    size: int | None = None
    time: float | None = None
    """When fsseam wrote it (seconds since the epoch); None for a version found in place."""
    owner: str | None = None
    deleted: bool = False

    def is_version(self, version: Version) -> bool:
        return not self.deleted and (self.kind, self.value) == (version.kind, version.value)

    @property
    def version(self) -> Version:
        return Version(kind=self.kind, value=self.value)


class HistoryStore(Protocol):
    """Where the copies and the per-file indexes live. Every method but ``lock`` is called
    with the file's lock held, except reads (an index is replaced whole, atomically)."""

    where: str

    def lock(self, key: str) -> contextlib.AbstractContextManager[None]: ...

    def entries(self, key: str) -> list[KeptEntry]:
        """The file's index, oldest first."""
        ...

    def save(self, key: str, entries: list[KeptEntry]) -> None: ...

    def has(self, key: str, sha: str) -> bool: ...

    def put(self, key: str, sha: str, data: bytes) -> None:
        """Keep ``data`` under ``sha``, durably, before returning."""
        ...

    def get(self, key: str, sha: str) -> bytes | None: ...

    def copies(self, key: str) -> dict[str, int]:
        """The copies kept for the file: sha -> size."""
        ...

    def drop(self, key: str, sha: str) -> None: ...

    def files(self) -> builtins.list[str]: ...

    def set_aside(self, key: str) -> builtins.list[str]:
        """After ``entries`` raised ``history_index_damaged``: move the damaged index out of
        the way, keeping the copies; their names, oldest first."""
        ...


class MemoryHistoryStore:
    """Copies in this process's memory (one per storage and root, shared by workspaces)."""

    where = "this process's memory"

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._entries: dict[str, list[KeptEntry]] = {}
        self._copies: dict[str, dict[str, bytes]] = {}

    @contextlib.contextmanager
    def lock(self, key: str) -> Iterator[None]:
        with self._lock:
            yield

    def entries(self, key: str) -> list[KeptEntry]:
        with self._lock:
            return list(self._entries.get(key, []))

    def save(self, key: str, entries: list[KeptEntry]) -> None:
        with self._lock:
            if entries:
                self._entries[key] = list(entries)
            else:
                self._entries.pop(key, None)

    def has(self, key: str, sha: str) -> bool:
        with self._lock:
            return sha in self._copies.get(key, {})

    def put(self, key: str, sha: str, data: bytes) -> None:
        with self._lock:
            self._copies.setdefault(key, {})[sha] = bytes(data)

    def get(self, key: str, sha: str) -> bytes | None:
        with self._lock:
            return self._copies.get(key, {}).get(sha)

    def copies(self, key: str) -> dict[str, int]:
        with self._lock:
            return {sha: len(data) for sha, data in self._copies.get(key, {}).items()}

    def drop(self, key: str, sha: str) -> None:
        with self._lock:
            kept = self._copies.get(key, {})
            kept.pop(sha, None)
            if not kept:
                self._copies.pop(key, None)

    def files(self) -> builtins.list[str]:
        with self._lock:
            return sorted(set(self._entries) | set(self._copies))

    def set_aside(self, key: str) -> builtins.list[str]:
        # Entries held as objects are never damaged; kept for the protocol.
        with self._lock:
            self._entries.pop(key, None)
            return list(self._copies.get(key, {}))
