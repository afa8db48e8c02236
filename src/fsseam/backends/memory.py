"""In-memory backend: fsspec's MemoryFileSystem with an isolated store per Workspace."""

from __future__ import annotations

import io
from typing import Any

from fsspec.implementations.memory import MemoryFileSystem

from ..versions import Capabilities
from ._fsspec import FsspecDigestBackend, _FsspecStream


class MemoryBackend(FsspecDigestBackend):
    """Digest versions; the compare-and-swap holds a lock shared by every user of the store,
    and the store lives in this process, so it is atomic."""

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

    def open_read(self, key: str, chunk_size: int = 1 << 20) -> _FsspecStream:
        # MemoryFileSystem hands every reader the same file object (one shared position):
        # read from a private copy instead.
        blob = self.read(key)
        return _FsspecStream(io.BytesIO(blob.data), chunk_size, len(blob.data))

    def _lock_token(self) -> int:
        # Every MemoryFileSystem sharing one store must share one lock.
        return id(self.fs.store)

    @classmethod
    def from_url(
        cls, url: str, storage_options: dict[str, Any], fs: Any | None = None
    ) -> MemoryBackend:
        if fs is None:
            # The class-level store is shared by every instance: never use it implicitly.
            fs = MemoryFileSystem(global_store=False, skip_instance_cache=True)
        root = MemoryFileSystem._strip_protocol(url) or "/"
        return cls(fs, root)
