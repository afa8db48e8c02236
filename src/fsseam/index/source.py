"""The reads of a grep through the content index.

The walk with versions lists every file below the search (the only requests made for the
files the index holds); the shards of their directories are fetched at once; a file the
index holds at its listed version is read only when its 4-grams may hold the pattern's,
and stands for itself otherwise (bytes that make the search count it as it would have,
without a match: text, binary or not UTF-8); every other file is read, and indexed.
Candidates are read concurrently and searched as any read file is, so what is shown was
always confirmed on the file's bytes.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from typing import Protocol

from ..backends.base import Backend, Blob, Entry
from ..backends.contract import Extras
from ..backends.objectstore import ObjectStoreBackend
from ..errors import FsError
from ..events import ListEvent
from ..gate import Gate
from ..grep import Pattern
from ..paths import display
from ..versions import Version
from .grams import holds, needle_grams
from .keeper import PLUGIN_NAME, ContentIndex, Loaded, Record, describe
from .shards import Kind, prefix_of

__all__ = ["READ_CONCURRENCY", "index_of", "indexed_reads"]

READ_CONCURRENCY = 64
"""Candidate reads in flight: each is one round trip the search waits on."""
BATCH = 1000

Read = tuple[str, Blob | bytes | FsError, bool | None]
_STAND_IN = {Kind.TEXT: b"", Kind.BINARY: b"\x00", Kind.NOT_UTF8: b"\xff"}


class Owner(Protocol):
    """What of ``ctx.fs`` the index reads through (``fsseam.seam.core.Core``)."""

    owner: str
    extras: Extras
    _gate: Gate

    @property
    def backend(self) -> Backend: ...


class Search(Protocol):
    """What of a grep call the index needs (``fsseam.seam.finding._Search``)."""

    key: str
    pattern: Pattern
    cap: int

    def accept(self, k: str) -> bool: ...

    def skip(self, why: str) -> None: ...


def index_of(gate: Gate) -> ContentIndex | None:
    plugin = gate.pm.get_plugin(PLUGIN_NAME)
    return plugin if isinstance(plugin, ContentIndex) else None


def indexed_reads(fs: Owner, search: Search) -> Iterator[Read] | None:
    """The reads of ``search`` through the workspace's content index; None when it has
    none, or when ``search.key`` is not a directory (the plain path says what it is)."""
    index = index_of(fs._gate)
    walk = fs.extras.walk_versioned
    if index is None or walk is None:
        return None
    listed = walk(search.key)
    try:
        head = list(itertools.islice(listed, 1))
    except FsError:
        return None
    return _reads(fs, search, index, itertools.chain(head, listed))


def _visible(fs: Owner, key: str, batch: list[tuple[Entry, Version | None]]
             ) -> list[tuple[Entry, Version | None]]:
    files = [(e, v) for e, v in batch if e.kind == "file"]
    if not fs._gate.hooked("fs/list"):
        return files
    event = ListEvent(owner=fs.owner, key=key, path=display(key), operation="walk",
                      entries=[e for e, _ in files])
    fs._gate.dispatch(event)
    kept = {e.key for e in event.entries}
    return [(e, v) for e, v in files if e.key in kept]


def _reads(fs: Owner, search: Search, index: ContentIndex,
           listed: Iterable[tuple[Entry, Version | None]]) -> Iterator[Read]:
    wanted = needle_grams(search.pattern)
    shards: dict[str, Loaded] = {}
    seen: set[str] = set()
    used: list[str] = []
    it = iter(listed)
    while batch := list(itertools.islice(it, BATCH)):
        seen.update(e.key for e, _ in batch)
        taken: list[tuple[Entry, Version | None]] = []
        for e, v in _visible(fs, search.key, batch):
            if not search.accept(e.key):
                continue
            if e.size is not None and e.size > search.cap:
                search.skip("too_large")
                continue
            taken.append((e, v))
        fresh = {prefix_of(e.key) for e, v in taken if v is not None} - shards.keys()
        shards.update(index.load(fresh))
        plan: list[tuple[Entry, Version | None, Record | None]] = []
        for e, v in taken:
            record = None if v is None else _record(index, shards, e.key, str(v), used)
            plan.append((e, v, record))
        yield from _answer(fs, plan, wanted, shards)
    _gone(shards, search.key, seen)
    index.save(shards)
    index.settled(used)


def _record(index: ContentIndex, shards: dict[str, Loaded], key: str, version: str,
            used: list[str]) -> Record | None:
    loaded = shards[prefix_of(key)]
    name = loaded.name(key)
    record: Record | None = loaded.added.get(name) or loaded.files.get(name)
    if record is not None and record[0] == version:
        return record
    record = index.written(key, version)
    if record is not None:
        loaded.added[name] = record
        used.append(key)
    return record


def _answer(fs: Owner, plan: list[tuple[Entry, Version | None, Record | None]],
            wanted: frozenset[int] | None, shards: dict[str, Loaded]) -> Iterator[Read]:
    """The batch's files in walk order: stand-ins for what the index rules out, reads
    (at once) of the rest, each read indexed under the version it returned."""
    to_read = [e for e, _, r in plan if r is None or _candidate(r, wanted)]
    reads = _read_many(fs.backend, to_read)
    for e, v, record in plan:
        if record is not None and not _candidate(record, wanted):
            yield e.key, _STAND_IN[record[1]], False
            continue
        got = next(reads)[1]
        if isinstance(got, Blob) and v is not None:
            loaded = shards[prefix_of(e.key)]
            name = loaded.name(e.key)
            if (loaded.files.get(name) or ("",))[0] != str(got.version):
                kind, bits = describe(got.data)
                loaded.added[name] = (str(got.version), kind, bits)
        yield e.key, got, None


def _candidate(record: Record, wanted: frozenset[int] | None) -> bool:
    _, kind, bits = record
    if kind is not Kind.TEXT:
        return False
    return wanted is None or bits is None or holds(bits, wanted)


def _read_many(backend: Backend, entries: list[Entry]
               ) -> Iterator[tuple[Entry, Blob | FsError]]:
    if not entries:
        return iter(())
    if isinstance(backend, ObjectStoreBackend):
        return backend.read_many(entries, concurrency=READ_CONCURRENCY)
    return backend.read_many(entries)


def _gone(shards: dict[str, Loaded], key: str, seen: set[str]) -> None:
    """Mark the records of files the walk no longer lists (deleted, moved away), in the
    shards whose every file it lists."""
    for loaded in shards.values():
        if loaded.covered_by(key):
            base = f"{loaded.prefix}/" if loaded.prefix else ""
            loaded.gone.update(n for n in loaded.files if base + n not in seen)
