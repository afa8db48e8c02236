"""Requests in flight together: reads started on the store library's own event loop where
the client can (``start_read``), else a bounded pool of threads, each waiting on one."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import TypeVar

from ...errors import FsError
from ..base import Blob, Entry

__all__ = ["READ_MANY_CONCURRENCY", "READ_MANY_WINDOW_BYTES", "InFlight", "Waiting",
           "answer_of", "concurrently", "read_many"]

T = TypeVar("T")

READ_MANY_CONCURRENCY = 16
READ_MANY_WINDOW_BYTES = 64 << 20


Waiting = Callable[[], Blob | FsError]
"""A read in flight: calling it waits for its answer."""


class InFlight:
    """Reads started and not yet taken: at most ``concurrency`` of them and at most
    ``window_bytes`` of their known sizes. Each is started on the store library's event
    loop where the backend can (``start``: its ``start_read``), else submitted to a bounded
    pool of threads, each waiting on one."""

    def __init__(self, read: Callable[[str], Blob], concurrency: int,
                 window_bytes: int = READ_MANY_WINDOW_BYTES,
                 start: Callable[[str], Callable[[], Blob] | None] | None = None) -> None:
        self._read = read
        self._start = start
        self._concurrency = concurrency
        self._window = window_bytes
        self._pool: ThreadPoolExecutor | None = None
        self._pending = 0
        self._bytes = 0

    def room(self) -> bool:
        return self._pending < self._concurrency and self._bytes < self._window

    def start(self, entry: Entry) -> Waiting:
        self._pending += 1
        self._bytes += entry.size or 0
        if self._start is not None:
            try:
                started = self._start(entry.key)
            except FsError as e:
                return partial(_answer, e)
            if started is not None:
                return partial(answer_of, started)
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self._concurrency, thread_name_prefix="fsseam-read")
        return self._pool.submit(answer_of, partial(self._read, entry.key)).result

    def take(self, entry: Entry, waiting: Waiting) -> Blob | FsError:
        got = waiting()
        self._pending -= 1
        self._bytes -= entry.size or 0
        return got

    def close(self) -> None:
        """The reads not started are dropped and those in flight are not waited for: each
        ends on its own (its thread, or the loop), its answer unread. A caller closing
        early (a search out of time) so waits for no request past the one it waited on."""
        if self._pool is not None:
            self._pool.shutdown(wait=not self._pending, cancel_futures=True)


def answer_of(read: Callable[[], Blob]) -> Blob | FsError:
    """What ``read`` returns, or the FsError it raises (a read on a thread of the pool is
    this call)."""
    try:
        return read()
    except FsError as e:
        return e


def _answer(err: FsError) -> FsError:
    return err


def read_many(
    read: Callable[[str], Blob], entries: Iterable[Entry], *, concurrency: int,
    window_bytes: int, start: Callable[[str], Callable[[], Blob] | None] | None = None,
) -> Iterator[tuple[Entry, Blob | FsError]]:
    """Whole objects, one GET each, ``concurrency`` in flight (:class:`InFlight`), yielded
    in the order given (a search shows results in path order) with at most
    ``window_bytes`` of known size fetched ahead, so memory stays bounded whatever the
    number of objects."""
    reads = InFlight(read, concurrency, window_bytes, start)
    pending: deque[tuple[Entry, Waiting]] = deque()
    try:
        for entry in entries:
            while pending and not reads.room():
                done, waiting = pending.popleft()
                yield done, reads.take(done, waiting)
            pending.append((entry, reads.start(entry)))
        while pending:
            done, waiting = pending.popleft()
            yield done, reads.take(done, waiting)
    finally:
        reads.close()


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

