"""What an owner knows of each file, where that is kept between calls, and the store in
this process's memory.

An :class:`ObservationEntry` is the unit every observation store keeps, one per (owner, key). Stores
on other machines merge concurrent updates of one owner key by key (:func:`newer`): entries
of different keys never conflict, and of two entries for one key the one recorded later
wins. Any entry an owner really recorded is safe to keep: an observation only ever lets a
write through conditional on that exact version, so a merge that keeps the older of two
can refuse an edit (the agent reads again), never lose one.

:class:`ObservationStore` is what a store does. The policy reads entries one key at a time
and writes each call's updates at once, when the call ends, so a store that lives on
another machine is asked at most once per call for each.

:class:`MemoryObservations` keeps them in this process (the default store). Its
:class:`Ledger` is the format the CLI's ``--ledger FILE`` and ``Workspace(ledger=...)``
have used since the first release: per owner, key -> version (None: confirmed absent), and
the undo changes per owner and key. A ledger handed to the store is kept up to date in
place.
"""

from __future__ import annotations

import heapq
import threading
from collections.abc import Mapping
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from ..versions import Version

__all__ = [
    "DEFAULT_MAX_ENTRIES",
    "LEDGER_FORMAT",
    "UNDO_DEPTH",
    "BranchObservations",
    "Change",
    "Ledger",
    "MemoryObservations",
    "ObservationEntry",
    "ObservationStore",
    "newer",
]

UNDO_DEPTH = 20
"""Changes kept per owner and file for undo; older ones can no longer be undone."""


class Change(BaseModel):
    """One change an owner made to a file: the version it replaced (None: it created the
    file) and the version it made."""

    model_config = ConfigDict(frozen=True)
    before: Version | None
    after: Version


class ObservationEntry(BaseModel):
    """One owner's knowledge of one key.

    ``seen``: an observation is kept (``version`` None then means the file was confirmed
    absent); False when only undo changes are left. ``at``: when it was recorded (seconds
    since the epoch, the recording process's clock): orders two updates of one key and
    decides which entries expire first. ``changes``: the owner's changes of the file,
    newest last, at most :data:`UNDO_DEPTH`.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    seen: bool = True
    version: Version | None = None
    at: float = 0.0
    changes: tuple[Change, ...] = Field(default=())
    answer: str | None = None
    """Under a key of ``.fsseam-calls/``, no file: the answer a call with an id gave (its
    JSON), so that the call run again answers the same (``fsseam.seam.calls``)."""

    def same(self, other: ObservationEntry | None) -> bool:
        """Whether ``other`` says the same (the recording time aside): re-recording it
        changes nothing a store must write."""
        return (other is not None and other.seen == self.seen
                and other.version == self.version and other.changes == self.changes
                and other.answer == self.answer)


def newer(a: ObservationEntry | None, b: ObservationEntry | None) -> ObservationEntry | None:
    """The entry that wins when two updates of one key meet: the later ``at``; on a tie the
    one that sorts last (every process picks the same)."""
    if a is None or b is None:
        return a if b is None else b
    if a.at != b.at:
        return a if a.at > b.at else b
    return max(a, b, key=lambda e: e.model_dump_json())


# -- what a store does ----------------------------------------------------------------------
@runtime_checkable
class ObservationStore(Protocol):
    """Where observations live. Implementations: :class:`MemoryObservations` (in-process),
    the file and fsspec-URL stores (:func:`fsseam.observations.open_observations`), and
    each framework integration's state."""

    def get(self, owner: str, key: str, *, fresh: bool = False) -> ObservationEntry | None:
        """The owner's entry for ``key``, or None. ``fresh``: bypass any cache this
        process keeps (asked before a refusal that a cached answer would cause)."""
        ...

    def put(self, owner: str, entries: Mapping[str, ObservationEntry]) -> None:
        """Merge one call's updates: per key, :func:`newer` decides against what the store
        holds. Raises FsError (FS_BACKEND) when the store cannot be reached or written."""
        ...


class BranchObservations:
    """What owners read on one branch, kept in the workspace's store apart from what they
    read on main and on other branches: each owner's entries under ``OWNER@branch:NAME``.
    An owner who read ``/a.txt`` on one branch has not read the branch's own ``/a.txt``
    (another file, at another version), so a change there asks for a read first instead of
    meeting a stale refusal."""

    def __init__(self, inner: ObservationStore, branch: str) -> None:
        self.inner = inner
        self.branch = branch

    def __repr__(self) -> str:
        return f"BranchObservations({self.inner!r}, {self.branch!r})"

    def owner(self, owner: str) -> str:
        return f"{owner}@branch:{self.branch}"

    def get(self, owner: str, key: str, *, fresh: bool = False) -> ObservationEntry | None:
        return self.inner.get(self.owner(owner), key, fresh=fresh)

    def put(self, owner: str, entries: Mapping[str, ObservationEntry]) -> None:
        self.inner.put(self.owner(owner), entries)


# -- the store in this process's memory -----------------------------------------------------
LEDGER_FORMAT = 1
DEFAULT_MAX_ENTRIES = 100_000
"""Entries kept per owner by default; past it the oldest tenth (by recording time)
expires and reads as "not read yet"."""


class Ledger(BaseModel):
    """What each owner has observed: key -> Version, or None for confirmed absence; and,
    for undo, the changes each owner made to each file (newest last)."""

    format: int = LEDGER_FORMAT
    owners: dict[str, dict[str, Version | None]] = Field(default_factory=dict)
    changes: dict[str, dict[str, list[Change]]] = Field(default_factory=dict)
    answers: dict[str, dict[str, ObservationEntry]] = Field(default_factory=dict)
    """The answers of calls with an id, per owner (see :attr:`ObservationEntry.answer`)."""

    def entries(self) -> dict[str, dict[str, ObservationEntry]]:
        """What the ledger holds, as entries per owner and key."""
        owners: dict[str, dict[str, ObservationEntry]] = {}
        for owner, seen in self.owners.items():
            for key, version in seen.items():
                owners.setdefault(owner, {})[key] = ObservationEntry(version=version)
        for owner, files in self.changes.items():
            for key, stack in files.items():
                kept = owners.setdefault(owner, {})
                before = kept.get(key, ObservationEntry(seen=False))
                kept[key] = before.model_copy(update={"changes": tuple(stack)})
        for owner, answers in self.answers.items():
            owners.setdefault(owner, {}).update(answers)
        return owners

    def mirror(self, owner: str, key: str, entry: ObservationEntry) -> None:
        """Hold ``entry`` as the owner's for ``key`` (its observation and its changes)."""
        if entry.answer is not None:
            self.answers.setdefault(owner, {})[key] = entry
            return
        seen = self.owners.setdefault(owner, {})
        if entry.seen:
            seen[key] = entry.version
        else:
            seen.pop(key, None)
        files = self.changes.setdefault(owner, {})
        if entry.changes:
            files[key] = list(entry.changes)
        else:
            files.pop(key, None)
        if not files:
            del self.changes[owner]
        if not seen:
            del self.owners[owner]


class MemoryObservations:
    """Entries in this process's memory (the default store).

    ``ledger``: start from it and keep it up to date. ``max_entries``: per owner; the
    oldest entries expire past it.
    """

    def __init__(self, ledger: Ledger | None = None, *,
                 max_entries: int = DEFAULT_MAX_ENTRIES) -> None:
        self.ledger = ledger
        self.max_entries = max_entries
        self._lock = threading.Lock()
        self._owners: dict[str, dict[str, ObservationEntry]] = {}
        if ledger is not None:
            self._owners = ledger.entries()

    def __repr__(self) -> str:
        return f"MemoryObservations(owners={len(self._owners)})"

    def get(self, owner: str, key: str, *, fresh: bool = False) -> ObservationEntry | None:
        with self._lock:
            return self._owners.get(owner, {}).get(key)

    def put(self, owner: str, entries: Mapping[str, ObservationEntry]) -> None:
        with self._lock:
            kept = self._owners.setdefault(owner, {})
            for key, entry in entries.items():
                won = newer(kept.get(key), entry)
                assert won is not None
                kept[key] = won
                if self.ledger is not None:
                    self.ledger.mirror(owner, key, won)
            if len(kept) > self.max_entries:
                # Down to nine tenths at once: an owner at its bound then pays for the
                # selection once per tenth of the bound, not on every call.
                extra = len(kept) - (self.max_entries - self.max_entries // 10)
                for key in heapq.nsmallest(extra, kept, key=lambda k: kept[k].at):
                    del kept[key]
                    if self.ledger is not None:
                        self.ledger.owners.get(owner, {}).pop(key, None)
                        self.ledger.changes.get(owner, {}).pop(key, None)
                        self.ledger.answers.get(owner, {}).pop(key, None)

    def entries(self, owner: str) -> dict[str, ObservationEntry]:
        """A copy of the owner's entries (for integrations that keep them elsewhere)."""
        with self._lock:
            return dict(self._owners.get(owner, {}))

    def owners(self) -> list[str]:
        with self._lock:
            return sorted(self._owners)

    def to_ledger(self) -> Ledger:
        """Everything this store holds, in the ledger format."""
        ledger = Ledger()
        with self._lock:
            for owner, kept in self._owners.items():
                for key, entry in kept.items():
                    ledger.mirror(owner, key, entry)
        return ledger
