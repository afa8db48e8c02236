"""The file objects the guarded filesystem opens: a read of one version, held whole; and a
write buffered in memory, committed whole on close as one guarded write (or discarded
when the ``with`` block that holds it raised)."""

from __future__ import annotations

import contextlib
import inspect
import io
from collections.abc import Callable
from types import TracebackType
from typing import Any, Literal

from ..versions import Version

__all__ = ["CodecWriteFile", "Commit", "ReadFile", "TextWriteFile", "WriteFile"]

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
    an exception, :meth:`discard`, or dropping the object unclosed writes nothing; so does
    a close made by the exit of a ``with`` block that raised and holds this file through a
    wrapper (fsspec's ``OpenFile``, a library's file handles). Any other ``close`` writes,
    whatever exception is being handled around it (a file written in an ``except``
    block is written)."""

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

    def abandon(self) -> None:
        """Write nothing when this file closes; it stays open (a codec over it may still
        write its trailer while it closes)."""
        self._commit = None

    def discard(self) -> None:
        """Close without writing anything."""
        self.abandon()
        super().close()

    def commit(self) -> None:
        """Write the buffer now (``close`` does it)."""
        self.close()

    def close(self) -> None:
        if self.closed:
            return
        commit, self._commit = self._commit, None
        if commit is None or _closed_by_failed_with():
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


class TextWriteFile(io.TextIOWrapper):
    """Text mode over a :class:`WriteFile` (or a :class:`CodecWriteFile`): leaving its
    ``with`` block by an exception, or dropping it unclosed, writes nothing, as the binary
    file does (a plain wrapper's exit and finalizer close, which would commit)."""

    def abandon(self) -> None:
        """Write nothing when this file closes."""
        buffer: WriteFile | CodecWriteFile = self.buffer  # type: ignore[assignment]
        buffer.abandon()

    def discard(self) -> None:
        """Close without writing anything."""
        self.abandon()
        self.close()

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        if kind is not None:
            self.abandon()
        self.close()

    def __del__(self) -> None:
        # An unclosed write is abandoned, never committed by the garbage collector (nor
        # is a wrapper whose __init__ failed asked anything).
        with contextlib.suppress(ValueError, AttributeError):
            if not self.closed:
                self.abandon()
                self.close()


class CodecWriteFile(io.BufferedIOBase):
    """A compression codec's file over a :class:`WriteFile` (``open(p, "wb",
    compression=...)``): closing it closes the codec, then commits the file under it (a
    codec's own close leaves the file it wraps open); leaving its ``with`` block by an
    exception, or dropping it unclosed, writes nothing. A binary file to libraries that
    ask (pandas); everything else is the codec's."""

    def __init__(self, codec: Any, raw: WriteFile) -> None:
        super().__init__()
        self._codec = codec
        self._raw = raw

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # never the codec's privates (nor a loop before __init__)
            raise AttributeError(name)
        return getattr(self._codec, name)

    @property
    def mode(self) -> str:
        return self._raw.mode

    @property
    def closed(self) -> bool:
        return bool(self._raw.closed)

    def writable(self) -> bool:
        return True

    def readable(self) -> bool:
        return False

    def seekable(self) -> bool:
        return False

    def write(self, data: Any) -> int:
        return int(self._codec.write(data))

    def flush(self) -> None:
        if not self.closed:
            self._codec.flush()

    def tell(self) -> int:
        return int(self._codec.tell())

    def abandon(self) -> None:
        """Write nothing when this file closes."""
        self._raw.abandon()

    def discard(self) -> None:
        """Close without writing anything."""
        self.abandon()
        self.close()

    def close(self) -> None:
        if self.closed:
            return
        try:
            self._codec.close()
        finally:
            self._raw.close()

    def __enter__(self) -> CodecWriteFile:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        if kind is not None:
            self.abandon()
        self.close()

    def __del__(self) -> None:
        # An unclosed write is abandoned, never committed by the garbage collector.
        self._raw.abandon()


# How many frames of closing calls (a wrapper's ``close`` closing the file it holds) are
# followed up to the ``__exit__`` that started them.
_CLOSING_DEPTH = 8


def _closed_by_failed_with() -> bool:
    """Whether this close is a ``with`` block's exit after its body raised, made through a
    wrapper that holds the file (fsspec's ``OpenFile.__exit__`` closing its files, pandas'
    handles): the frames above are ``close`` calls up to an ``__exit__`` that was handed an
    exception. Its own argument says whether the block raised; ``sys.exc_info()`` cannot
    (it is set in every ``except`` block, where a file written and closed is meant)."""
    here = inspect.currentframe()
    frame = here.f_back.f_back if here is not None and here.f_back is not None else None
    try:
        for _ in range(_CLOSING_DEPTH):
            if frame is None:
                return False
            name = frame.f_code.co_name
            if name == "__exit__":
                return _exit_raised(frame)
            if name != "close":
                return False
            frame = frame.f_back
        return False
    finally:
        del here, frame  # frames hold their locals: no cycle through this one


def _exit_raised(frame: Any) -> bool:
    """Whether an ``__exit__(self, kind, value, tb)`` frame (or ``__exit__(self, *args)``)
    was handed an exception."""
    code = frame.f_code
    names = code.co_varnames
    given = [frame.f_locals.get(n) for n in names[1:code.co_argcount]]
    if code.co_flags & inspect.CO_VARARGS:
        extra = frame.f_locals.get(names[code.co_argcount + code.co_kwonlyargcount])
        given.extend(extra if isinstance(extra, tuple) else ())
    return bool(given) and given[0] is not None
