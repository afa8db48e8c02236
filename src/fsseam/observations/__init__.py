"""Where what each agent has read is kept: in this process, in a file, or in any fsspec
store shared by many machines, or in a framework's own state.

The observation policy (:mod:`fsseam.policy.observation`) decides; a store only keeps
:class:`Entry` values by (owner, key). See docs/observations.md.
"""

from __future__ import annotations

from .entry import UNDO_DEPTH, Change, Entry, newer
from .file import FileObservations
from .memory import DEFAULT_MAX_ENTRIES, LEDGER_FORMAT, Ledger, MemoryObservations
from .opening import open_observations
from .sharded import SHARD_FORMAT, Shard, ShardedObservations
from .store import ObservationStore

__all__ = [
    "DEFAULT_MAX_ENTRIES",
    "LEDGER_FORMAT",
    "SHARD_FORMAT",
    "UNDO_DEPTH",
    "Change",
    "Entry",
    "FileObservations",
    "Ledger",
    "MemoryObservations",
    "ObservationStore",
    "Shard",
    "ShardedObservations",
    "newer",
    "open_observations",
]
