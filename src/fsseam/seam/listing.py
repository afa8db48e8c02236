"""Listing: a directory's entries (capped by the output they go to) and walks, each
through the gate's list hook in batches."""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Generic, Literal, TypeVar

from ..backends.base import Entry
from ..events import ListEvent
from ..outcomes import ListEntry, ListOutcome
from ..paths import display
from .core import Core

__all__ = ["WALK_BATCH", "list_entries", "smallest", "walk", "walk_visible"]

T = TypeVar("T")

WALK_BATCH = 1000
"""Walked entries go through the gate's list hook this many at a time."""


def _listing_order(e: Entry) -> tuple[str, str]:
    return e.name, e.kind


def smallest(
    items: Iterable[T], key: Callable[[T], Any], cost: Callable[[T], int], budget: int
) -> tuple[list[T], int]:
    """The first of ``items`` in ``sorted(items, key=key)`` order whose costs add up to
    ``budget`` (all of them if they add up to less; at least one, as a cut output shows at
    least one row), sorted, and how many items there were.

    One pass, holding only those: a heap whose top is the greatest kept item, which leaves
    as soon as the others alone reach the budget."""
    heap: list[_Desc[T]] = []
    total = count = 0
    for item in items:
        count += 1
        k = key(item)
        if total >= budget and heap and not k < heap[0].key:
            continue  # after every item kept: it would leave at once
        c = cost(item)
        heapq.heappush(heap, _Desc(k, c, count, item))
        total += c
        while len(heap) > 1 and total - heap[0].cost >= budget:
            total -= heapq.heappop(heap).cost
    kept = sorted(heap, reverse=True)
    return [d.item for d in kept], count


class _Desc(Generic[T]):
    """A heap item that sorts greatest first (ties: the later item first)."""

    __slots__ = ("cost", "item", "key", "seq")

    def __init__(self, key: Any, cost: int, seq: int, item: T) -> None:
        self.key, self.cost, self.seq, self.item = key, cost, seq, item

    def __lt__(self, other: _Desc[T]) -> bool:
        if self.key == other.key:
            return bool(self.seq > other.seq)
        return bool(other.key < self.key)


def _probe(e: Entry, depth: int) -> ListEntry:
    return ListEntry.model_construct(
        path=display(e.key), type=e.kind, size=e.size, depth=depth,
        target=None if e.target is None else display(e.target),
    )


def _entry(e: Entry, depth: int) -> ListEntry:
    return ListEntry(
        path=display(e.key), type=e.kind, size=e.size, depth=depth,
        target=None if e.target is None else display(e.target),
    )


def visible(fs: Core, key: str, entries: Sequence[Entry], operation: Literal["list", "walk"]
            ) -> Sequence[Entry]:
    """Entries after the gate's list hook (plugins may hide some)."""
    event = ListEvent(owner=fs.owner, key=key, path=display(key), operation=operation,
                      entries=list(entries))
    fs.gate.dispatch(event)
    return event.entries


def list_entries(
    fs: Core, path: str, depth: int, skip: Callable[[ListEntry], bool] | None,
    max_chars: int | None,
) -> ListOutcome:
    """Entries below a directory (see :meth:`fsseam.seam.Seam.list`)."""
    key = fs.key(path)
    out: list[ListEntry] = []
    omitted = more = used = 0

    def children(k: str, level: int) -> Iterator[Entry]:
        nonlocal omitted
        for e in _listed(fs, k):
            # The filter sees each child as a row, which is dropped at once: only the
            # rows kept are validated and held.
            if skip is not None and skip(_probe(e, level)):
                omitted += 1
                continue
            yield e

    def walk_dir(k: str, level: int) -> None:
        nonlocal more, used
        # A row is at least its directory's path, a slash, the name and a newline
        # (escaping only makes it longer).
        base = len(display(k).rstrip("/")) + 2

        def cost(e: Entry) -> int:
            return base + len(e.name)

        if max_chars is None:
            kept = sorted(children(k, level), key=_listing_order)
        else:
            kept, total = smallest(children(k, level), _listing_order, cost, max_chars - used)
            more += total - len(kept)
        for i, e in enumerate(kept):
            if max_chars is not None and used >= max_chars:
                more += len(kept) - i
                return
            out.append(_entry(e, level))
            used += cost(e)
            if e.kind == "directory" and level < depth and (
                max_chars is None or used < max_chars
            ):
                walk_dir(e.key, level + 1)

    walk_dir(key, 1)
    return ListOutcome(path=display(key), entries=out, omitted=omitted, more=more)


def _listed(fs: Core, key: str) -> Iterator[Entry]:
    """The children of a directory, as the storage yields them, through the gate's list
    hook in batches (plugins may hide some)."""
    entries = fs.backend.list_lazy(key)
    batch: list[Entry] = []
    sent = False
    for e in entries:
        batch.append(e)
        if len(batch) >= WALK_BATCH:
            yield from visible(fs, key, batch, "list")
            batch, sent = [], True
    if batch or not sent:
        yield from visible(fs, key, batch, "list")


def walk(fs: Core, path: str) -> Iterator[ListEntry]:
    """Every file (and symlink, never followed) below a directory, in path order."""
    key = fs.key(path)
    batch: list[Entry] = []
    for e in fs.backend.walk(key):
        batch.append(e)
        if len(batch) >= WALK_BATCH:
            yield from (_entry(v, 0) for v in visible(fs, key, batch, "walk"))
            batch = []
    if batch:
        yield from (_entry(v, 0) for v in visible(fs, key, batch, "walk"))


def walk_visible(fs: Core, key: str) -> Iterator[Entry]:
    """The gate-filtered files of a walk (symlinks left out: their targets inside the
    tree are walked themselves)."""
    batch: list[Entry] = []
    for e in fs.backend.walk(key):
        if e.kind != "file":
            continue
        batch.append(e)
        if len(batch) >= WALK_BATCH:
            yield from visible(fs, key, batch, "walk")
            batch = []
    if batch:
        yield from visible(fs, key, batch, "walk")
