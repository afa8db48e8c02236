"""Where what each agent has read is kept: in this process, in a file, or in any fsspec
store shared by many machines, or in a framework's own state.

The observation policy (:mod:`fsseam.policy.observation`) decides; a store only keeps
:class:`ObservationEntry` values by (owner, key). See docs/observations.md.
"""

from __future__ import annotations

from .file import FileObservations
from .opening import open_observations
from .sharded import SHARD_FORMAT, ObservationShard, ShardedObservations
from .store import (
    DEFAULT_MAX_ENTRIES,
    LEDGER_FORMAT,
    UNDO_DEPTH,
    Change,
    Ledger,
    MemoryObservations,
    ObservationEntry,
    ObservationStore,
    newer,
)

__all__ = [
    "DEFAULT_MAX_ENTRIES",
    "LEDGER_FORMAT",
    "SHARD_FORMAT",
    "UNDO_DEPTH",
    "Change",
    "FileObservations",
    "Ledger",
    "MemoryObservations",
    "ObservationEntry",
    "ObservationShard",
    "ObservationStore",
    "ShardedObservations",
    "newer",
    "open_observations",
]
