"""The file objects the guarded filesystem opens: a read of one version, held whole; and a
write buffered in memory, committed whole on close as one guarded write (or discarded)."""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from types import TracebackType
from typing import Any, Literal

from ..versions import Version

__all__ = ["Commit", "ReadFile", "WriteFile"]

Commit = Callable[[bytes], Version]
"""Writes the whole new content (a guarded write) and returns the version it made."""


class ReadFile(io.BytesIO):
    """One version of a file, read whole when opened: every read and seek sees the same
    bytes, whatever changes the file meanwhile (``version`` names them)."""

    def __init__(self, fs: Any, path: str, data: bytes, version: Version) -> None:
        super().__init__(data)
        self.fs = fs
        self.path = path
        self.version = version

    @property
    def mode(self) -> str:
        return "rb"

    @property
    def size(self) -> int:
        return len(self.getbuffer())

    def writable(self) -> bool:
        return False


class WriteFile(io.BytesIO):
    """A whole-file write: bytes are buffered here and written on ``close`` by ``commit``
    (a conditional or create-only write through ``ctx.fs``). Leaving a ``with`` block by
    an exception, closing while one is raised, :meth:`discard`, or dropping the object
    unclosed writes nothing."""

    def __init__(self, fs: Any, path: str, mode: Literal["wb", "xb", "ab"], commit: Commit,
                 start: bytes = b"") -> None:
        super().__init__()
        self.fs = fs
        self.path = path
        self._mode = mode
        self.version: Version | None = None
        self._commit: Commit | None = commit
        if start:
            self.write(start)

    @property
    def mode(self) -> str:
        return self._mode

    def readable(self) -> bool:
        return False

    def read(self, size: int | None = -1) -> bytes:
        raise io.UnsupportedOperation("read")

    def discard(self) -> None:
        """Close without writing anything."""
        self._commit = None
        super().close()

    def commit(self) -> None:
        """Write the buffer now (``close`` does it)."""
        self.close()

    def close(self) -> None:
        if self.closed:
            return
        commit, self._commit = self._commit, None
        if commit is None or sys.exc_info()[1] is not None:
            # Closed while an exception propagates (a text wrapper's or a library's cleanup
            # inside a failed ``with`` block): the buffer may hold half a file.
            super().close()
            return
        try:
            self.version = commit(self.getvalue())
        finally:
            super().close()

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        if kind is not None:
            self.discard()
        else:
            self.close()

    def __del__(self) -> None:
        # An unclosed write is abandoned, never committed by the garbage collector.
        self._commit = None
