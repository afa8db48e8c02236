"""History of an object store that keeps versions (S3 versioning, GCS object versioning,
Azure blob versions): listing a key's versions, reading one, reading one by the store's id.

Whether the bucket keeps versions is asked once per backend, and not at all when a listing
or a version already proves it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial

from ...versions import Version
from ..base import Blob, VersionInfo
from . import messages as msg
from .client import ObjectHead
from .errors import Action, Fault
from .parallel import concurrently
from .view import StoreView

__all__ = ["read_version", "read_version_id", "require_history", "versions"]


def require_history(b: StoreView, key: str, action: Action) -> None:
    if b._keeps_versions is None:
        try:
            b._keeps_versions = b._client.keeps_versions()
        except Exception as e:
            raise b._error(e, "bucket", key, action) from e
        if b._keeps_versions is None:
            return  # not known yet: the request that follows answers for this key
    if not b._keeps_versions:
        raise msg.history_off(b._mapper.store, b.bucket, key)

def versions(b: StoreView, key: str, limit: int | None = None) -> list[VersionInfo]:
    key = b._file_key(key, "read")
    if limit is not None and limit < 1:
        raise msg.not_positive("limit")
    if b._keeps_versions is False:
        raise msg.history_off(b._mapper.store, b.bucket, key)
    wanted = b.max_versions_listed if limit is None else min(
        limit, b.max_versions_listed)
    try:
        kept = b._client.list_versions(b._keys.name(key), wanted)
    except Exception as e:
        raise b._error(e, "versions", key, "read") from e
    if b._keeps_versions is None and _proves_history(kept):
        # The listing itself shows a kept version: no need to ask the bucket.
        b._keeps_versions = True
    require_history(b, key, "read")
    if not kept:
        if b._has_children(key, "read"):
            raise msg.is_directory(key)
        raise msg.not_found(key)
    kept = kept[:limit] if limit is not None else kept
    return _with_owners(b, key, kept) if b.history_owners else kept

def _with_owners(
    b: StoreView, key: str, kept: list[VersionInfo]
) -> list[VersionInfo]:
    """Each listed version whose owner the listing did not say, asked with one HEAD of
    that version (all at once); a version that cannot be asked keeps owner None."""
    head: Callable[..., ObjectHead] = b._client.head
    name = b._keys.name(key)

    def owner_of(info: VersionInfo) -> VersionInfo:
        if info.owner is not None or info.deleted:
            return info
        try:
            found = head(name, version=info.version)
        except Exception:
            return info
        return info.model_copy(update={"owner": found.owner})

    return concurrently([partial(owner_of, info) for info in kept])

def read_version(b: StoreView, key: str, version: Version) -> Blob:
    key = b._file_key(key, "read")
    if not _has_store_id(version):
        # A version carrying the store's own id of a kept version (an S3 VersionId)
        # proves the bucket keeps versions; any other is checked once per backend.
        require_history(b, key, "read")
    if version.kind != b._client.version_kind:
        raise msg.version_not_kept(key, str(version))
    try:
        got = b._client.get(b._keys.name(key), version=version)
    except Exception as e:
        if b._fault(e, "get") in (Fault.NOT_FOUND, Fault.INVALID):
            raise msg.version_not_kept(key, str(version)) from e
        raise b._error(e, "get", key, "read") from e
    return Blob(data=got.data, version=got.version)


def read_version_id(b: StoreView, key: str, version_id: str) -> Blob:
    """The version the store's own id names (an S3 VersionId, a GCS generation, an
    Azure version id), read directly: one GET, whatever the number of versions kept.
    FS_NOT_FOUND (``version_not_kept``) when it names no kept version of ``key``."""
    version = b._by_id.version_of_id(version_id) if b._by_id is not None else None
    if version is None:
        raise msg.version_not_kept(b._file_key(key, "read"), version_id)
    return read_version(b, key, version)



def _has_store_id(version: Version) -> bool:
    return version.detail is not None and version.detail != "null"


def _proves_history(kept: Iterable[VersionInfo]) -> bool:
    """A listing that shows a kept version: more than one, or one with the store's id
    (S3 names versions of an unversioned bucket ``null``)."""
    listed = list(kept)
    return len(listed) > 1 or any(_has_store_id(k.version) for k in listed)

