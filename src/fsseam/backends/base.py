"""The backend contract: a handful of typed methods, nothing else.

A backend is bound to one storage and one root. Every method takes a *key*: a path
relative to the root, ``/``-separated, without leading ``/`` (``""`` is the root itself).
The seam has already checked that the key stays inside the root; the backend only
translates keys to storage paths, mints versions and performs conditional writes.

Errors: every method raises :class:`fsseam.errors.FsError` (a failed precondition is the
subclass :class:`fsseam.errors.Conflict`); storage exceptions never escape.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from ..versions import Capabilities, Precondition, Version

__all__ = ["Backend", "Blob", "Entry", "ReadStream", "Stat"]


class Blob(BaseModel):
    """Bytes and the version of exactly those bytes, from one round trip."""

    model_config = ConfigDict(frozen=True)
    data: bytes
    version: Version


class Stat(BaseModel):
    model_config = ConfigDict(frozen=True)
    key: str
    kind: Literal["file", "directory"]
    size: int | None = None


class Entry(BaseModel):
    """One child of a listed directory."""

    model_config = ConfigDict(frozen=True)
    key: str
    name: str
    kind: Literal["file", "directory"]
    size: int | None = None


class ReadStream(Protocol):
    """An open, version-pinned read of one object, consumed chunk by chunk.

    ``version`` is known up front where the storage says it with the first response (S3,
    GCS, or a local file whose digest is cached); otherwise it is ``None`` until
    ``chunks()`` has been consumed to the end (the digest is computed as the bytes pass).
    Every chunk comes from the same version: a remote stream pins later ranges to it.
    """

    size: int | None

    @property
    def version(self) -> Version | None: ...

    def chunks(self) -> Iterator[bytes]: ...

    def close(self) -> None: ...


@runtime_checkable
class Backend(Protocol):
    """What every storage adapter implements."""

    capabilities: Capabilities
    root: str
    """The root as the storage names it (``/abs/dir``, ``bucket/prefix``)."""

    @classmethod
    def from_url(
        cls, url: str, storage_options: dict[str, Any], fs: Any | None = None
    ) -> Backend:
        """Build the adapter for ``url``, or over the given fsspec filesystem instance."""
        ...

    def resolve(self, key: str) -> str:
        """The canonical key of ``key`` (symlinks followed where the storage has them).

        Raises FS_OUTSIDE_ROOT when the target, or the parent of a missing target, lies
        outside the root.
        """
        ...

    def read(self, key: str) -> Blob:
        """The whole object and its version, in one round trip."""
        ...

    def open_read(self, key: str, chunk_size: int = 1 << 20) -> ReadStream:
        """A chunked read, for windows of objects too large to hold in memory."""
        ...

    def stat(self, key: str) -> Stat:
        """File or directory (raises FS_NOT_FOUND)."""
        ...

    def write(self, key: str, data: bytes, precondition: Precondition) -> Version:
        """Write ``data`` iff ``precondition`` holds, atomically where capabilities say so.

        Returns the new version. A failed precondition raises Conflict and changes nothing.
        """
        ...

    def list(self, key: str) -> list[Entry]:
        """The direct children of a directory, sorted by name."""
        ...

    def delete(self, key: str) -> None:
        """Remove a file (raises FS_NOT_FOUND)."""
        ...
