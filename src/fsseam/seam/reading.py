"""Reading: a window of a file's lines (of a PDF's text), an image, and what a path is."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import NamedTuple

from ..errors import ErrorCode, FsError
from ..events import ReadEvent, StatEvent
from ..messages import Reason, Role
from ..outcomes import ImageOutcome, PdfOutcome, ReadOutcome, StatOutcome
from ..paths import display
from ..text import LineWindow, check_text, decode
from ..versions import Version
from . import media
from .core import Core

__all__ = ["read", "show", "stat"]


class _Media(NamedTuple):
    """A whole file that a read shows as an image or as a PDF's text."""

    media_type: str
    data: bytes
    version: Version


def read(
    fs: Core, path: str, offset: int, limit: int | None, max_chars: int | None,
    max_line_chars: int | None, images: bool = False,
) -> ReadOutcome | ImageOutcome:
    """Lines ``[offset, offset + limit)`` (1-based) and the version of the file (see
    :meth:`fsseam.seam.Seam.read`); with ``images``, an image file is returned whole."""
    if offset < 1:
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.offset_below_one)
    limit = fs.limits.default_read_lines if limit is None else limit
    if limit < 1:
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.below_one,
                      details={"arg": Role("limit")})
    key = fs.key(path)
    shown = display(key)
    window = LineWindow(shown, offset, limit, max_chars, max_line_chars)
    try:
        filled = _fill(fs, key, window, images)
    except FsError as e:
        raise _shown_words(e, images, shown) from None
    if isinstance(filled, _Media):
        if filled.media_type == media.PDF:
            return _pdf(fs, key, shown, filled, LineWindow(
                shown, offset, limit, max_chars, max_line_chars))
        return _image(fs, key, shown, filled)
    version, small, complete = filled
    total = window.count if complete else None
    _check_offset(window, complete, shown)
    returned = len(window.lines)
    partial = not (complete and offset == 1 and returned == total)
    if complete:
        raw = b"".join(small) if small is not None else None
        if raw is not None and partial:
            # A file small enough to keep is validated whole, so a read reports a
            # non-UTF-8 file even when the invalid bytes lie outside the window. (A
            # window of every line has decoded every byte strictly already.)
            try:
                check_text(raw, shown)
            except FsError as e:
                raise _shown_words(e, images, shown) from None
        fs.docs.put(key, version, window.format, raw)
    fs.gate.dispatch(
        ReadEvent(owner=fs.owner, key=key, path=shown, version=version, partial=partial)
    )
    # Built from values of the declared types, so not validated again: checking each of
    # the lines a read returns is most of what validation costs (30 us for 2,000).
    return ReadOutcome.model_construct(
        path=shown, lines=window.lines, offset=offset, returned=returned, total=total,
        version=version, partial=partial, cut=window.cut,
    )


def _shown_words(err: FsError, images: bool, shown: str) -> FsError:
    """A file that is not text, in the read tool's words (``images``): what it can show
    besides text, so the model does not try another reading of the same bytes."""
    if images and err.reason == Reason.not_text:
        return FsError(ErrorCode.FS_NOT_TEXT, path=shown, reason=Reason.binary_not_shown,
                       details=err.details)
    return err


def _check_offset(window: LineWindow, complete: bool, shown: str) -> None:
    offset = window.first
    if complete and offset > max(window.count, 1):
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, path=shown, reason=Reason.offset_past_end,
                      details={"requested": offset, "total": window.count})


def _image(fs: Core, key: str, shown: str, found: _Media) -> ImageOutcome:
    # The whole image was shown: an observation of that version, as a full text read is,
    # so a write may replace it and an outside change since is FS_STALE.
    fs.gate.dispatch(
        ReadEvent(owner=fs.owner, key=key, path=shown, version=found.version, partial=False)
    )
    return ImageOutcome(path=shown, media_type=found.media_type, size=len(found.data),
                        version=found.version).with_data(found.data)


def _pdf(fs: Core, key: str, shown: str, found: _Media, window: LineWindow) -> PdfOutcome:
    text, pages = media.pdf_text(found.data, shown, fs.limits)
    window.feed(text.encode("utf-8", "replace"))
    window.feed(b"", final=True)
    _check_offset(window, True, shown)
    returned = len(window.lines)
    partial = not (window.first == 1 and returned == window.count)
    # Never put in the document cache: the text shown is not the file's bytes.
    fs.gate.dispatch(
        ReadEvent(owner=fs.owner, key=key, path=shown, version=found.version, partial=partial)
    )
    return PdfOutcome(
        path=shown, lines=window.lines, offset=window.first, returned=returned,
        total=window.count, version=found.version, partial=partial, cut=window.cut,
        pages=pages,
    )


def _fill(fs: Core, key: str, window: LineWindow, images: bool
          ) -> tuple[Version, list[bytes] | None, bool] | _Media:
    """Feed the file into ``window``: its version, its bytes when small enough to keep
    (None: not kept), and whether the whole file was read. A PDF (an image too, with
    ``images``) is returned whole instead."""
    try:
        stream = fs.backend.open_read(key, fs.limits.read_chunk_bytes)
    except FsError as e:
        raise fs.not_found(key, e) from None
    small: list[bytes] | None = []
    complete = False
    try:
        chunks = iter(stream.chunks())
        head = _head(chunks)
        kind = media.sniff(head)
        if kind is not None and (images or kind == media.PDF):
            data = media.take(stream, head, chunks, kind, media.cap_of(kind, fs.limits),
                              display(key))
            if media.is_media(data):
                return _Media(kind, data, _version(stream.version, key))
            chunks = iter((data,))  # text that only begins like one: read as text
        elif head:
            chunks = itertools.chain((head,), chunks)
        for chunk in chunks:
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
        raise fs.not_found(key, e) from None
    finally:
        stream.close()
    return _version(stream.version, key), small, complete


def _head(chunks: Iterator[bytes]) -> bytes:
    """The first chunks, until they hold enough bytes to tell the file's kind (or end)."""
    parts: list[bytes] = []
    size = 0
    for chunk in chunks:
        parts.append(chunk)
        size += len(chunk)
        if size >= media.HEAD_BYTES:
            break
    return b"".join(parts)


def _version(version: Version | None, key: str) -> Version:
    if version is None:  # pragma: no cover - a backend bug
        raise FsError(ErrorCode.FS_BACKEND, path=display(key), reason=Reason.no_version)
    return version


def stat(fs: Core, path: str) -> StatOutcome:
    key = fs.key(path)
    st = fs.backend.stat(key)
    event = StatEvent(owner=fs.owner, key=key, path=display(key), type=st.kind, size=st.size)
    fs.gate.dispatch(event)
    return StatOutcome(path=display(key), type=st.kind, size=st.size)


def show(fs: Core, path: str) -> str:
    """The whole text of a file as the model sees it (CRLF as LF, no BOM), recorded as this
    owner's read of exactly that version, as a read of the whole file is: what an
    application puts in a prompt counts as read (see :meth:`fsseam.Context.show`)."""
    key = fs.key(path)
    shown = display(key)
    try:
        data, version = fs.load_bytes(key)
    except FsError as e:
        if e.reason != Reason.edit_too_large:
            raise
        raise FsError(ErrorCode.FS_TOO_LARGE, path=shown, reason=Reason.show_too_large,
                      details=e.details) from None
    text = decode(data, shown).view  # a binary file is refused here, before it counts
    fs.record_observed(key, shown, data, version)
    return text
