"""The reads of a grep through the content index.

The walk with versions lists every file below the search (the only requests made for the
files the index holds); the shards of their directories are fetched at once; a file the
index holds at its listed version is read only when its 4-grams may hold the pattern's,
and stands for itself otherwise (bytes that make the search count it as it would have,
without a match: text, binary or not UTF-8); every other file is read, and indexed.
Candidates are read concurrently and searched as any read file is, so what is shown was
always confirmed on the file's bytes.

The walk's batches are planned one after the other (:func:`plan`) into one stream of
planned files; the reads of that stream are kept in flight over batch ends
(:func:`in_order`), so a batch's last reads overlap the next one's first instead of every
batch waiting on its slowest read. How far the plan runs ahead of the search is bounded
three ways: reads in flight, bytes of known size fetched ahead, and ``STEPS_AHEAD`` files
planned (a warm grep reads one file in a hundred: without that bound the plan would run
through the whole walk to find its reads).
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Protocol

from ..backends.base import Backend, Blob, Entry
from ..backends.objectstore.parallel import READ_MANY_CONCURRENCY, InFlight, Waiting
from ..branches.layout import PREFIX
from ..errors import FsError
from ..events import ListEvent
from ..gate import Gate
from ..grep import FileRead, Pattern
from ..ignores import Ignores
from ..paths import display
from ..versions import Version
from .grams import holds, needle_grams
from .keeper import PLUGIN_NAME, ContentIndex, Loaded, Record, describe
from .shards import Kind, prefix_of

BRANCHES_FOLDER = PREFIX + "/"
"""Branch objects (blobs, manifests) beside the files: no file of main, never indexed."""

__all__ = ["AHEAD", "READ_CONCURRENCY", "STEPS_AHEAD", "Left", "PlannedFile", "in_order",
           "index_of", "indexed_reads", "plan"]

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
    """What of a grep call the index needs (``fsseam.seam.finding.GrepCall``)."""

    key: str
    pattern: Pattern
    cap: int
    walk_failed: FsError | None
    ignores: Ignores | None

    def accept(self, k: str) -> bool: ...

    def skip(self, why: str) -> None: ...


def index_of(gate: Gate) -> ContentIndex | None:
    plugin = gate.pm.get_plugin(PLUGIN_NAME)
    return plugin if isinstance(plugin, ContentIndex) else None


def indexed_reads(fs: Owner, search: Search, batch_size: int) -> Iterator[FileRead] | None:
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
    walked: Iterable[tuple[Entry, Version | None]] = itertools.chain(head, listed)
    if search.ignores is not None:
        # Paths below ignored directories never reach the plan (nor their shards a fetch).
        walked = search.ignores.flat(walked)
    return _reads(fs, search, index, walked, batch_size)


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
           ) -> Iterator[FileRead]:
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
           ) -> Iterator[PlannedFile | Left]:
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
                  if v is not None and e.kind == "file" and not self._index.reserved(e.key)
                  and not e.key.startswith(BRANCHES_FOLDER)}
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


# -- the plan and the reads in walk order -----------------------------------------------------
STEPS_AHEAD = 2048
"""Files planned ahead of the one the search takes: two walk batches."""

PlannedFile = tuple[Entry, Version | None, Record | None, bool]
"""A file to search: its entry, listed version, index record, and whether it is read."""
_STAND_IN = {Kind.TEXT: b"", Kind.BINARY: b"\x00", Kind.NOT_UTF8: b"\xff"}


class Left(str):
    """A mark in the steps: the walk has listed every file before this key. When the search
    has taken every step before the mark, the shards the walk has left are complete."""


def plan(search: Search, index: ContentIndex, shards: dict[str, Loaded],
         files: list[tuple[Entry, Version | None]], wanted: frozenset[int] | None,
         used: list[str]) -> Iterator[PlannedFile]:
    """The steps of one batch's ``files``, one at a time as the reads ask for them: the
    search decides each (its time may have run out) just before it would be read."""
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


def _candidate(record: Record, wanted: frozenset[int] | None) -> bool:
    _, kind, bits = record
    if kind is not Kind.TEXT:
        return False
    return wanted is None or bits is None or holds(bits, wanted)


def in_order(backend: Backend, steps: Iterator[PlannedFile | Left], shards: dict[str, Loaded],
             concurrency: int | None, left: Callable[[Left], None],
             start: Callable[[str], Callable[[], Blob] | None] | None = None
             ) -> Iterator[FileRead]:
    """The files of ``steps`` in walk order: stand-ins for what the index rules out, reads
    (``concurrency`` at once; None: the store's default; started by ``start``, the
    backend's ``start_read``, where it can) of the rest, each read indexed under the
    version it returned; ``left`` is called at each mark once every step before it is
    taken.

    ``steps`` raising (the walk's listing failed, the search's time ran out) ends the plan
    there: the steps planned before it are still taken, then it is raised, as a walk that
    fails after some pages has given them. Closed early (the search stopped), the reads not
    started are dropped and those in flight are left to end on their own."""
    reads = InFlight(backend.read, concurrency or READ_MANY_CONCURRENCY, start=start)
    order: deque[tuple[PlannedFile | Left, Waiting | None]] = deque()
    ended = False
    failed: Exception | None = None
    try:
        while True:
            while not ended and len(order) < STEPS_AHEAD and reads.room():
                try:
                    step = next(steps)
                except StopIteration:
                    ended = True
                except Exception as err:
                    ended, failed = True, err
                else:
                    order.append((step, _start(reads, step)))
            if not order:
                if failed is not None:
                    raise failed
                return
            step, waiting = order.popleft()
            if isinstance(step, Left):
                left(step)
                continue
            e, v, record, _ = step
            if waiting is None:
                assert record is not None  # (a step is read unless it has a record)
                yield e.key, _STAND_IN[record[1]], False
                continue
            blob = reads.take(e, waiting)
            if isinstance(blob, Blob) and v is not None:
                _learn(shards[prefix_of(e.key)], e.key, blob)
            yield e.key, blob, None
    finally:
        reads.close()


def _start(reads: InFlight, step: PlannedFile | Left) -> Waiting | None:
    if isinstance(step, Left) or not step[3]:
        return None
    return reads.start(step[0])


def _learn(loaded: Loaded, key: str, blob: Blob) -> None:
    name = loaded.name(key)
    version = str(blob.version)
    if (loaded.files.get(name) or ("",))[0] != version:
        loaded.added[name] = (version, *describe(blob.data))
