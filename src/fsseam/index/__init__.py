"""The content index: what a grep over an object store needs to read only the files that
may match (docs/finders.md, "Content index").

``keeper`` holds one workspace's index (its shards, the entries of fsseam's own writes, its
reserved folder), ``shards`` its stored form, ``grams`` the 4-gram bitmaps and what a
pattern needs of them, ``source`` the reads of a grep through it (the walk, the plan of
which files to read, and the reads in walk order). ``ctx.fs`` asks :func:`indexed_reads`
for a grep's reads; :func:`wanted` says whether a workspace gets one.
"""

from __future__ import annotations

from ..backends.base import Backend
from ..errors import ErrorCode, FsError
from ..messages import Reason
from .keeper import FOLDER, PLUGIN_NAME, ContentIndex, ReservedIndex
from .source import index_of, indexed_reads

__all__ = ["FOLDER", "PLUGIN_NAME", "ContentIndex", "ReservedIndex", "index_of", "indexed_reads",
           "plugin", "wanted"]


def plugin(setting: bool | None, backend: Backend, *, read_only: bool = False
           ) -> ReservedIndex | None:
    """What a workspace over ``backend`` registers for ``content_index=setting``: the index,
    or (False, where one can be kept) only the reserve of its folder, or nothing."""
    if wanted(setting, backend):
        return ContentIndex(backend, persist=not read_only)
    if lists_versions(backend):
        return ReservedIndex(FOLDER)
    return None


def lists_versions(backend: Backend) -> bool:
    """Whether the store's walk says each file's version (what an index is keyed by):
    asked of ``walk_versioned``, which starts listing only when its answer is iterated."""
    return backend.walk_versioned("") is not None


def wanted(setting: bool | None, backend: Backend) -> bool:
    """Whether a workspace over ``backend`` keeps a content index: ``content_index=``
    True (FS_INVALID_ARGUMENT where the store's listing gives no versions), False, or
    None: where a read per file is a round trip (a store whose walk says versions: S3,
    GCS, Azure), not where reading is the cheap part (local disk, memory)."""
    versioned = lists_versions(backend)
    if setting is None or setting is False:
        return bool(setting is None and versioned)
    if not versioned:
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.content_index_unsupported,
                      details={"backend": type(backend).__name__})
    return True
