"""Reading: a window of a file's lines (of a PDF's text), an image, and what a path is.

A read streams the file into a :class:`~fsseam.text.LineWindow`; a file too small to
matter is kept whole (the document cache), so a read of its other lines costs nothing.

What a file is comes from its first bytes (its magic number), never from its name: a
``.png`` holding text is text. A file whose first bytes name an image or a PDF is still
read as text when all of it is text (GIF, WebP and PDF headers are ASCII, so a text file
may begin like one; a PDF written with no binary byte is its own source text).

An image comes back whole, as bytes, within ``Limits.max_image_bytes``; a PDF as its
text, page by page, extracted by pypdf (the ``pdf`` extra) from at most
``Limits.max_edit_bytes``, the most any call holds of one file, and within the PDF bounds:
``Limits.max_pdf_pages`` pages, ``Limits.max_pdf_text_chars`` characters of text and
``Limits.pdf_seconds`` of extraction (a small PDF can cost minutes: pages that share one
large content stream are each parsed whole). Past any of them the read is FS_TOO_LARGE,
naming the limit.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from ..errors import ErrorCode, FsError
from ..events import ReadEvent, StatEvent
from ..limits import Limits
from ..messages import Reason, Role, render
from ..outcomes import ImageOutcome, PdfOutcome, ReadOutcome, StatOutcome
from ..paths import display
from ..text import LineWindow, check_text, decode
from ..versions import Version
from .core import Core

if TYPE_CHECKING:
    from types import ModuleType

    from ..backends.base import ReadStream

__all__ = [
    "HEAD_BYTES",
    "IMAGE_TYPES",
    "PAGE_NODES_PER_PAGE",
    "PDF",
    "cap_of",
    "is_media",
    "pdf_text",
    "read",
    "show",
    "sniff",
    "stat",
    "take",
]

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
        if filled.media_type == PDF:
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
        if raw is not None and partial and not window.decoded_all:
            # A file small enough to keep is validated whole, so a read reports a
            # non-UTF-8 file even when the invalid bytes lie outside the window. (A
            # window that decoded every byte strictly, as one of every line does, has
            # validated it already.)
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
    text, pages = pdf_text(found.data, shown, fs.limits)
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
        kind = sniff(head)
        if kind is not None and (images or kind == PDF):
            data = take(stream, head, chunks, kind, cap_of(kind, fs.limits),
                              display(key))
            if is_media(data):
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
        if size >= HEAD_BYTES:
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


# -- what a file is: images and PDFs --------------------------------------------------------
PDF: Final = "application/pdf"
IMAGE_TYPES: Final = ("image/png", "image/jpeg", "image/gif", "image/webp")
HEAD_BYTES: Final = 16
"""Bytes of a file's start that tell its kind (the longest signature is WebP's, 12)."""


def sniff(head: bytes) -> str | None:
    """The media type a file's first bytes name (an image type or ``application/pdf``), or
    None for anything else."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    if head.startswith(b"%PDF-"):
        return PDF
    return None


def is_media(data: bytes) -> bool:
    """Whether ``data`` is a file a read shows as an image or a PDF (not as text)."""
    return sniff(data[:HEAD_BYTES]) is not None and not _is_text(data)


def _is_text(data: bytes) -> bool:
    try:
        check_text(data, "")
    except FsError:
        return False
    return True


def cap_of(media_type: str, limits: Limits) -> int:
    """The most bytes of such a file a read takes."""
    return limits.max_edit_bytes if media_type == PDF else limits.max_image_bytes


def take(stream: ReadStream, head: bytes, rest: Iterator[bytes], media_type: str,
         cap: int, shown: str) -> bytes:
    """The whole file: ``head`` and the rest of ``stream``, or FS_TOO_LARGE (nothing kept)
    once it is known to be over ``cap``."""
    size = stream.size
    if size is not None and size > cap:
        raise _too_large(media_type, size, cap, shown)
    parts = [head]
    total = len(head)
    for chunk in rest:
        parts.append(chunk)
        total += len(chunk)
        if total > cap:
            raise _too_large(media_type, total, cap, shown)
    return b"".join(parts)


def _too_large(media_type: str, size: int, cap: int, shown: str) -> FsError:
    reason = Reason.pdf_too_large if media_type == PDF else Reason.image_too_large
    return FsError(ErrorCode.FS_TOO_LARGE, path=shown, reason=reason,
                   details={"size": size, "cap": cap, "media_type": media_type})


# -- PDFs --------------------------------------------------------------------------------------
_PDF_CACHE_ENTRIES = 8
_pdf_cache: OrderedDict[tuple[str, int, int], tuple[str, int]] = OrderedDict()
_pdf_lock = threading.Lock()
_END: Final = object()
PAGE_NODES_PER_PAGE: Final = 4
"""Page-tree nodes looked at per page allowed before the tree counts as too many pages (a
tree of empty or repeated nodes costs as much to walk as pages)."""


def pdf_text(data: bytes, shown: str, limits: Limits) -> tuple[str, int]:
    """The text of a PDF, each page after a line naming its number, and its page count;
    FS_TOO_LARGE past the PDF bounds of ``limits``.

    Kept for the last few PDFs by a digest of their bytes (and the bounds they were
    extracted under), so that reading a long PDF window by window extracts it once
    (extraction costs far more than the download)."""
    key = (hashlib.sha256(data).hexdigest(), limits.max_pdf_pages, limits.max_pdf_text_chars)
    with _pdf_lock:
        known = _pdf_cache.get(key)
        if known is not None:
            _pdf_cache.move_to_end(key)
    if known is None:
        pages = _extract(data, shown, limits)
        known = "".join(_page(n, body) for n, body in enumerate(pages, 1)), len(pages)
        with _pdf_lock:
            _pdf_cache[key] = known
            while len(_pdf_cache) > _PDF_CACHE_ENTRIES:
                _pdf_cache.popitem(last=False)
    return known


def _page(n: int, body: str) -> str:
    body = body.replace("\r\n", "\n")
    if body and not body.endswith("\n"):
        body += "\n"
    return render(Reason.pdf_page, details={"page": n}) + "\n" + body


def _bound_error(reason: Reason, shown: str, limit: str, cap: int | float) -> FsError:
    return FsError(ErrorCode.FS_TOO_LARGE, path=shown, reason=reason,
                   details={"limit": limit, "cap": cap})


def _too_slow(shown: str, limits: Limits) -> FsError:
    return _bound_error(Reason.pdf_too_slow, shown, "pdf_seconds", limits.pdf_seconds)


class _Stop(BaseException):
    """Stops an extraction from inside pypdf's visitors. Not an ``Exception``: pypdf catches
    those around the parts it can do without (a form it cannot decode) and goes on."""

    def __init__(self, error: FsError) -> None:
        super().__init__(error.reason)
        self.error = error


class _Bounds:
    """The time and text one extraction may take, checked at each content-stream operator
    and each piece of text pypdf finds (its visitors), and between pages."""

    def __init__(self, shown: str, limits: Limits) -> None:
        self.shown, self.limits = shown, limits
        seconds = limits.pdf_seconds
        self.deadline = time.monotonic() + seconds if seconds > 0 else None
        self.chars = 0
        self.cancelled = False
        """Set by the caller that stopped waiting: the extraction stops at its next check."""

    def tick(self, *_: Any) -> None:
        if self.cancelled or (self.deadline is not None and time.monotonic() > self.deadline):
            raise _Stop(_too_slow(self.shown, self.limits))

    def text(self, text: str, *_: Any) -> None:
        self.chars += len(text)
        self.over_text(self.chars)

    def over_text(self, chars: int) -> None:
        cap = self.limits.max_pdf_text_chars
        if chars > cap:
            raise _Stop(_bound_error(Reason.pdf_too_much_text, self.shown,
                                     "max_pdf_text_chars", cap))


def _extract(data: bytes, shown: str, limits: Limits) -> list[str]:
    try:
        import pypdf
    except ImportError:
        raise FsError(ErrorCode.FS_UNSUPPORTED, path=shown, reason=Reason.pdf_needs_pypdf) from None
    bounds = _Bounds(shown, limits)
    if bounds.deadline is None:
        return _pages(pypdf, data, bounds)
    # pypdf parses a page's content stream whole before it reports an operator, and a
    # stream can take minutes: the extraction runs in a thread of its own, waited on for
    # the time allowed. One left behind stops at its next check (the next operator).
    done: list[list[str] | BaseException] = []

    def run() -> None:
        try:
            done.append(_pages(pypdf, data, bounds))
        except BaseException as e:  # handed to the caller's thread, raised there
            done.append(e)

    worker = threading.Thread(target=run, name="fsseam-pdf", daemon=True)
    worker.start()
    worker.join(limits.pdf_seconds)
    if not done:
        bounds.cancelled = True
        raise _too_slow(shown, limits)
    if isinstance(done[0], BaseException):
        raise done[0]
    return done[0]


def _pages(pypdf: ModuleType, data: bytes, bounds: _Bounds) -> list[str]:
    shown, cap = bounds.shown, bounds.limits.max_pdf_pages
    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise FsError(ErrorCode.FS_NOT_TEXT, path=shown, reason=Reason.pdf_encrypted)
        # pypdf lists every page before it hands out the first (100,000 pages: a minute);
        # the tree is counted first, no further than the bound.
        walk = _PageTree(pypdf.generic.IndirectObject, cap, bounds)
        if not walk.at_most(reader.trailer["/Root"]) or len(reader.pages) > cap:
            raise _bound_error(Reason.pdf_too_many_pages, shown, "max_pdf_pages", cap)
        pages: list[str] = []
        for page in reader.pages:
            bounds.tick()
            pages.append(page.extract_text(visitor_operand_before=bounds.tick,
                                           visitor_text=bounds.text) or "")
        bounds.over_text(sum(map(len, pages)))
    except _Stop as stop:
        raise stop.error from None
    except FsError:
        raise
    except Exception as e:
        # pypdf raises its own errors and, on malformed files, plain ones (KeyError,
        # ValueError, ...): each means the same to the model, this PDF cannot be read.
        raise FsError(ErrorCode.FS_NOT_TEXT, path=shown, reason=Reason.pdf_unreadable,
                      details={"detail": f"{type(e).__name__}: {e}"[:200]}) from None
    if not any(p.strip() for p in pages):
        raise FsError(ErrorCode.FS_NOT_TEXT, path=shown, reason=Reason.pdf_no_text,
                      details={"pages": len(pages)})
    return pages


class _PageTree:
    """The count of a PDF's pages, walked no further than the bound."""

    def __init__(self, reference: type[Any], cap: int, bounds: _Bounds) -> None:
        self.reference, self.cap, self.bounds = reference, cap, bounds

    def at_most(self, root: Any) -> bool:
        """Whether the page tree under the catalog ``root`` holds at most ``cap`` pages,
        told as pypdf tells pages from page-tree nodes; False as soon as it holds more, or
        makes the walk look at more than ``PAGE_NODES_PER_PAGE`` nodes per page allowed
        (cycles, empty nodes). A malformed tree is left to pypdf, which says what is
        wrong."""
        budget = PAGE_NODES_PER_PAGE * self.cap + 16
        stack: list[Iterator[Any]] = [iter((self.resolved(root).get("/Pages"),))]
        pages = 0
        while stack:
            kid: Any = next(stack[-1], _END)
            if kid is _END:
                stack.pop()
                continue
            budget -= 1
            if budget < 0:
                return False
            self.bounds.tick()
            obj = self.resolved(kid)
            if not isinstance(obj, dict) or not obj:
                continue
            kind = self.resolved(obj.get("/Type"))
            if kind == "/Pages" or (kind is None and "/Kids" in obj):
                kids = self.resolved(obj.get("/Kids"))
                if isinstance(kids, list):
                    stack.append(iter(kids))
            elif kind == "/Page" or kind is None:
                pages += 1
                if pages > self.cap:
                    return False
        return True

    def resolved(self, value: Any) -> Any:
        """What a PDF value stands for: the object a reference names (pypdf's dict ``get``
        hands references on as they are)."""
        return value.get_object() if isinstance(value, self.reference) else value
