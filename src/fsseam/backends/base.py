"""The backend contract: the :class:`Backend` base class and the values it speaks in.

A backend is bound to one storage and one root. Every method takes a *key*: a path
relative to the root, ``/``-separated, without leading ``/`` (``""`` is the root itself).
The seam has already checked that the key stays inside the root; the backend only
translates keys to storage paths, mints versions and performs conditional writes.

What a backend can do is said one way, as fsspec says it: :class:`Backend` names every
operation; a subclass implements the required ones and overrides the optional ones it
does better than their working defaults. A backend over another (kept history, a test's
fault injector) subclasses :class:`Wrapper`, which forwards every operation to the backend
inside it; the mount table forwards each to the mount holding the key.

Errors: every method raises :class:`fsseam.errors.FsError` (a failed precondition is the
subclass :class:`fsseam.errors.Conflict`); storage exceptions never escape.
"""

from __future__ import annotations

import builtins
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict

from ..errors import ErrorCode, FsError
from ..messages import Reason
from ..paths import display
from ..versions import Capabilities, Entry, Overwrite, Precondition, Version

__all__ = [
    "ANY_VERSION",
    "Backend",
    "Blob",
    "BlobStream",
    "Entry",
    "ReadStream",
    "Stat",
    "TreePart",
    "VersionInfo",
    "Wrapper",
    "WriteMeta",
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
    """What a write (or a delete) says about itself, for stores that keep it with the
    version (``capabilities.write_meta``: S3 and GCS object metadata, fsseam's own
    history); every other store ignores it."""

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


class BlobStream:
    """A :class:`ReadStream` over bytes already read whole (one version, known up front),
    in chunks of ``chunk_size``: for a backend or a wrapper that holds the bytes."""

    def __init__(self, blob: Blob, chunk_size: int = 1 << 20) -> None:
        self._blob = blob
        self._chunk_size = max(1, chunk_size)
        self.size: int | None = len(blob.data)

    @property
    def version(self) -> Version | None:
        return self._blob.version

    def chunks(self) -> Iterator[bytes]:
        data, step = self._blob.data, self._chunk_size
        if len(data) <= step:
            yield data
            return
        view = memoryview(data)
        for start in range(0, len(data), step):
            yield bytes(view[start : start + step])

    def close(self) -> None:
        pass


class TreePart(Protocol):
    """A stretch of a walk's order that any process can read (picklable)."""

    @property
    def key(self) -> str:
        """The directory of the part: a subtree's top, or the directory of a run of
        files."""
        ...

    @property
    def span(self) -> tuple[str, str] | None:
        """None: the whole subtree of ``key``; else the first and last names of a run of
        files directly in ``key``."""
        ...

    @property
    def start(self) -> str:
        """Where the part begins in the walk's order (a key no file of it sorts before)."""
        ...

    def reads(
        self, accept: Callable[[str], bool], max_bytes: int,
        wanted: Callable[[bytes], bool] | None = None,
    ) -> Iterator[tuple[str, bytes | FsError, bool]]:
        """``read_tree_unhashed`` of this part alone."""
        ...


class Backend(ABC):
    """What every storage adapter is (see the module docstring).

    Required: ``from_url``, ``resolve``, ``read``, ``read_many``, ``open_read``, ``stat``,
    ``write``, ``list``, ``delete``, ``copy``, ``walk``, ``read_version``, ``versions``.

    Optional, each with a working default a backend overrides where it does better:

    ======================  ===============================================  ==============
    operation               what an override offers                          who overrides
    ======================  ===============================================  ==============
    ``native_key``          a real path on this machine -> key               local
    ``check_writable``      refuse a change before anything is read          mounts
    ``capabilities_for``    what the store holding a key guarantees          mounts, kept
    ``list_lazy``           children in any order, one at a time             most
    ``read_many_unhashed``  bare bytes where versions are their digests      local
    ``read_tree_unhashed``  a walk and its reads in one pass                 local
    ``split_tree``          the walk as parts, for helper processes          local
    ``walk_names``          a walk of file keys only, pruned as it goes      local
    ``walk_versioned``      a walk that says each file's version             object stores
    ``start_read``          a read started now, waited on later              object stores
    ``read_version_id``     a version read by the store's own id             object stores
    ``writer_of``           the current version and who wrote it             object stores
    ``get_plain``           an object beside the files, in one request       object stores
    ``put_plain``           a conditional write of one, in one request       object stores
    ``prune_directories``   remove the directories left empty below a key    local
    ======================  ===============================================  ==============

    A default that cannot be done better says so plainly: ``None`` (no native key, no
    one-pass tree, no versioned walk, no started read, no writer kept), ``[]`` (no parts),
    or FS_NOT_FOUND (no version has that id); the caller then takes the plain path.
    """

    capabilities: Capabilities
    root: str
    """The root as the storage names it (``/abs/dir``, ``bucket/prefix``)."""
    durability: str = "fsync"
    """What a returned write survives: ``"fsync"`` a power loss, ``"rename"`` only a crash
    of the process (the local backend's choice; fsseam's kept history matches it)."""

    # -- required --------------------------------------------------------------------
    @classmethod
    @abstractmethod
    def from_url(
        cls, url: str, storage_options: dict[str, Any], fs: Any | None = None
    ) -> Backend:
        """Build the adapter for ``url``, or over the given fsspec filesystem instance."""

    @abstractmethod
    def resolve(self, key: str) -> str:
        """The canonical key of ``key`` (symlinks followed where the storage has them).

        Raises FS_OUTSIDE_ROOT when the target, or the parent of a missing target, lies
        outside the root.
        """

    @abstractmethod
    def read(self, key: str) -> Blob:
        """The whole object and its version, in one round trip."""

    @abstractmethod
    def read_many(self, entries: Iterable[Entry]) -> Iterator[tuple[Entry, Blob | FsError]]:
        """Whole files (as ``read``), yielded in the order given, each with its Blob or the
        FsError that reading it raised. A store that can fetch several at once does, with a
        bound on how many and on how many bytes it holds ahead (a search reads thousands)."""

    @abstractmethod
    def open_read(self, key: str, chunk_size: int = 1 << 20) -> ReadStream:
        """A chunked read, for windows of objects too large to hold in memory."""

    @abstractmethod
    def stat(self, key: str) -> Stat:
        """File or directory (raises FS_NOT_FOUND)."""

    @abstractmethod
    def write(self, key: str, data: bytes, precondition: Precondition, *,
              meta: WriteMeta | None = None) -> Version:
        """Write ``data`` iff ``precondition`` holds, atomically where capabilities say so.

        Returns the new version. A failed precondition raises Conflict and changes nothing.
        ``meta`` says on whose behalf: a store whose ``capabilities.write_meta`` is true
        keeps it with the new version, any other ignores it.
        """

    @abstractmethod
    def list(self, key: str) -> builtins.list[Entry]:
        """The direct children of a directory, sorted by name."""

    @abstractmethod
    def delete(self, key: str, precondition: Precondition = ANY_VERSION, *,
               meta: WriteMeta | None = None) -> None:
        """Remove a file iff ``precondition`` holds.

        ``Overwrite()``: whatever is there. ``IfMatch(v)``: only while the file is at ``v``
        (else Conflict ``mismatch``, or ``missing`` when it is gone; nothing changes).
        ``CreateOnly()`` is FS_INVALID_ARGUMENT. A missing file is FS_NOT_FOUND, a
        directory FS_IS_DIRECTORY. ``capabilities.delete_if_match_atomic`` says whether the
        storage decides ``IfMatch`` in the delete request itself. ``meta``: on whose behalf,
        for a store that records it (fsseam's own history); others ignore it.
        """

    @abstractmethod
    def copy(self, src: str, dst: str, source: Precondition = ANY_VERSION) -> Version:
        """Copy the file ``src`` to ``dst``, which must not exist; return ``dst``'s version.

        The destination is create-only: an existing ``dst`` is Conflict ``exists`` and
        nothing is written. ``source=IfMatch(v)`` copies exactly version ``v``: a source that
        moved on is Conflict ``mismatch`` (``missing`` when gone) and nothing is written.
        A missing source is FS_NOT_FOUND. ``capabilities.copy_create_only_atomic`` says
        whether the storage decides the destination's absence in the copy request.
        """

    @abstractmethod
    def walk(self, key: str) -> Iterator[Entry]:
        """Every file below the directory ``key``, recursively, in ascending key order.

        Yields ``file`` entries (with sizes) and ``symlink`` entries (never followed, never
        descended); directories themselves are not yielded. Uses the fewest requests the
        storage allows (object stores: one flat prefix listing per page). A missing
        directory is FS_NOT_FOUND, a file FS_INVALID_ARGUMENT; an empty root yields nothing.
        """

    @abstractmethod
    def read_version(self, key: str, version: Version) -> Blob:
        """The bytes of an older (or the current) ``version`` of ``key``, in one round trip.

        FS_UNSUPPORTED where the store keeps no versions (``capabilities.history`` is False,
        or the S3 bucket is not versioned); FS_NOT_FOUND when that version is not kept.
        """

    @abstractmethod
    def versions(self, key: str, limit: int | None = None) -> builtins.list[VersionInfo]:
        """The versions the store keeps of ``key``, newest first (at most ``limit``).

        FS_UNSUPPORTED where the store keeps no versions; FS_NOT_FOUND when it keeps none
        of this key.
        """

    # -- optional, with working defaults -----------------------------------------------
    def storage_id(self) -> Hashable:
        """What names this backend's storage in this process: two backends over one
        storage answer alike (they share fsseam's history kept in memory)."""
        return (type(self).__name__, self.root)

    def native_key(self, path: str) -> str | None:
        """The key of a real absolute path under the root (None: not under it, or no
        storage on this machine)."""
        return None

    def check_writable(self, key: str) -> None:
        """Raise the FsError a change at ``key`` would meet, before anything is read
        (nothing to refuse by default)."""
        return None

    def capabilities_for(self, key: str) -> Capabilities:
        """What the store holding ``key`` guarantees (by default: ``capabilities``)."""
        return self.capabilities

    def list_lazy(self, key: str) -> Iterable[Entry]:
        """``list(key)`` in any order, each entry built as the storage yields it, so that
        a listing capped to what its output can show keeps only those (by default: the
        sorted ``list``)."""
        return self.list(key)

    def read_many_unhashed(
        self, entries: Iterable[Entry]
    ) -> Iterator[tuple[Entry, Blob | bytes | FsError]]:
        """``read_many``, with bare bytes in place of a Blob where this store's version is
        the sha256 digest of the bytes (``digest_version``): a search then hashes only the
        files it shows. By default: ``read_many``'s Blobs."""
        return self.read_many(entries)

    def read_tree_unhashed(
        self, key: str, accept: Callable[[str], bool], max_bytes: int,
        wanted: Callable[[bytes], bool] | None = None,
    ) -> Iterator[tuple[str, bytes | FsError, bool]] | None:
        """The walk of ``key`` and the unhashed reads of the files ``accept`` takes, in one
        pass (see ``LocalBackend.read_tree_unhashed``); None where this store has no such
        pass (the caller walks, then reads)."""
        return None

    def split_tree(self, key: str, want: int) -> Sequence[TreePart]:
        """The walk of the directory ``key`` as parts in order, at least ``want`` where the
        tree allows (see ``LocalBackend.split_tree``); FsError when ``key`` is no
        directory. By default no parts: the walk is not split."""
        return []

    def walk_names(
        self, key: str, keep_dir: Callable[[str], bool] | None = None,
        listed: Callable[[str, builtins.list[str]], None] | None = None,
    ) -> Iterator[tuple[str, builtins.list[str]]] | None:
        """The files ``walk(key)`` yields (links left out), in the same order, by name,
        where the store lists directory by directory: runs of a directory's key and the
        names of files of it that follow each other in that order (a file's key is the
        directory's key, a slash and the name; the name alone at the root), with no entry
        per file. ``keep_dir(dir_key)`` is asked before each subdirectory is listed
        (False: nothing below it is listed or yielded), and ``listed(dir_key, names)`` is
        told each directory's child names (sorted) before any of its files is yielded. A
        missing directory is FS_NOT_FOUND, a file FS_INVALID_ARGUMENT, at the first
        ``next``. None where the store has no such walk (an object store lists keys, not
        directories): the caller walks."""
        return None

    def prune_directories(self, key: str) -> None:
        """Remove the directories left empty at and below ``key``, innermost first; one
        that holds anything stays (with those above it), and so does the root. By
        default nothing: a store whose directories exist only through their files has none
        to leave behind."""
        return None

    def walk_versioned(self, key: str) -> Iterator[tuple[Entry, Version | None]] | None:
        """``walk(key)`` with the version a read of each file would return now, from the
        same listing requests (None for a file whose listing does not say it); None where
        this store's listings give no versions (no content index is kept for it)."""
        return None

    def start_read(self, key: str) -> Callable[[], Blob] | None:
        """``read(key)`` started now, its answer waited on by calling what is returned;
        None where this store starts a read only by waiting on it (a thread per read)."""
        return None

    def read_version_id(self, key: str, version_id: str) -> Blob:
        """The version the store's own full id names, in one request; FS_NOT_FOUND where
        no version has that id (by default: none has, the store names versions no other
        way than ``versions`` lists them)."""
        raise FsError(ErrorCode.FS_NOT_FOUND, path=display(key), reason=Reason.version_unknown,
                      details={"version": version_id})

    def writer_of(self, key: str) -> tuple[Version, str | None] | None:
        """The file's current version and the owner whose write made it, as the store
        keeps it with the object (owner None: not written through fsseam, or by no
        owner); None where this store keeps no writer. One request (a HEAD). A missing
        file raises FS_NOT_FOUND."""
        return None

    def get_plain(self, key: str) -> Blob | None:
        """An object kept beside the files (observation shards, index shards) and its
        version, or None when there is none. A store whose file read probes for a
        "directory" on a miss reads these without the probe; by default a ``read``."""
        try:
            return self.read(key)
        except FsError as e:
            if e.code is ErrorCode.FS_NOT_FOUND and e.reason != Reason.bucket_missing:
                return None
            raise

    def put_plain(self, key: str, data: bytes, precondition: Precondition) -> Version:
        """Store an object kept beside the files iff ``precondition`` holds; by default a
        ``write`` (a store whose file write probes for a "directory" skips the probe)."""
        return self.write(key, data, precondition)


class Wrapper(Backend):
    """A backend over another: every operation forwarded to ``inner``, explicitly; a
    subclass overrides what it changes (kept history keeps copies before a change, a test
    injects a fault). What the wrapper offers is what ``inner`` offers, with no lookup."""

    def __init__(self, inner: Backend) -> None:
        self.inner = inner
        self.capabilities = inner.capabilities
        self.root = inner.root
        self.durability = inner.durability

    @classmethod
    def from_url(
        cls, url: str, storage_options: dict[str, Any], fs: Any | None = None
    ) -> Backend:
        raise TypeError(f"{cls.__name__} wraps an open backend, not a URL")

    def storage_id(self) -> Hashable:
        return self.inner.storage_id()

    def resolve(self, key: str) -> str:
        return self.inner.resolve(key)

    def read(self, key: str) -> Blob:
        return self.inner.read(key)

    def read_many(self, entries: Iterable[Entry]) -> Iterator[tuple[Entry, Blob | FsError]]:
        return self.inner.read_many(entries)

    def open_read(self, key: str, chunk_size: int = 1 << 20) -> ReadStream:
        return self.inner.open_read(key, chunk_size)

    def stat(self, key: str) -> Stat:
        return self.inner.stat(key)

    def write(self, key: str, data: bytes, precondition: Precondition, *,
              meta: WriteMeta | None = None) -> Version:
        return self.inner.write(key, data, precondition, meta=meta)

    def list(self, key: str) -> builtins.list[Entry]:
        return self.inner.list(key)

    def delete(self, key: str, precondition: Precondition = ANY_VERSION, *,
               meta: WriteMeta | None = None) -> None:
        self.inner.delete(key, precondition, meta=meta)

    def copy(self, src: str, dst: str, source: Precondition = ANY_VERSION) -> Version:
        return self.inner.copy(src, dst, source)

    def walk(self, key: str) -> Iterator[Entry]:
        return self.inner.walk(key)

    def read_version(self, key: str, version: Version) -> Blob:
        return self.inner.read_version(key, version)

    def versions(self, key: str, limit: int | None = None) -> builtins.list[VersionInfo]:
        return self.inner.versions(key, limit)

    def native_key(self, path: str) -> str | None:
        return self.inner.native_key(path)

    def check_writable(self, key: str) -> None:
        self.inner.check_writable(key)

    def capabilities_for(self, key: str) -> Capabilities:
        return self.inner.capabilities_for(key)

    def list_lazy(self, key: str) -> Iterable[Entry]:
        return self.inner.list_lazy(key)

    def read_many_unhashed(
        self, entries: Iterable[Entry]
    ) -> Iterator[tuple[Entry, Blob | bytes | FsError]]:
        return self.inner.read_many_unhashed(entries)

    def read_tree_unhashed(
        self, key: str, accept: Callable[[str], bool], max_bytes: int,
        wanted: Callable[[bytes], bool] | None = None,
    ) -> Iterator[tuple[str, bytes | FsError, bool]] | None:
        return self.inner.read_tree_unhashed(key, accept, max_bytes, wanted)

    def split_tree(self, key: str, want: int) -> Sequence[TreePart]:
        return self.inner.split_tree(key, want)

    def walk_names(
        self, key: str, keep_dir: Callable[[str], bool] | None = None,
        listed: Callable[[str, builtins.list[str]], None] | None = None,
    ) -> Iterator[tuple[str, builtins.list[str]]] | None:
        return self.inner.walk_names(key, keep_dir, listed)

    def prune_directories(self, key: str) -> None:
        self.inner.prune_directories(key)

    def walk_versioned(self, key: str) -> Iterator[tuple[Entry, Version | None]] | None:
        return self.inner.walk_versioned(key)

    def start_read(self, key: str) -> Callable[[], Blob] | None:
        return self.inner.start_read(key)

    def read_version_id(self, key: str, version_id: str) -> Blob:
        return self.inner.read_version_id(key, version_id)

    def writer_of(self, key: str) -> tuple[Version, str | None] | None:
        return self.inner.writer_of(key)

    def get_plain(self, key: str) -> Blob | None:
        return self.inner.get_plain(key)

    def put_plain(self, key: str, data: bytes, precondition: Precondition) -> Version:
        return self.inner.put_plain(key, data, precondition)
