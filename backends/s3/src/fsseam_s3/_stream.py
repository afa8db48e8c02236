"""A chunked read of one S3 object, every range pinned to the first response's ETag."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from fsseam.errors import ErrorCode, FsError
from fsseam.versions import Version

__all__ = ["S3ReadStream", "total_size"]

# (first byte, last byte, If-Match) -> (response, bytes)
RangeGet = Callable[[int, int, str], tuple[dict[str, Any], bytes]]


def total_size(resp: dict[str, Any]) -> int:
    """The object's full size: Content-Range's total for a 206, else Content-Length."""
    content_range = resp.get("ContentRange")
    if isinstance(content_range, str) and "/" in content_range:
        total = content_range.rsplit("/", 1)[1]
        if total.isdigit():
            return int(total)
    return int(resp.get("ContentLength") or 0)


class S3ReadStream:
    """The first range is fetched by ``open_read`` (so a missing key fails there and the
    version is known up front); later ranges carry ``If-Match`` with its ETag, so a
    replacement mid-stream fails with FS_STALE instead of splicing two versions."""

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
        self._first = first
        self._chunk_size = chunk_size
        self._get_range = get_range
        self._closed = False

    @property
    def version(self) -> Version | None:
        return self._version

    def chunks(self) -> Iterator[bytes]:
        size = self.size or 0
        offset = len(self._first)
        if self._first:
            yield self._first
        while offset < size and not self._closed:
            last = min(offset + self._chunk_size, size) - 1
            _, data = self._get_range(offset, last, self._version.value)
            if not data:
                raise FsError(
                    ErrorCode.FS_BACKEND,
                    f"/{self.key} ended at byte {offset} of {size} while being read; "
                    "nothing was changed. Read it again.",
                    path=self.key,
                )
            offset += len(data)
            yield data

    def close(self) -> None:
        # Every range is read whole when fetched: there is no open connection to release.
        self._closed = True
