"""Reads routed to the mounts that hold the keys: runs of ``read_many``, and the unhashed
reads of a search (``read_many_unhashed``, ``read_tree_unhashed``), each on the mount's own
fast path where its store has one.

Bare bytes stand for their version only on a store whose versions are digests of the
bytes: the router offers the unhashed reads when every mount's store is one, and at least
one has a fast path worth routing to (a mount of local disk keeps its one-pass search).
"""

from __future__ import annotations

import builtins
import heapq
from collections.abc import Callable, Iterable, Iterator
from itertools import groupby
from typing import Protocol, TypeVar

from ...errors import ErrorCode, FsError
from ...messages import Reason
from ...paths import display
from .._digest import DIGEST_KIND
from ..base import Blob, Entry
from ..contract import Extras
from .mount import Mount
from .relocate import Relocated, Remapped

__all__ = ["UnhashedRuns", "read_runs", "strictly_below"]

R = TypeVar("R")


class Table(Protocol):
    """What these reads need of the router: its mounts and how it routes a key."""

    mounts: tuple[Mount, ...]

    def route(self, key: str) -> tuple[Mount, str] | None: ...

    def mount_of_key(self, e: Entry) -> Mount | None: ...

    def outside(self, key: str) -> FsError: ...
_Read = Callable[[Mount, Iterable[Entry]], Iterable[tuple[Entry, R | FsError]]]


def strictly_below(path: str, key: str) -> bool:
    return path != key and (not key or path.startswith(key + "/"))


def read_runs(
    router: Table, entries: Iterable[Entry], read: _Read[R]
) -> Iterator[tuple[Entry, R | FsError]]:
    """``read(mount, its entries)`` for each run of entries held by one mount, in the
    order given, with each result named by the workspace's key again."""
    for m, run in groupby(entries, key=router.mount_of_key):
        if m is None:
            for e in run:
                yield e, router.outside(e.key)
            continue
        outer_of: dict[str, Entry] = {}
        for inner_e, got in read(m, _inner_run(m, run, outer_of)):
            outer = outer_of.pop(inner_e.key)
            if isinstance(got, FsError):
                got = Remapped([(inner_e.key, outer.key)]).error(got)
            yield outer, got


def _inner_run(m: Mount, run: Iterable[Entry], outer_of: dict[str, Entry]) -> Iterator[Entry]:
    """The entries of a run in ``m``'s own keys, each recorded in ``outer_of``; lazily, as
    the store asks for them: a search decides whether to read a file only when its turn
    comes (it stops reading once its time is spent)."""
    for e in run:
        inner = e.key[len(m.path) + 1 :] if m.path else e.key
        outer_of[inner] = e
        yield e.model_copy(update={"key": inner})


class UnhashedRuns:
    """The router's unhashed reads, over the extras of each mount (looked up once)."""

    def __init__(self, router: Table, extras: dict[str, Extras]) -> None:
        self.router = router
        self.extras = extras

    @staticmethod
    def applies(mounts: Iterable[Mount], extras: dict[str, Extras],
                field: Callable[[Extras], object]) -> bool:
        """Whether the router offers the unhashed read ``field`` names: every store mints
        digests, and some mount has that read of its own."""
        mounts = builtins.list(mounts)
        return all(m.backend.capabilities.version_kind == DIGEST_KIND for m in mounts) and any(
            field(extras[m.path]) is not None for m in mounts)

    def read_many_unhashed(
        self, entries: Iterable[Entry]
    ) -> Iterator[tuple[Entry, bytes | FsError]]:
        return read_runs(self.router, entries, self._read_run)

    def _read_run(self, m: Mount, run: Iterable[Entry]) -> Iterable[tuple[Entry, bytes | FsError]]:
        fast = self.extras[m.path].read_many_unhashed
        if fast is not None:
            return fast(run)
        return ((e, got.data if isinstance(got, Blob) else got)
                for e, got in m.backend.read_many(run))

    def read_tree_unhashed(
        self, key: str, accept: Callable[[str], bool], max_bytes: int,
        wanted: Callable[[bytes], bool] | None = None,
    ) -> Iterator[tuple[str, bytes | FsError, bool]]:
        """As the router's ``walk``: each mount's part of the tree (its own one-pass read
        where it has one), merged in key order."""
        router = self.router
        routed = router.route(key)
        below = [m for m in router.mounts if m.path and strictly_below(m.path, key)]
        if routed is None and not below and key:
            raise router.outside(key)
        streams = [self._tree(m, "", m.path, below, accept, max_bytes, wanted, False)
                   for m in below]
        if routed is not None:
            # A directory on the way to a mount point need not exist in the parent's store.
            m, inner = routed
            streams.append(self._tree(m, inner, key, below, accept, max_bytes, wanted,
                                      bool(below)))
        return heapq.merge(*streams, key=lambda r: r[0])

    def _tree(
        self, m: Mount, inner: str, key: str, below: builtins.list[Mount],
        accept: Callable[[str], bool], max_bytes: int, wanted: Callable[[bytes], bool] | None,
        tolerate_missing: bool,
    ) -> Iterator[tuple[str, bytes | FsError, bool]]:
        # Deeper mounts own their subtrees: the parent's files there are hidden (never read).
        hidden = [d.path for d in below if strictly_below(d.path, m.path)]

        def takes(k: str) -> bool:
            outer = m.outer(k)
            return accept(outer) and not any(
                outer == h or outer.startswith(h + "/") for h in hidden)

        fast = self.extras[m.path].read_tree_unhashed
        try:
            with Relocated((inner, key)):
                reads = (fast(inner, takes, max_bytes, wanted) if fast is not None
                         else _walk_and_read(m, inner, takes, max_bytes, wanted))
                for k, got, keep in reads:
                    outer = m.outer(k)
                    if isinstance(got, FsError):
                        got = Remapped([(k, outer)]).error(got)
                    yield outer, got, keep
        except FsError as e:
            if not (tolerate_missing and e.code is ErrorCode.FS_NOT_FOUND
                    and e.reason != Reason.bucket_missing):
                raise


def _walk_and_read(
    m: Mount, inner: str, accept: Callable[[str], bool], max_bytes: int,
    wanted: Callable[[bytes], bool] | None,
) -> Iterator[tuple[str, bytes | FsError, bool]]:
    """``read_tree_unhashed`` of a digest store without one: its walk and ``read_many``."""
    files = (e for e in m.backend.walk(inner) if e.kind == "file" and accept(e.key))
    for big, run in groupby(files, key=lambda e: e.size is not None and e.size > max_bytes):
        if big:
            for e in run:
                yield e.key, _too_large(e.key, e.size, max_bytes), False
            continue
        for e, got in m.backend.read_many(run):
            if isinstance(got, FsError):
                yield e.key, got, False
            elif len(got.data) > max_bytes:
                yield e.key, _too_large(e.key, len(got.data), max_bytes), False
            else:
                yield e.key, got.data, wanted is None or wanted(got.data)


def _too_large(key: str, size: int | None, cap: int) -> FsError:
    return FsError(ErrorCode.FS_TOO_LARGE, path=display(key), reason=Reason.edit_too_large,
                   details={"size": size, "cap": cap})
