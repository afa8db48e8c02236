"""The reads of a grep through the content index.

The walk with versions lists every file below the search (the only requests made for the
files the index holds); the shards of their directories are fetched at once; a file the
index holds at its listed version is read only when its 4-grams may hold the pattern's,
and stands for itself otherwise (bytes that make the search count it as it would have,
without a match: text, binary or not UTF-8); every other file is read, and indexed.
Candidates are read concurrently (:mod:`.reading`) and searched as any read file is, so
what is shown was always confirmed on the file's bytes.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Protocol

from ..backends.base import Backend, Entry
from ..errors import FsError
from ..events import ListEvent
from ..gate import Gate
from ..grep import Pattern
from ..paths import display
from ..versions import Version
from .grams import needle_grams
from .keeper import PLUGIN_NAME, ContentIndex, Loaded
from .reading import Left, Read, Step, in_order, plan
from .shards import prefix_of

__all__ = ["READ_CONCURRENCY", "index_of", "indexed_reads"]

READ_CONCURRENCY = 64
"""Candidate reads in flight: each is one round trip the search waits on."""
AHEAD = 4
"""Batches of the walk listed ahead of the one planned, their shards fetched at once (a
batch's fetch no longer waits for the one before). The listing itself lists several
ranges at once where the store allows it; the shards then are the chain a warm grep waits
on, a round trip per batch unless several batches' are in flight. Memory holds ``AHEAD
+ 1`` batches of 1,000 entries and their shards."""
SAVE_CONCURRENCY = 1
"""Calls storing the shards of directories the walk has left, under way while the walk
goes on (each writes its shards at once). One: a batch's writes overlap the next batch's
reads, and memory holds one batch's shards being stored beside the walk's."""

_Batch = tuple[list[tuple[Entry, Version | None]], dict[str, Loaded]]
"""A batch of the walk: what was listed, and the shards fetched for it."""
_Listed = tuple[list[tuple[Entry, Version | None]], "Future[dict[str, Loaded]]"]
"""A batch listed, its shards on their way."""


class Owner(Protocol):
    """What of ``ctx.fs`` the index reads through (``fsseam.seam.core.Core``)."""

    owner: str
    gate: Gate

    @property
    def backend(self) -> Backend: ...


class Search(Protocol):
    """What of a grep call the index needs (``fsseam.seam.finding._Search``)."""

    key: str
    pattern: Pattern
    cap: int
    walk_failed: FsError | None

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
    index = index_of(fs.gate)
    if index is None:
        return None
    listed = fs.backend.walk_versioned(search.key)
    if listed is None:
        return None
    try:
        head = list(itertools.islice(listed, 1))
    except FsError as err:
        search.walk_failed = err  # the plain path takes it from here, not listing again
        return None
    return _reads(fs, search, index, itertools.chain(head, listed), batch_size)


def _visible(fs: Owner, key: str, batch: list[tuple[Entry, Version | None]]
             ) -> list[tuple[Entry, Version | None]]:
    files = [(e, v) for e, v in batch if e.kind == "file"]
    if not fs.gate.hooked("fs/list"):
        return files
    event = ListEvent(owner=fs.owner, key=key, path=display(key), operation="walk",
                      entries=[e for e, _ in files])
    fs.gate.dispatch(event)
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
    ahead = _Ahead(index, listed, batch_size)
    saver = _Saver(index)
    finished = False

    def left(at: Left) -> None:
        # A listing comes in key order, so the files of a shard's directory come
        # together: once the search has taken every file before ``at``, the shards the
        # walk has left are stored and let go, and memory holds only the shards of the
        # directories being walked, whatever the size of the prefix.
        saver.submit(_close(search.key, shards, at))

    try:
        steps = _steps(fs, search, index, ahead, shards, wanted, used)
        yield from in_order(fs.backend, steps, shards, concurrency, left,
                            fs.backend.start_read)
        saver.submit(_close(search.key, shards, None))
        saver.wait()
        index.settled(used)
        finished = True
    finally:
        ahead.close()
        saver.close(wait=finished)


def _steps(fs: Owner, search: Search, index: ContentIndex, ahead: _Ahead,
           shards: dict[str, Loaded], wanted: frozenset[int] | None, used: list[str]
           ) -> Iterator[Step | Left]:
    """The walk's batches as one stream of steps, a mark after each batch."""
    while (got := ahead.next()) is not None:
        batch, loaded = got
        files = _visible(fs, search.key, batch)  # the hook sees a batch when it is planned
        ahead.advance()  # the next batch is listed while this one is read
        for prefix, fetched in loaded.items():
            shards.setdefault(prefix, fetched)  # never over one this grep added to
        missing = {prefix_of(e.key) for e, v in files if v is not None} - shards.keys()
        shards.update(index.load(missing))  # (only a listing out of key order)
        for e, _ in batch:
            shard = shards.get(prefix_of(e.key))
            if shard is not None:
                shard.seen.add(shard.name(e.key))
        yield from plan(search, index, shards, files, wanted, used)
        yield Left(batch[-1][0].key)


class _Saver:
    """Shards stored while the walk goes on: a grep waits for its shard writes at the end,
    not once per directory it leaves (unless ``SAVE_CONCURRENCY`` calls are under way
    already). Only the writes under way are held."""

    def __init__(self, index: ContentIndex) -> None:
        self._index = index
        self._pool: ThreadPoolExecutor | None = None
        self._running: list[Future[None]] = []

    def submit(self, shards: dict[str, Loaded]) -> None:
        if not any(s.added or s.gone for s in shards.values()):
            return  # nothing to store: no thread, no request
        if self._pool is None:
            self._pool = ThreadPoolExecutor(SAVE_CONCURRENCY,
                                            thread_name_prefix="fsseam-index-save")
        self._running = [f for f in self._running if not f.done()]
        if len(self._running) >= SAVE_CONCURRENCY:
            # The walk waits for the oldest write rather than queue more: memory holds at
            # most this many batches' worth of shards being stored.
            self._running.pop(0).result()
        self._running.append(self._pool.submit(self._index.save, shards))

    def wait(self) -> None:
        for save in self._running:
            save.result()  # (save never raises: a shard not stored is read next time)

    def close(self, *, wait: bool) -> None:
        # Closed early (out of time): the shard writes under way land on their own.
        if self._pool is not None:
            self._pool.shutdown(wait=wait, cancel_futures=False)


class _Ahead:
    """The walk ``AHEAD`` batches ahead of the search: the next batches are listed on a
    thread of their own (the walk is one iterator) and each one's shards fetched as soon as
    it is listed, while the search plans and reads the current one. Never further.

    The shards are those of every listed file with a version but the index's own: which
    files the listing hook hides is asked when the plan takes the batch (the hook sees the
    batches in the walk's order, a little ahead of the search, as without the index), so a
    directory a plugin hides whole costs the fetch of its shard."""

    def __init__(self, index: ContentIndex, listed: Iterable[tuple[Entry, Version | None]],
                 batch_size: int) -> None:
        self._index = index
        self._it = iter(listed)
        self._size = batch_size
        self._asked: set[str] = set()
        self._lister = ThreadPoolExecutor(1, thread_name_prefix="fsseam-index-walk")
        self._loader = ThreadPoolExecutor(AHEAD, thread_name_prefix="fsseam-index-load")
        self._next: deque[Future[_Listed | None]] = deque([self._lister.submit(self._take)])
        self._ended = False

    def _take(self) -> _Listed | None:
        batch = list(itertools.islice(self._it, self._size))  # (after the end: [] again)
        if not batch:
            return None
        needed = {prefix_of(e.key) for e, v in batch
                  if v is not None and e.kind == "file" and not self._index.reserved(e.key)}
        # The files of a shard's directory come together (key order): a shard the last
        # batch asked for is the search's already. Root files ("") come between
        # directories: the search keeps that shard to the end, it is asked for once.
        fresh = needed - self._asked
        self._asked = needed | (self._asked & {""})
        return batch, self._loader.submit(self._index.load, fresh)

    def next(self) -> _Batch | None:
        got = self._next.popleft().result()
        self._ended = got is None
        return None if got is None else (got[0], got[1].result())

    def advance(self) -> None:
        """Start listing the batches after the one taken: called once the search has made
        what it keeps of that one (so the two batches' transient lists do not pile up)."""
        while not self._ended and len(self._next) < AHEAD:
            self._next.append(self._lister.submit(self._take))

    def close(self) -> None:
        # Not waited for: a grep out of time returns while the next batches' listing or
        # shard fetches are still under way; they end on their own threads, unread.
        self._lister.shutdown(wait=False, cancel_futures=True)
        self._loader.shutdown(wait=False, cancel_futures=True)


def _close(key: str, shards: dict[str, Loaded], at: str | None) -> dict[str, Loaded]:
    """Let go of the shards the walk has left (all of them when ``at`` is None): those
    whose every file sorts before ``at``; returns them, to be stored. Shards of later
    directories, fetched for the batches planned ahead, stay."""
    done = [p for p in shards
            if at is None or (p and not at.startswith(p + "/") and p + "/" < at)]
    finished = {p: shards.pop(p) for p in done}
    _gone(finished, key)
    return finished


def _gone(shards: dict[str, Loaded], key: str) -> None:
    """Mark the records of files the walk no longer lists (deleted, moved away), in the
    shards whose every file it lists."""
    for loaded in shards.values():
        if loaded.covered_by(key):
            loaded.gone.update(n for n in loaded.files if n not in loaded.seen)
