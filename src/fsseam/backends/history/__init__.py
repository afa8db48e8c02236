"""History kept by fsseam, for storage that keeps none (local disk, memory, generic).

``backend`` is :class:`KeptHistoryBackend` (the wrapper that copies a version before a
change replaces it and answers ``versions`` / ``read_version`` from the copies), the
:class:`History` settings that ask for it, and the bound on what it keeps; ``stores`` holds
the per-file index entries, the store protocol and the store in process memory;
``directory`` the store on local disk (imported only when used: it needs ``fcntl``).
"""

from .backend import (
    History,
    KeptHistoryBackend,
    default_directory,
    keep_history,
    local_root,
)
from .stores import HistoryStore, KeptEntry, MemoryHistoryStore

__all__ = [
    "History",
    "HistoryStore",
    "KeptEntry",
    "KeptHistoryBackend",
    "MemoryHistoryStore",
    "default_directory",
    "keep_history",
    "local_root",
]
