"""The optional half of the backend contract, looked up once per backend.

A backend must do what ``Backend`` names; beyond that it may offer a few faster or richer
operations, each a small protocol of one method:

====================  ========================================================  ==========
protocol              what it offers                                            who
====================  ========================================================  ==========
NativeKeys            ``native_key(path)``: a real path on this machine -> key  local
WriteChecks           ``check_writable(key)``: refuse a change before reading   mounts
LazyListing           ``list_lazy(key)``: children in any order, one at a time  most
UnhashedReads         ``read_many_unhashed(entries)``: bytes without versions   local
UnhashedTree          ``read_tree_unhashed(key, ...)``: walk and reads at once  local
SplitTree             ``split_tree(key, n)``: the walk as parts, for processes  local
CapabilitiesPerKey    ``capabilities_for(key)``: what the store of a key does   mounts
VersionIds            ``read_version_id(key, id)``: a version by the store's id  objects
VersionedWalk         ``walk_versioned(key)``: a walk that says each version    objects
StartedReads          ``start_read(key)``: a read started, waited on later      objects
Writers               ``writer_of(key)``: the current version and who wrote it  objects
====================  ========================================================  ==========

The seam asks :func:`extras_of` once and calls what the answer holds (``None``: not
offered, use the required contract). A backend class offers an operation by defining the
method; the question is asked of the class, never of the instance, so an object that
forwards unknown attributes (``__getattr__``) cannot pass for one that offers everything.

A wrapper (mounts, kept history) offers exactly what the backends under it offer, with
its own meaning per key: it implements :class:`Forwarding`, whose ``extras()`` answer
replaces the lookup by class.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, fields
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

from .base import Backend, Blob, CapabilitiesPerKey, Entry, OwnedDeletes

if TYPE_CHECKING:
    from ..errors import FsError
    from ..versions import Capabilities, Precondition, Version

__all__ = [
    "CapabilitiesPerKey",
    "Extras",
    "Forwarding",
    "LazyListing",
    "NativeKeys",
    "OwnedDeletes",
    "SplitTree",
    "StartedReads",
    "TreePart",
    "UnhashedReads",
    "UnhashedTree",
    "VersionIds",
    "VersionedWalk",
    "WriteChecks",
    "Writers",
    "expose",
    "extras_of",
    "offered",
]


@runtime_checkable
class NativeKeys(Protocol):
    def native_key(self, path: str) -> str | None:
        """The key of a real absolute path under the root (None: not under it)."""
        ...


@runtime_checkable
class WriteChecks(Protocol):
    def check_writable(self, key: str) -> None:
        """Raise the FsError a change at ``key`` would meet, before anything is read."""
        ...


@runtime_checkable
class LazyListing(Protocol):
    def list_lazy(self, key: str) -> Iterable[Entry]:
        """``list(key)`` in any order, each entry built as the storage yields it."""
        ...


@runtime_checkable
class UnhashedReads(Protocol):
    def read_many_unhashed(
        self, entries: Iterable[Entry]
    ) -> Iterator[tuple[Entry, bytes | FsError]]:
        """``read_many`` with bare bytes, whose version is their ``digest_version``."""
        ...


@runtime_checkable
class UnhashedTree(Protocol):
    def read_tree_unhashed(
        self, key: str, accept: Callable[[str], bool], max_bytes: int,
        wanted: Callable[[bytes], bool] | None = None,
    ) -> Iterator[tuple[str, bytes | FsError, bool]]:
        """The walk of ``key`` and the unhashed reads of the files ``accept`` takes, in one
        pass (see ``LocalBackend.read_tree_unhashed``)."""
        ...


class TreePart(Protocol):
    """A stretch of a walk's order that any process can read (picklable)."""

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


@runtime_checkable
class SplitTree(Protocol):
    def split_tree(self, key: str, want: int) -> list[TreePart]:
        """The walk of the directory ``key`` as parts in order, at least ``want`` where the
        tree allows (see ``LocalBackend.split_tree``); FsError when ``key`` is no
        directory."""
        ...


@runtime_checkable
class VersionIds(Protocol):
    def read_version_id(self, key: str, version_id: str) -> Blob:
        """The version the store's own full id names, in one request."""
        ...


@runtime_checkable
class VersionedWalk(Protocol):
    def walk_versioned(self, key: str) -> Iterator[tuple[Entry, Version | None]]:
        """``walk(key)`` with the version a read of each file would return now, from the
        same listing requests (None where the listing does not say it)."""
        ...


@runtime_checkable
class StartedReads(Protocol):
    def start_read(self, key: str) -> Callable[[], Blob] | None:
        """``read(key)`` started now, its answer waited on by calling what is returned;
        None where this store starts a read only by waiting on it (a thread per read)."""
        ...


@runtime_checkable
class Writers(Protocol):
    def writer_of(self, key: str) -> tuple[Version, str | None] | None:
        """The file's current version and the owner whose write made it, as the store
        keeps it with the object (owner None: not written through fsseam, or by no
        owner); None where this store keeps no writer. One request (a HEAD). A missing
        file raises FS_NOT_FOUND."""
        ...


@runtime_checkable
class PlainObjects(Protocol):
    """Objects kept beside the files (observation shards): one request per read or
    conditional write, without the probes a file needs for a "directory" at its key."""

    def get_plain(self, key: str) -> Blob | None:
        """The object at ``key`` and its version, or None when there is none."""
        ...

    def put_plain(self, key: str, data: bytes, precondition: Precondition) -> Version:
        """Store ``data`` at ``key`` iff ``precondition`` holds."""
        ...


@dataclass(frozen=True)
class Extras:
    """What a backend offers beyond the required contract (each ``None`` when not)."""

    native_key: Callable[[str], str | None] | None = None
    check_writable: Callable[[str], None] | None = None
    list_lazy: Callable[[str], Iterable[Entry]] | None = None
    read_tree_unhashed: Callable[..., Iterator[tuple[str, bytes | FsError, bool]]] | None = None
    read_many_unhashed: (
        Callable[[Iterable[Entry]], Iterator[tuple[Entry, bytes | FsError]]] | None
    ) = None
    capabilities_for: Callable[[str], Capabilities] | None = None
    read_version_id: Callable[[str, str], Blob] | None = None
    get_plain: Callable[[str], Blob | None] | None = None
    put_plain: Callable[[str, bytes, Precondition], Version] | None = None
    walk_versioned: Callable[[str], Iterator[tuple[Entry, Version | None]]] | None = None
    split_tree: Callable[[str, int], list[TreePart]] | None = None
    start_read: Callable[[str], Callable[[], Blob] | None] | None = None
    writer_of: Callable[[str], tuple[Version, str | None] | None] | None = None


@runtime_checkable
class Forwarding(Protocol):
    def extras(self) -> Extras:
        """What this wrapper offers: decided from the backends under it, not its class."""
        ...


_PROTOCOLS = (NativeKeys, WriteChecks, LazyListing, UnhashedTree, UnhashedReads,
              CapabilitiesPerKey, VersionIds, PlainObjects, VersionedWalk, SplitTree,
              StartedReads, Writers)


@cache
def _offers(cls: type) -> frozenset[type]:
    # issubclass on a protocol of methods reads the class's own namespace (its MRO), so an
    # instance's __getattr__ never answers; asked once per class.
    return frozenset(p for p in _PROTOCOLS if issubclass(cls, p))


def extras_of(backend: Backend) -> Extras:
    """What ``backend`` offers beyond the required contract."""
    if issubclass(type(backend), Forwarding):
        return cast(Forwarding, backend).extras()
    offers = _offers(type(backend))
    b: Any = backend  # each method below is one its class defines (``offers``)
    return Extras(
        native_key=b.native_key if NativeKeys in offers else None,
        check_writable=b.check_writable if WriteChecks in offers else None,
        list_lazy=b.list_lazy if LazyListing in offers else None,
        read_tree_unhashed=b.read_tree_unhashed if UnhashedTree in offers else None,
        read_many_unhashed=b.read_many_unhashed if UnhashedReads in offers else None,
        capabilities_for=b.capabilities_for if CapabilitiesPerKey in offers else None,
        read_version_id=b.read_version_id if VersionIds in offers else None,
        get_plain=b.get_plain if PlainObjects in offers else None,
        put_plain=b.put_plain if PlainObjects in offers else None,
        walk_versioned=b.walk_versioned if VersionedWalk in offers else None,
        split_tree=b.split_tree if SplitTree in offers else None,
        start_read=b.start_read if StartedReads in offers else None,
        writer_of=b.writer_of if Writers in offers else None,
    )


def expose(wrapper: object, extras: Extras) -> None:
    """Each operation ``extras`` holds as an attribute of ``wrapper`` too: code that holds
    the backend rather than its extras (``ws.backend.native_key(...)``) finds on a wrapper
    what the backends under it offer, and nothing they do not."""
    for f in fields(extras):
        op = getattr(extras, f.name)
        if op is not None:
            setattr(wrapper, f.name, op)


def offered(extras: Extras) -> frozenset[str]:
    """The names of the operations ``extras`` holds (for tests and ``repr``)."""
    return frozenset(f.name for f in fields(extras) if getattr(extras, f.name) is not None)
