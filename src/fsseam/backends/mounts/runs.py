"""Reads routed to the mounts that hold the keys: runs of ``read_many`` (and of
``read_many_unhashed``), and a search's one-pass reads of a tree (``read_tree_unhashed``),
each on the mount's own fast path where its store has one.

Bare bytes stand for their version only on a store whose versions are digests of the
bytes: the router's one-pass tree read is offered when every mount's store is one, and a
mount below the key has a pass of its own worth routing to (local disk).
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
from ..base import Entry
from ..digests import DIGEST_KIND
from .mount import Mount
from .relocate import Relocated, Remapped

__all__ = ["read_runs", "read_tree_unhashed", "strictly_below"]

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


def read_tree_unhashed(
    router: Table, key: str, accept: Callable[[str], bool], max_bytes: int,
    wanted: Callable[[bytes], bool] | None = None,
) -> Iterator[tuple[str, bytes | FsError, bool]] | None:
    """As the router's ``walk``: each mount's part of the tree (its own one-pass read
    where it has one, else its walk and ``read_many``), merged in key order. None (the
    caller walks, then reads) unless every store of the table mints digests and some
    mount below ``key`` has a one-pass read of its own."""
    routed = router.route(key)
    below = [m for m in router.mounts if m.path and strictly_below(m.path, key)]
    if routed is None and not below and key:
        raise router.outside(key)
    if any(m.backend.capabilities.version_kind != DIGEST_KIND for m in router.mounts):
        return None
    parts = [(m, "", m.path, False) for m in below]
    if routed is not None:
        # A directory on the way to a mount point need not exist in the parent's store.
        parts.append((routed[0], routed[1], key, bool(below)))
    passes = []
    for m, inner, at, tolerate_missing in parts:
        takes = _taking(m, below, accept)
        passes.append((m, inner, at, tolerate_missing, takes,
                       m.backend.read_tree_unhashed(inner, takes, max_bytes, wanted)))
    if all(one_pass is None for *_, one_pass in passes):
        return None
    streams = [_tree(m, inner, at, tolerate_missing,
                     one_pass if one_pass is not None
                     else _walk_and_read(m, inner, takes, max_bytes, wanted))
               for m, inner, at, tolerate_missing, takes, one_pass in passes]
    return heapq.merge(*streams, key=lambda r: r[0])


def _taking(m: Mount, below: builtins.list[Mount], accept: Callable[[str], bool]
            ) -> Callable[[str], bool]:
    """``accept`` in ``m``'s own keys; deeper mounts own their subtrees, so the parent's
    files there are hidden (never read)."""
    hidden = [d.path for d in below if strictly_below(d.path, m.path)]

    def takes(k: str) -> bool:
        outer = m.outer(k)
        return accept(outer) and not any(outer == h or outer.startswith(h + "/") for h in hidden)

    return takes


def _tree(
    m: Mount, inner: str, key: str, tolerate_missing: bool,
    reads: Iterator[tuple[str, bytes | FsError, bool]],
) -> Iterator[tuple[str, bytes | FsError, bool]]:
    try:
        with Relocated((inner, key)):
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
