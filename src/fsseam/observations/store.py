"""The observation-store protocol: where an owner's entries live between calls.

A store keeps :class:`~fsseam.observations.entry.Entry` values by (owner, key). The policy
reads them one key at a time and writes each call's updates at once, when the call ends,
so a store that lives on another machine is asked at most once per call for each.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable

from .entry import Entry

__all__ = ["ObservationStore"]


@runtime_checkable
class ObservationStore(Protocol):
    """Where observations live. Implementations: :class:`MemoryObservations` (in-process),
    the file and fsspec-URL stores (:func:`fsseam.observations.open_observations`), and
    each framework integration's state."""

    def get(self, owner: str, key: str, *, fresh: bool = False) -> Entry | None:
        """The owner's entry for ``key``, or None. ``fresh``: bypass any cache this
        process keeps (asked before a refusal that a cached answer would cause)."""
        ...

    def put(self, owner: str, entries: Mapping[str, Entry]) -> None:
        """Merge one call's updates: per key, :func:`~fsseam.observations.entry.newer`
        decides against what the store holds. Raises FsError (FS_BACKEND) when the store
        cannot be reached or written."""
        ...
