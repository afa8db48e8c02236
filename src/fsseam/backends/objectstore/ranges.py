"""The rest of a long walk listed as several name ranges at once.

A listing comes a page at a time and each page names the next, so a walk of N names is
N / 1,000 round trips one after the other: at 20 ms and a store's own time per page, a
second for 10,000 files, the longest path of a warm indexed grep. A client that lists
from a place in the name order (its ``list_objects_after``, where it says ``lists_after``)
lets the walk be cut once its first page says there is more: directories below the walk
(one page of a listing with a delimiter, a level or two down, about where the walk is)
give up to ``RANGES - 1`` boundaries after the last name listed, and the ranges between
them are listed at once, each at most ``PAGES_AHEAD`` pages ahead of the walk, their
names handed on in order.

The ranges cut the name order itself, whatever the boundaries are: the walk gives exactly
the names, and in the order, of one listing followed page by page. A boundary only decides
how the work is shared, so a poor one (a directory holding most of the files) costs time,
never a name. The cost in requests: the delimiter listings (one page a level, at most
``LEVELS``) and each range's last page, which is seldom full.
"""

from __future__ import annotations

import itertools
import os
import queue
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from .client import ListedObject, ObjectClient

__all__ = ["LEVELS", "PAGES_AHEAD", "RANGES", "boundaries", "listed_after"]

RANGES = 8
"""Ranges listed at once, each one request in flight."""
PAGES_AHEAD = 2
"""Pages a range lists before the walk reaches them: memory holds at most
``RANGES * PAGES_AHEAD`` pages of names ahead of the walk, whatever the walk's size."""
LEVELS = 3
"""Directory levels looked at for boundaries: the walk's own, then the directory the walk
is in, and the one below that."""

_Item = list[ListedObject] | Exception | None
"""What a range hands on: a page's names in the range, what its listing raised, or None
at its end."""


def boundaries(client: ObjectClient, prefix: str, after: str) -> list[str]:
    """Up to ``RANGES - 1`` directory prefixes (each ending with ``/``) below ``prefix``
    that sort after ``after`` (a name listed), in order: where the rest of the walk is cut.

    A level's directories after ``after`` are whole ranges of names; when a level has too
    few, the directory ``after`` is in is looked into (a tree whose files sit in one top
    directory, ``src/``, is cut among that one's directories)."""
    found: set[str] = set()
    level = prefix
    for _ in range(LEVELS):
        # The store's own page size, not the walk's: a level's directories are a few
        # names, and a page of a thousand finds the boundaries a page of three would not.
        page = client.list_objects(level, delimiter="/")
        found.update(p for p in page.prefixes if p > after and p.startswith(level))
        inside = [p for p in page.prefixes if after.startswith(p) and len(p) > len(level)]
        if len(found) >= RANGES - 1 or not inside:
            break
        level = inside[0]
    ordered = sorted(found)
    if len(ordered) <= RANGES - 1:
        return ordered
    step = len(ordered) / (RANGES - 1)  # evenly among them: their sizes are not known
    return [ordered[int(i * step)] for i in range(RANGES - 1)]


def listed_after(client: ObjectClient, prefix: str, after: str, cuts: list[str],
                 limit: int | None) -> Iterator[ListedObject]:
    """The names below ``prefix`` after ``after``, in order: the ranges ``(after,
    cuts[0])``, ``[cuts[0], cuts[1])`` ... ``[cuts[-1], end)`` listed at once. A range's
    listing that fails raises here when the walk reaches it (after every name before)."""
    bounds = [after, *cuts, None]
    ranges = [_Range(lo, hi, first=i == 0) for i, (lo, hi)
              in enumerate(itertools.pairwise(bounds)) if lo is not None]
    stop = threading.Event()
    pool = ThreadPoolExecutor(len(ranges), thread_name_prefix="fsseam-list")
    try:
        for r in ranges:
            pool.submit(r.run, client, prefix, limit, stop)
        for r in ranges:
            while (item := r.take()) is not None:
                if isinstance(item, Exception):
                    raise item
                yield from item
    finally:
        # Closed early (a search out of time) or failed: the ranges still listing stop
        # before their next page (each is woken if it waits for room).
        stop.set()
        for r in ranges:
            r.room.release(PAGES_AHEAD)
        pool.shutdown(wait=False, cancel_futures=True)


@dataclass
class _Range:
    """Names ``lo < name < hi`` (``lo <= name`` but for the first range, whose ``lo`` was
    listed already); ``hi`` None: to the walk's end."""

    lo: str
    hi: str | None
    first: bool
    pages: queue.SimpleQueue[_Item] = field(default_factory=queue.SimpleQueue)
    room: threading.Semaphore = field(
        default_factory=lambda: threading.Semaphore(PAGES_AHEAD))
    """A page is asked for only with room for it: taken before the request, given back
    when the walk takes the page (so handing on never waits)."""

    def wanted(self, name: str) -> bool:
        above = name > self.lo if self.first else name >= self.lo
        return above and (self.hi is None or name < self.hi)

    def take(self) -> _Item:
        item = self.pages.get()
        self.room.release()
        return item

    def run(self, client: ObjectClient, prefix: str, limit: int | None,
            stop: threading.Event) -> None:
        # A boundary ``d/`` is asked for from ``d``, below it: S3's bound is exclusive,
        # and an object named ``d/`` itself (a directory marker) is in this range.
        after = self.lo if self.first else self.lo[:-1]
        # Every name between two that start alike starts so too: the narrower prefix
        # spares a store that filters by prefix first (fake-gcs-server's time per page
        # grows with the names under the prefix, not with the page).
        if self.hi is not None:
            prefix = os.path.commonprefix([self.lo, self.hi])  # noqa: RUF071 (characters)
        token: str | None = None
        try:
            while True:
                self.room.acquire()
                if stop.is_set():
                    return
                page = client.list_objects_after(prefix, after=after, end=self.hi,
                                                 token=token, limit=limit)
                past = self.hi is not None and any(o.name >= self.hi for o in page.objects)
                token = page.next_token
                self.pages.put([o for o in page.objects if self.wanted(o.name)])
                if past or not token:
                    break
        except Exception as e:  # handed on, raised in the walk's thread
            self.pages.put(e)
            return
        self.pages.put(None)
