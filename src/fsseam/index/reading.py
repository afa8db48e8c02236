"""The files of an indexed grep, in walk order: what the index rules out stands for itself,
the rest is read, several at once, across the whole walk.

The walk's batches are planned one after the other (:func:`plan`) into one stream of
steps; the reads of that stream are kept in flight over batch ends, so a batch's last
reads overlap the next one's first instead of every batch waiting on its slowest read.
How far the plan runs ahead of the search is bounded three ways: reads in flight, bytes of
known size fetched ahead, and ``STEPS_AHEAD`` steps planned (a warm grep reads one file in
a hundred: without that bound the plan would run through the whole walk to find its reads).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from typing import Protocol

from ..backends.base import Backend, Blob, Entry
from ..backends.objectstore.parallel import READ_MANY_CONCURRENCY, InFlight, Waiting
from ..errors import FsError
from ..versions import Version
from .grams import holds
from .keeper import ContentIndex, Loaded, Record, describe
from .shards import Kind, prefix_of

__all__ = ["STEPS_AHEAD", "Left", "Read", "Step", "in_order", "plan"]

STEPS_AHEAD = 2048
"""Files planned ahead of the one the search takes: two walk batches."""

Read = tuple[str, Blob | bytes | FsError, bool | None]
Step = tuple[Entry, Version | None, Record | None, bool]
"""A file to search: its entry, listed version, index record, and whether it is read."""
_STAND_IN = {Kind.TEXT: b"", Kind.BINARY: b"\x00", Kind.NOT_UTF8: b"\xff"}


class Left(str):
    """A mark in the steps: the walk has listed every file before this key. When the search
    has taken every step before the mark, the shards the walk has left are complete."""


class Search(Protocol):
    """What of a grep call the plan asks (``fsseam.seam.finding.GrepCall``)."""

    cap: int

    def accept(self, k: str) -> bool: ...

    def skip(self, why: str) -> None: ...


def plan(search: Search, index: ContentIndex, shards: dict[str, Loaded],
         files: list[tuple[Entry, Version | None]], wanted: frozenset[int] | None,
         used: list[str]) -> Iterator[Step]:
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


def in_order(backend: Backend, steps: Iterator[Step | Left], shards: dict[str, Loaded],
             concurrency: int | None, left: Callable[[Left], None],
             start: Callable[[str], Callable[[], Blob] | None] | None = None
             ) -> Iterator[Read]:
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
    order: deque[tuple[Step | Left, Waiting | None]] = deque()
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


def _start(reads: InFlight, step: Step | Left) -> Waiting | None:
    if isinstance(step, Left) or not step[3]:
        return None
    return reads.start(step[0])


def _learn(loaded: Loaded, key: str, blob: Blob) -> None:
    name = loaded.name(key)
    version = str(blob.version)
    if (loaded.files.get(name) or ("",))[0] != version:
        loaded.added[name] = (version, *describe(blob.data))
