"""Requests in flight together: a bounded pool of threads, each waiting on one request
that the store library runs on its own event loop."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from ...errors import FsError
from ..base import Blob, Entry

__all__ = ["READ_MANY_CONCURRENCY", "READ_MANY_WINDOW_BYTES", "concurrently", "read_many"]

T = TypeVar("T")

READ_MANY_CONCURRENCY = 16
READ_MANY_WINDOW_BYTES = 64 << 20


def read_many(
    read: Callable[[str], Blob], entries: Iterable[Entry], *, concurrency: int,
    window_bytes: int,
) -> Iterator[tuple[Entry, Blob | FsError]]:
    """Whole objects, one GET each, ``concurrency`` in flight, yielded in the order
    given (a search shows results in path order) with at most ``window_bytes`` of known
    size fetched ahead, so memory stays bounded whatever the number of objects.

    A bounded pool of threads, not one per object: each GET is submitted to the store
    library's own event loop, so the threads only wait."""

    def one(key: str) -> Blob | FsError:
        try:
            return read(key)
        except FsError as e:
            return e

    pending: deque[tuple[Entry, Future[Blob | FsError]]] = deque()
    ahead = 0
    pool = ThreadPoolExecutor(concurrency, thread_name_prefix="fsseam-read")
    try:
        for entry in entries:
            while pending and (len(pending) >= concurrency or ahead >= window_bytes):
                done, future = pending.popleft()
                ahead -= done.size or 0
                yield done, future.result()
            pending.append((entry, pool.submit(one, entry.key)))
            ahead += entry.size or 0
        while pending:
            done, future = pending.popleft()
            yield done, future.result()
    finally:
        # Closed early (a search out of time, say): the reads not started are dropped and
        # those in flight are not waited for; each ends on its own thread, its answer
        # unread. A caller so waits for no request past the one it was waiting on.
        pool.shutdown(wait=not pending, cancel_futures=True)


def concurrently(calls: list[Callable[[], T]]) -> list[T]:
    """Run ``calls`` at the same time (one in this thread); results in order, the first
    exception raised. Client calls are thread-safe: each is submitted to the filesystem's
    own event loop."""
    if len(calls) == 1:
        return [calls[0]()]
    with ThreadPoolExecutor(max_workers=len(calls) - 1) as pool:
        rest = [pool.submit(call) for call in calls[1:]]
        first = calls[0]()
        return [first, *(f.result() for f in rest)]

