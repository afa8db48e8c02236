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
from collections import deque
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


def indexed_reads(fs: Owner, search: Search, batch_size: int) -> Iterator[Read] | None:
    """The reads of ``search`` through the workspace's content index, the walk taken
    ``batch_size`` files at a time (the seam's walk batch, which the list hook sees); None
    when it has none, or when ``search.key`` is not a directory (the plain path says what
    it is)."""
    index = index_of(fs._gate)
    walk = fs.extras.walk_versioned
    if index is None or walk is None:
        return None
    listed = walk(search.key)
    try:
        head = list(itertools.islice(listed, 1))
    except FsError:
        return None
    return _reads(fs, search, index, itertools.chain(head, listed), batch_size)


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
           listed: Iterable[tuple[Entry, Version | None]], batch_size: int
           ) -> Iterator[Read]:
    wanted = needle_grams(search.pattern)
    # A literal spends no regex time, so nothing read ahead is wasted: many reads at once.
    # A regex's time may run out, and what is in flight then is fetched for nothing.
    concurrency = READ_CONCURRENCY if search.pattern.literal is not None else None
    shards: dict[str, Loaded] = {}
    used: list[str] = []
    it = iter(listed)
    while batch := list(itertools.islice(it, batch_size)):
        files = _visible(fs, search.key, batch)
        fresh = {prefix_of(e.key) for e, v in files if v is not None} - shards.keys()
        shards.update(index.load(fresh))
        for e, _ in batch:
            loaded = shards.get(prefix_of(e.key))
            if loaded is not None:
                loaded.seen.add(loaded.name(e.key))
        plan = _plan(search, index, shards, files, wanted, used)
        yield from _in_order(fs.backend, plan, shards, concurrency)
        # A listing comes in key order, so the files of a shard's directory come together:
        # once the walk has left it, the shard is stored and let go, and memory holds only
        # the shards of the directories being walked, whatever the size of the prefix.
        _close(index, search.key, shards, batch[-1][0].key)
    _close(index, search.key, shards, None)
    index.settled(used)


def _close(index: ContentIndex, key: str, shards: dict[str, Loaded], at: str | None) -> None:
    """Store and let go of the shards the walk has left (all of them when ``at`` is None):
    those whose directory ``at`` is not below."""
    done = [p for p in shards if at is None or not p or not at.startswith(p + "/")]
    if at is not None:
        done = [p for p in done if p]  # root files come between every directory's
    finished = {p: shards.pop(p) for p in done}
    _gone(finished, key)
    index.save(finished)


Step = tuple[Entry, Version | None, Record | None, bool]
"""A file to search: its entry, listed version, index record, and whether it is read."""


def _plan(search: Search, index: ContentIndex, shards: dict[str, Loaded],
          files: list[tuple[Entry, Version | None]], wanted: frozenset[int] | None,
          used: list[str]) -> Iterator[Step]:
    """The files the search takes, one at a time as the reads ask for them: the search
    decides each (its time may have run out) just before it would be read."""
    for e, v in files:
        if not search.accept(e.key):
            continue
        if e.size is not None and e.size > search.cap:
            search.skip("too_large")
            continue
        record = None if v is None else _record(index, shards, e.key, str(v), used)
        yield e, v, record, record is None or _candidate(record, wanted)


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


def _in_order(backend: Backend, plan: Iterator[Step], shards: dict[str, Loaded],
              concurrency: int | None) -> Iterator[Read]:
    """The files of ``plan`` in walk order: stand-ins for what the index rules out, reads
    (several at once) of the rest, each read indexed under the version it returned."""
    order: deque[Step] = deque()

    def to_read() -> Iterator[Entry]:
        for step in plan:
            order.append(step)
            if step[3]:
                yield step[0]

    reads = _read_many(backend, to_read(), concurrency)
    done: deque[Blob | FsError] = deque()
    while True:
        if not order:
            got = next(reads, None)  # pulls the plan on: stand-ins, then a read
            if got is None and not order:
                return
            if got is not None:
                done.append(got[1])
        e, v, record, read = order.popleft()
        if not read and record is not None:  # (a step is read unless it has a record)
            yield e.key, _STAND_IN[record[1]], False
            continue
        blob = done.popleft() if done else next(reads)[1]
        if isinstance(blob, Blob) and v is not None:
            _learn(shards[prefix_of(e.key)], e.key, blob)
        yield e.key, blob, None


def _learn(loaded: Loaded, key: str, blob: Blob) -> None:
    name = loaded.name(key)
    version = str(blob.version)
    if (loaded.files.get(name) or ("",))[0] != version:
        loaded.added[name] = (version, *describe(blob.data))


def _candidate(record: Record, wanted: frozenset[int] | None) -> bool:
    _, kind, bits = record
    if kind is not Kind.TEXT:
        return False
    return wanted is None or bits is None or holds(bits, wanted)


def _read_many(backend: Backend, entries: Iterator[Entry], concurrency: int | None
               ) -> Iterator[tuple[Entry, Blob | FsError]]:
    if concurrency is not None and isinstance(backend, ObjectStoreBackend):
        return backend.read_many(entries, concurrency=concurrency)
    return backend.read_many(entries)


def _gone(shards: dict[str, Loaded], key: str) -> None:
    """Mark the records of files the walk no longer lists (deleted, moved away), in the
    shards whose every file it lists."""
    for loaded in shards.values():
        if loaded.covered_by(key):
            loaded.gone.update(n for n in loaded.files if n not in loaded.seen)
