"""The in-process observation store, and the ledger it reads and writes.

:class:`Ledger` is the format the CLI's ``--ledger FILE`` and ``Workspace(ledger=...)``
have used since the first release: per owner, key -> version (None: confirmed absent), and
the undo changes per owner and key. A ledger handed to the store is kept up to date in
place, as it always was.
"""

from __future__ import annotations

import heapq
import threading
from collections.abc import Mapping

from pydantic import BaseModel, Field

from ..versions import Version
from .entry import Change, Entry, newer

__all__ = ["DEFAULT_MAX_ENTRIES", "LEDGER_FORMAT", "Ledger", "MemoryObservations"]

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
        self._owners: dict[str, dict[str, Entry]] = {}
        if ledger is not None:
            self._owners = _entries_of(ledger)

    def __repr__(self) -> str:
        return f"MemoryObservations(owners={len(self._owners)})"

    def get(self, owner: str, key: str, *, fresh: bool = False) -> Entry | None:
        with self._lock:
            return self._owners.get(owner, {}).get(key)

    def put(self, owner: str, entries: Mapping[str, Entry]) -> None:
        with self._lock:
            kept = self._owners.setdefault(owner, {})
            for key, entry in entries.items():
                won = newer(kept.get(key), entry)
                assert won is not None
                kept[key] = won
                if self.ledger is not None:
                    _mirror(self.ledger, owner, key, won)
            if len(kept) > self.max_entries:
                # Down to nine tenths at once: an owner at its bound then pays for the
                # selection once per tenth of the bound, not on every call.
                extra = len(kept) - (self.max_entries - self.max_entries // 10)
                for key in heapq.nsmallest(extra, kept, key=lambda k: kept[k].at):
                    del kept[key]
                    if self.ledger is not None:
                        self.ledger.owners.get(owner, {}).pop(key, None)
                        self.ledger.changes.get(owner, {}).pop(key, None)

    def entries(self, owner: str) -> dict[str, Entry]:
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
                    _mirror(ledger, owner, key, entry)
        return ledger


def _entries_of(ledger: Ledger) -> dict[str, dict[str, Entry]]:
    owners: dict[str, dict[str, Entry]] = {}
    for owner, seen in ledger.owners.items():
        for key, version in seen.items():
            owners.setdefault(owner, {})[key] = Entry(version=version)
    for owner, files in ledger.changes.items():
        for key, stack in files.items():
            kept = owners.setdefault(owner, {})
            before = kept.get(key, Entry(seen=False))
            kept[key] = before.model_copy(update={"changes": tuple(stack)})
    return owners


def _mirror(ledger: Ledger, owner: str, key: str, entry: Entry) -> None:
    seen = ledger.owners.setdefault(owner, {})
    if entry.seen:
        seen[key] = entry.version
    else:
        seen.pop(key, None)
    files = ledger.changes.setdefault(owner, {})
    if entry.changes:
        files[key] = list(entry.changes)
    else:
        files.pop(key, None)
    if not files:
        del ledger.changes[owner]
    if not seen:
        del ledger.owners[owner]
