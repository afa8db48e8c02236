"""In-memory backend: fsspec's own MemoryFileSystem, shared with every fsspec user.

``memory://proj`` is the store that ``fsspec.filesystem("memory")``, pandas'
``to_csv("memory://proj/x.csv")`` and a re-run notebook cell all see, so files written there
by anyone are the agent's files and the other way round. Isolation is asked for explicitly:
``storage_options={"global_store": False}`` (fsspec's own name for it) gives the workspace a
store of its own.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from fsspec.implementations.memory import MemoryFileSystem

from ..errors import ErrorCode, FsError
from ..messages import Reason
from ..versions import Capabilities
from ._fsspec import FsspecDigestBackend, strip_protocol

__all__ = ["MemoryBackend", "isolated_memory_filesystem"]


def isolated_memory_filesystem() -> MemoryFileSystem:
    """A MemoryFileSystem with a store of its own, on every fsspec version.

    fsspec >= 2025 spells this ``MemoryFileSystem(global_store=False,
    skip_instance_cache=True)``; older releases have no ``global_store`` and would quietly
    share the class-level store, so the store is replaced on the instance instead.
    """
    fs = MemoryFileSystem(skip_instance_cache=True)
    fs.store = {}
    fs.pseudo_dirs = [""]
    return fs


def _global_store(storage_options: dict[str, Any]) -> bool:
    options = dict(storage_options)
    value = options.pop("global_store", True)
    if options:
        raise FsError(
            ErrorCode.FS_INVALID_ARGUMENT,
            reason=Reason.memory_options,
            details={"options": ", ".join(sorted(options))},
        )
    if not isinstance(value, bool):
        raise FsError(
            ErrorCode.FS_INVALID_ARGUMENT,
            reason=Reason.memory_global_store, details={"value": value}
        )
    return value


class MemoryBackend(FsspecDigestBackend):
    """Digest versions; the compare-and-swap holds a lock shared by every user of the store,
    and the store lives in this process, so it is atomic among fsseam writers. Writers that
    bypass fsseam (pandas, fsspec) take no lock; the digest re-check under the lock is what
    catches their changes.

    A read stream is the base class's: one ``cat_file`` (a private copy of the bytes, never
    the file object MemoryFileSystem shares between readers), digested once."""

    capabilities = Capabilities(
        create_only_atomic=True,
        if_match_atomic=True,
        version_kind="sha256",
        ranged_reads=True,
        delete_if_match_atomic=True,
        copy_create_only_atomic=True,
        history=False,
        note="atomic within this process (the store is in-process memory)",
    )

    def _lock_token(self) -> int:
        # Every MemoryFileSystem sharing one store must share one lock: for the global store
        # that is every default instance in the process.
        return id(self.fs.store)

    def storage_id(self) -> Hashable:
        return (type(self).__name__, id(self.fs.store), self.root)

    @classmethod
    def from_url(
        cls, url: str, storage_options: dict[str, Any], fs: Any | None = None
    ) -> MemoryBackend:
        shared = _global_store(storage_options)
        if fs is None:
            fs = MemoryFileSystem(skip_instance_cache=True) if shared else (
                isolated_memory_filesystem()
            )
        root = strip_protocol(MemoryFileSystem, url) or "/"
        return cls(fs, root)
