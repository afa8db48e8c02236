"""The backend contract: a handful of typed methods, nothing else.

A backend is bound to one storage and one root. Every method takes a *key*: a path
relative to the root, ``/``-separated, without leading ``/`` (``""`` is the root itself).
The seam has already checked that the key stays inside the root; the backend only
translates keys to storage paths, mints versions and performs conditional writes.

Errors: every method raises :class:`fsseam.errors.FsError` (a failed precondition is the
subclass :class:`fsseam.errors.Conflict`); storage exceptions never escape.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from functools import cache
from typing import Any, Literal, Protocol, cast, runtime_checkable

from pydantic import BaseModel, ConfigDict

from ..errors import FsError
from ..versions import Capabilities, Entry, Overwrite, Precondition, Version

__all__ = [
    "ANY_VERSION",
    "Backend",
    "Blob",
    "CapabilitiesPerKey",
    "Entry",
    "OwnedDeletes",
    "ReadStream",
    "Stat",
    "VersionInfo",
    "WriteMeta",
    "delete_as",
    "write_as",
]


ANY_VERSION = Overwrite()
"""The default precondition of ``delete`` and of ``copy``'s source: whatever is there."""


class Blob(BaseModel):
    """Bytes and the version of exactly those bytes, from one round trip."""

    model_config = ConfigDict(frozen=True)
    data: bytes
    version: Version


class Stat(BaseModel):
    model_config = ConfigDict(frozen=True)
    key: str
    kind: Literal["file", "directory"]
    size: int | None = None


class VersionInfo(BaseModel):
    """One version of a key that the store keeps (an entry of :meth:`Backend.versions`)."""

    model_config = ConfigDict(frozen=True)
    version: Version
    size: int | None = None
    modified: datetime | None = None
    latest: bool = False
    """The current version of the key (what a plain read returns)."""
    deleted: bool = False
    """A deletion recorded by the store (an S3 delete marker); it has no bytes."""
    owner: str | None = None
    """The owner whose write made this version, where the store says so without further
    requests (None: unknown, or not written through fsseam)."""


class WriteMeta(BaseModel):
    """What a write says about itself, for stores that keep it with the version
    (``capabilities.write_meta``): S3 and GCS object metadata, fsseam's own history."""

    model_config = ConfigDict(frozen=True)
    owner: str | None = None
    """The owner (``ws.context(owner=...)``) on whose behalf the write is made."""


class ReadStream(Protocol):
    """An open, version-pinned read of one object, consumed chunk by chunk.

    ``version`` is known up front where the storage says it with the first response (S3,
    GCS, or a local file whose digest is cached); otherwise it is ``None`` until
    ``chunks()`` has been consumed to the end (the digest is computed as the bytes pass).
    Every chunk comes from the same version: a remote stream pins later ranges to it.
    """

    size: int | None

    @property
    def version(self) -> Version | None: ...

    def chunks(self) -> Iterator[bytes]: ...

    def close(self) -> None: ...


@runtime_checkable
class Backend(Protocol):
    """What every storage adapter implements."""

    capabilities: Capabilities
    root: str
    """The root as the storage names it (``/abs/dir``, ``bucket/prefix``)."""

    @classmethod
    def from_url(
        cls, url: str, storage_options: dict[str, Any], fs: Any | None = None
    ) -> Backend:
        """Build the adapter for ``url``, or over the given fsspec filesystem instance."""
        ...

    def resolve(self, key: str) -> str:
        """The canonical key of ``key`` (symlinks followed where the storage has them).

        Raises FS_OUTSIDE_ROOT when the target, or the parent of a missing target, lies
        outside the root.
        """
        ...

    def read(self, key: str) -> Blob:
        """The whole object and its version, in one round trip."""
        ...

    def read_many(self, entries: Iterable[Entry]) -> Iterator[tuple[Entry, Blob | FsError]]:
        """Whole files (as ``read``), yielded in the order given, each with its Blob or the
        FsError that reading it raised. A store that can fetch several at once does, with a
        bound on how many and on how many bytes it holds ahead (a search reads thousands).

        A backend whose version is the sha256 digest of the bytes (``digest_version``) may
        also offer ``read_many_unhashed``, the same reads with bare bytes in place of the
        Blobs: ``grep`` then hashes only the files it shows; and ``read_tree_unhashed``,
        its walk and those reads in one pass (see ``LocalBackend``), which ``grep`` takes
        when no plugin receives listings."""
        ...

    def open_read(self, key: str, chunk_size: int = 1 << 20) -> ReadStream:
        """A chunked read, for windows of objects too large to hold in memory."""
        ...

    def stat(self, key: str) -> Stat:
        """File or directory (raises FS_NOT_FOUND)."""
        ...

    def write(self, key: str, data: bytes, precondition: Precondition) -> Version:
        """Write ``data`` iff ``precondition`` holds, atomically where capabilities say so.

        Returns the new version. A failed precondition raises Conflict and changes nothing.
        A backend whose ``capabilities.write_meta`` is true also takes a keyword
        ``meta: WriteMeta | None`` and keeps it with the new version; the seam passes it
        only to those, so the keyword is optional for every other backend.
        """
        ...

    def list(self, key: str) -> list[Entry]:
        """The direct children of a directory, sorted by name.

        A backend may also offer ``list_lazy(key)``: the same entries in any order, each
        built as the storage yields it, so that a listing capped to what its output can
        show keeps only those (a directory of 200,000 entries is not held as 200,000
        entries and sorted)."""
        ...

    def delete(self, key: str, precondition: Precondition = ANY_VERSION) -> None:
        """Remove a file iff ``precondition`` holds.

        ``Overwrite()``: whatever is there. ``IfMatch(v)``: only while the file is at ``v``
        (else Conflict ``mismatch``, or ``missing`` when it is gone; nothing changes).
        ``CreateOnly()`` is FS_INVALID_ARGUMENT. A missing file is FS_NOT_FOUND, a
        directory FS_IS_DIRECTORY. ``capabilities.delete_if_match_atomic`` says whether the
        storage decides ``IfMatch`` in the delete request itself.
        """
        ...

    def copy(self, src: str, dst: str, source: Precondition = ANY_VERSION) -> Version:
        """Copy the file ``src`` to ``dst``, which must not exist; return ``dst``'s version.

        The destination is create-only: an existing ``dst`` is Conflict ``exists`` and
        nothing is written. ``source=IfMatch(v)`` copies exactly version ``v``: a source that
        moved on is Conflict ``mismatch`` (``missing`` when gone) and nothing is written.
        A missing source is FS_NOT_FOUND. ``capabilities.copy_create_only_atomic`` says
        whether the storage decides the destination's absence in the copy request.
        """
        ...

    def walk(self, key: str) -> Iterator[Entry]:
        """Every file below the directory ``key``, recursively, in ascending key order.

        Yields ``file`` entries (with sizes) and ``symlink`` entries (never followed, never
        descended); directories themselves are not yielded. Uses the fewest requests the
        storage allows (object stores: one flat prefix listing per page). A missing
        directory is FS_NOT_FOUND, a file FS_INVALID_ARGUMENT; an empty root yields nothing.
        """
        ...

    def read_version(self, key: str, version: Version) -> Blob:
        """The bytes of an older (or the current) ``version`` of ``key``, in one round trip.

        FS_UNSUPPORTED where the store keeps no versions (``capabilities.history`` is False,
        or the S3 bucket is not versioned); FS_NOT_FOUND when that version is not kept.
        """
        ...

    def versions(self, key: str, limit: int | None = None) -> builtins.list[VersionInfo]:
        """The versions the store keeps of ``key``, newest first (at most ``limit``).

        FS_UNSUPPORTED where the store keeps no versions; FS_NOT_FOUND when it keeps none
        of this key.
        """
        ...


@runtime_checkable
class CapabilitiesPerKey(Protocol):
    """Optional (see ``contract``): a store whose guarantees differ by key (mounts)."""

    def capabilities_for(self, key: str) -> Capabilities:
        """What the store holding ``key`` guarantees."""
        ...


@runtime_checkable
class OwnedDeletes(Protocol):
    """Optional (see ``contract``): a store that records on whose behalf it deletes."""

    def delete_owned(self, key: str, precondition: Precondition, meta: WriteMeta) -> None:
        """``delete``, recording ``meta.owner`` (fsseam's own history, and mounts)."""
        ...


@cache
def _offers(cls: type, protocol: type) -> bool:
    # Asked of the class (its own namespace), never of an instance that may forward
    # unknown attributes; once per class.
    return issubclass(cls, protocol)


def write_as(
    backend: Backend, key: str, data: bytes, precondition: Precondition, meta: WriteMeta | None
) -> Version:
    """``backend.write``, with ``meta`` for a backend that keeps it (and only for one: the
    keyword is no part of the required contract). Under mounts the mount holding ``key``
    decides: the table's own flag holds only where every mount keeps the metadata, and the
    router hands it on to the mounts that do."""
    if _offers(type(backend), CapabilitiesPerKey):
        caps = cast(CapabilitiesPerKey, backend).capabilities_for(key)
    else:
        caps = backend.capabilities
    if meta is None or not caps.write_meta:
        return backend.write(key, data, precondition)
    write: Callable[..., Version] = backend.write
    return write(key, data, precondition, meta=meta)


def delete_as(backend: Backend, key: str, precondition: Precondition,
              meta: WriteMeta | None) -> None:
    """``backend.delete``, saying on whose behalf for a backend that records it
    (:class:`~fsseam.backends.contract.OwnedDeletes`: fsseam's own history, and mounts,
    which hand it on)."""
    if meta is not None and _offers(type(backend), OwnedDeletes):
        cast(OwnedDeletes, backend).delete_owned(key, precondition, meta)
    else:
        backend.delete(key, precondition)
