"""Reading: a window of a file's lines, and what a path is."""

from __future__ import annotations

from ..errors import ErrorCode, FsError
from ..events import ReadEvent, StatEvent
from ..messages import Reason, Role
from ..outcomes import ReadOutcome, StatOutcome
from ..paths import display
from ..text import LineWindow, check_text, decode
from ..versions import Version
from .core import Core

__all__ = ["read", "show", "stat"]


def read(
    fs: Core, path: str, offset: int, limit: int | None, max_chars: int | None,
    max_line_chars: int | None,
) -> ReadOutcome:
    """Lines ``[offset, offset + limit)`` (1-based) and the version of the file (see
    :meth:`fsseam.seam.Seam.read`)."""
    if offset < 1:
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason="offset_below_one")
    limit = fs.limits.default_read_lines if limit is None else limit
    if limit < 1:
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason="below_one",
                      details={"arg": Role("limit")})
    key = fs.key(path)
    shown = display(key)
    window = LineWindow(shown, offset, limit, max_chars, max_line_chars)
    version, small, complete = _fill(fs, key, window)
    total = window.count if complete else None
    if complete and offset > max(total or 0, 1):
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, path=shown, reason="offset_past_end",
                      details={"requested": offset, "total": total})
    returned = len(window.lines)
    partial = not (complete and offset == 1 and returned == total)
    if complete:
        raw = b"".join(small) if small is not None else None
        if raw is not None and partial:
            # A file small enough to keep is validated whole, so a read reports a
            # non-UTF-8 file even when the invalid bytes lie outside the window. (A
            # window of every line has decoded every byte strictly already.)
            check_text(raw, shown)
        fs._docs.put(key, version, window.format, raw)
    fs._gate.dispatch(
        ReadEvent(owner=fs.owner, key=key, path=shown, version=version, partial=partial)
    )
    # Built from values of the declared types, so not validated again: checking each of
    # the lines a read returns is most of what validation costs (30 us for 2,000).
    return ReadOutcome.model_construct(
        path=shown, lines=window.lines, offset=offset, returned=returned, total=total,
        version=version, partial=partial, cut=window.cut,
    )


def _fill(fs: Core, key: str, window: LineWindow
          ) -> tuple[Version, list[bytes] | None, bool]:
    """Feed the file into ``window``: its version, its bytes when small enough to keep
    (None: not kept), and whether the whole file was read."""
    try:
        stream = fs.backend.open_read(key, fs.limits.read_chunk_bytes)
    except FsError as e:
        raise fs._missing(key, e) from None
    small: list[bytes] | None = []
    complete = False
    try:
        for chunk in stream.chunks():
            window.feed(chunk)
            if small is not None:
                small.append(chunk)
                if window.bytes_seen > fs.limits.doc_cache_bytes // 4:
                    small = None
            if (
                window.window_full
                and stream.version is not None
                and window.bytes_seen >= fs.limits.count_budget_bytes
            ):
                break
        else:
            window.feed(b"", final=True)
            complete = True
    except FsError as e:
        raise fs._missing(key, e) from None
    finally:
        stream.close()
    version = stream.version
    if version is None:  # pragma: no cover - a backend bug
        raise FsError(ErrorCode.FS_BACKEND, path=display(key), reason="no_version")
    return version, small, complete


def stat(fs: Core, path: str) -> StatOutcome:
    key = fs.key(path)
    st = fs.backend.stat(key)
    event = StatEvent(owner=fs.owner, key=key, path=display(key), type=st.kind, size=st.size)
    fs._gate.dispatch(event)
    return StatOutcome(path=display(key), type=st.kind, size=st.size)


def show(fs: Core, path: str) -> str:
    """The whole text of a file as the model sees it (CRLF as LF, no BOM), recorded as this
    owner's read of exactly that version, as a read of the whole file is: what an
    application puts in a prompt counts as read (see :meth:`fsseam.Context.show`)."""
    key = fs.key(path)
    shown = display(key)
    try:
        data, version = fs._load_bytes(key)
    except FsError as e:
        if e.reason != Reason.edit_too_large:
            raise
        raise FsError(ErrorCode.FS_TOO_LARGE, path=shown, reason=Reason.show_too_large,
                      details=e.details) from None
    text = decode(data, shown).view  # a binary file is refused here, before it counts
    fs._observed(key, shown, data, version)
    return text
