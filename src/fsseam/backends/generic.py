"""Fallback for fsspec protocols without an adapter: the compare-and-swap is emulated.

The backend makes its own filesystem instance, outside fsspec's instance cache and with
the listings cache off, and reads whole objects with ``cat_file``: the bytes a read
returns, and the version minted from them, are what the store holds at that moment, never
sized by a listing or a HEAD remembered from earlier (docs/decisions.md, "Generic
backend").
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import fsspec
from fsspec import AbstractFileSystem
from fsspec.implementations.cached import CachingFileSystem
from fsspec.implementations.local import LocalFileSystem

from ..errors import ErrorCode, FsError
from ..messages import Reason
from ..versions import Capabilities
from ._fsspec import FsspecDigestBackend, strip_protocol

FRESH_OPTIONS: dict[str, Any] = {"skip_instance_cache": True, "use_listings_cache": False}
"""Added to the storage options of a filesystem the generic backend makes: an instance of
its own (nobody else's listings), and no listings cache at all."""


def _on_local_disk(fs: Any) -> bool:
    """Whether ``fs`` is the local filesystem, or a wrapper over it (``dir::`` and the
    like keep the filesystem they wrap as ``.fs``)."""
    seen: set[int] = set()
    while isinstance(fs, AbstractFileSystem) and id(fs) not in seen:
        if isinstance(fs, LocalFileSystem):
            return True
        seen.add(id(fs))
        fs = getattr(fs, "fs", None)
    return False


class GenericBackend(FsspecDigestBackend):
    """Digest versions; the precondition is checked under a lock of this process and then
    the object is written, so another process can still slip a write in between."""

    capabilities = Capabilities(
        create_only_atomic=False,
        if_match_atomic=False,
        version_kind="sha256",
        ranged_reads=False,
        delete_if_match_atomic=False,
        copy_create_only_atomic=False,
        history=False,
        note="emulated: checked then written under a lock of this process only (not atomic)",
    )

    def __init__(self, fs: Any, root: str) -> None:
        if isinstance(fs, CachingFileSystem):
            raise FsError(
                ErrorCode.FS_UNSUPPORTED,
                reason=Reason.cached_filesystem,
                details={"filesystem": type(fs).__name__},
            )
        if _on_local_disk(fs):
            # fsspec's local filesystem follows symbolic links wherever they lead, so a
            # link inside the root would hand the tools files outside it. The local
            # backend already holds the no-follow rule; a second copy of it here would
            # only be a second place to get it wrong.
            raise FsError(
                ErrorCode.FS_UNSUPPORTED,
                reason=Reason.generic_on_local,
                details={"root": root, "filesystem": type(fs).__name__},
            )
        super().__init__(fs, root)

    def _lock_token(self) -> Hashable:
        # One lock per storage, not per instance: every backend (and Workspace) of this
        # process on one bucket makes its own filesystem, and they must still exclude
        # each other. The first path segment is the bucket/container on object stores.
        protocol = self.fs.protocol
        name = protocol[0] if isinstance(protocol, (tuple, list)) else protocol
        top = self.root.strip("/").split("/", 1)[0]
        return ("generic", type(self.fs).__name__, name, top)

    @classmethod
    def from_url(
        cls, url: str, storage_options: dict[str, Any], fs: Any | None = None
    ) -> GenericBackend:
        if fs is None:
            options = {**storage_options, **FRESH_OPTIONS}
            try:
                fs, root = fsspec.core.url_to_fs(url, **options)
            except TypeError:
                # A filesystem whose constructor takes no listings-cache option: it gets
                # no cache of its own either way, and _fresh() forgets any it keeps.
                options.pop("use_listings_cache")
                fs, root = fsspec.core.url_to_fs(url, **options)
        else:
            root = strip_protocol(fs, url)
        return cls(fs, root)
