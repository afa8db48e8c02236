"""A chunked read pinned to one generation.

The first ranged GET tells the generation and the full size (``X-Goog-Generation``,
``Content-Range``). Every later range asks for that generation explicitly
(``generation=G``): if the object was replaced or deleted meanwhile, GCS answers 404 instead
of silently serving bytes of a newer object, so a stream never mixes two versions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from fsseam.errors import ErrorCode, FsError
from fsseam.versions import Version

from ._client import GcsClient, Media

__all__ = ["GcsReadStream"]


class GcsReadStream:
    def __init__(
        self,
        client: GcsClient,
        name: str,
        key: str,
        first: Media,
        chunk_size: int,
        version: Version,
        on_error: Callable[[BaseException], FsError],
    ) -> None:
        self._client = client
        self._name = name
        self._key = key
        self._first: Media | None = first
        self._chunk_size = chunk_size
        self._version = version
        self._on_error = on_error
        self.size: int | None = first.total_size
        self._closed = False

    @property
    def version(self) -> Version:
        return self._version

    def chunks(self) -> Iterator[bytes]:
        first, self._first = self._first, None
        if first is None:
            raise FsError(ErrorCode.FS_INVALID_ARGUMENT, "this stream was already consumed.")
        if first.data:
            yield first.data
        offset = len(first.data)
        size = first.total_size if first.total_size is not None else offset
        while offset < size and not self._closed:
            end = min(offset + self._chunk_size, size)
            try:
                media = self._client.get_media(
                    self._name, start=offset, end=end, generation=self._version.value
                )
            except FileNotFoundError as e:
                raise FsError(
                    ErrorCode.FS_STALE,
                    f"/{self._key} changed or was deleted while it was being read; read it "
                    "again.",
                    path=self._key,
                ) from e
            except Exception as e:
                raise self._on_error(e) from e
            if not media.data:
                raise FsError(
                    ErrorCode.FS_BACKEND,
                    f"storage returned no bytes at offset {offset} of /{self._key}.",
                    path=self._key,
                )
            yield media.data
            offset += len(media.data)

    def close(self) -> None:
        # Each range is its own request; there is no connection to release.
        self._closed = True
