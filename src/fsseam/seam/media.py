"""Images and PDFs through a read: files that are not text but that a model can be shown.

What a file is comes from its first bytes (its magic number), never from its name: a
``.png`` holding text is text. A file whose first bytes name an image or a PDF is still
read as text when all of it is text (GIF, WebP and PDF headers are ASCII, so a text file
may begin like one; a PDF written with no binary byte is its own source text).

An image comes back whole, as bytes, within ``Limits.max_image_bytes``; a PDF as its
text, page by page, extracted by pypdf (the ``pdf`` extra) from at most
``Limits.max_edit_bytes``, the most any call holds of one file.
"""

from __future__ import annotations

import hashlib
import io
import threading
from collections import OrderedDict
from collections.abc import Iterator
from typing import TYPE_CHECKING, Final

from ..errors import ErrorCode, FsError
from ..limits import Limits
from ..messages import Reason, render
from ..text import check_text

if TYPE_CHECKING:
    from ..backends.base import ReadStream

__all__ = [
    "HEAD_BYTES",
    "IMAGE_TYPES",
    "PDF",
    "is_media",
    "pdf_text",
    "sniff",
    "take",
]

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
_pdf_cache: OrderedDict[str, tuple[str, int]] = OrderedDict()
_pdf_lock = threading.Lock()


def pdf_text(data: bytes, shown: str) -> tuple[str, int]:
    """The text of a PDF, each page after a line naming its number, and its page count.

    Kept for the last few PDFs by a digest of their bytes, so that reading a long PDF
    window by window extracts it once (extraction costs far more than the download)."""
    digest = hashlib.sha256(data).hexdigest()
    with _pdf_lock:
        known = _pdf_cache.get(digest)
        if known is not None:
            _pdf_cache.move_to_end(digest)
    if known is None:
        pages = _extract(data, shown)
        known = "".join(_page(n, body) for n, body in enumerate(pages, 1)), len(pages)
        with _pdf_lock:
            _pdf_cache[digest] = known
            while len(_pdf_cache) > _PDF_CACHE_ENTRIES:
                _pdf_cache.popitem(last=False)
    return known


def _page(n: int, body: str) -> str:
    body = body.replace("\r\n", "\n")
    if body and not body.endswith("\n"):
        body += "\n"
    return render(Reason.pdf_page, details={"page": n}) + "\n" + body


def _extract(data: bytes, shown: str) -> list[str]:
    try:
        import pypdf
    except ImportError:
        raise FsError(ErrorCode.FS_UNSUPPORTED, path=shown, reason="pdf_needs_pypdf") from None
    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise FsError(ErrorCode.FS_NOT_TEXT, path=shown, reason="pdf_encrypted")
        pages = [page.extract_text() or "" for page in reader.pages]
    except FsError:
        raise
    except Exception as e:
        # pypdf raises its own errors and, on malformed files, plain ones (KeyError,
        # ValueError, ...): each means the same to the model, this PDF cannot be read.
        raise FsError(ErrorCode.FS_NOT_TEXT, path=shown, reason="pdf_unreadable",
                      details={"detail": f"{type(e).__name__}: {e}"[:200]}) from None
    if not any(p.strip() for p in pages):
        raise FsError(ErrorCode.FS_NOT_TEXT, path=shown, reason="pdf_no_text",
                      details={"pages": len(pages)})
    return pages
