"""A chunked read of one object, every range pinned to the version of the first.

The first range is fetched when the stream is opened (so a missing object fails there, and
the version and the whole size are known up front). Every later range asks the store for
that version only (S3: ``If-Match`` with the ETag; GCS: ``generation=``), so an object
replaced mid-read fails with FS_STALE, or, where the store still keeps the old version,
goes on with the old bytes: a stream never splices two versions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from ...versions import Version
from . import messages

__all__ = ["PinnedRangeStream", "RangeGet"]

RangeGet = Callable[[int, int], bytes]
"""(start, end) -> the bytes ``[start, end)`` of the pinned version; raises FsError."""


class PinnedRangeStream:
    def __init__(
        self,
        key: str,
        version: Version,
        size: int,
        first: bytes,
        chunk_size: int,
        get_range: RangeGet,
    ) -> None:
        self.key = key
        self.size: int | None = size
        self._version = version
        self._first: bytes | None = first
        self._chunk_size = chunk_size
        self._get_range = get_range
        self._closed = False

    @property
    def version(self) -> Version | None:
        return self._version

    def chunks(self) -> Iterator[bytes]:
        first, self._first = self._first, None
        if first is None:
            return
        size = self.size or 0
        offset = len(first)
        if first:
            yield first
        while offset < size and not self._closed:
            end = min(offset + self._chunk_size, size)
            data = self._get_range(offset, end)
            if not data:
                raise messages.stream_ended(self.key, offset, size)
            offset += len(data)
            yield data

    def close(self) -> None:
        # Every range is read whole when fetched: there is no open connection to release.
        self._closed = True
