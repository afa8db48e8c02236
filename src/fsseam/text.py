"""The text rules: what the model sees of a file's bytes, and how edits go back.

The model sees UTF-8 text without the BOM, split on ``\\n``, with the ``\\r`` of each CRLF
removed. Edits are matched on that view and spliced into the *original* text, so every
byte outside the edited region is kept (mixed newlines, tabs, lone ``\\r`` included); the
inserted text takes the file's dominant newline style.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from .errors import ErrorCode, FsError

__all__ = ["BOM", "LineWindow", "TextDoc", "TextFormat", "decode", "encode_new", "split_lines"]

BOM = "\ufeff"
BOM_BYTES = BOM.encode("utf-8")
SNIFF_BYTES = 8192


def not_text(path: str, why: str) -> FsError:
    return FsError(
        ErrorCode.FS_NOT_TEXT,
        f"{path} is not a UTF-8 text file ({why}); it cannot be read or edited as text and "
        "was left unchanged.",
        path=path,
    )


def check_sniff(data: bytes, path: str) -> None:
    if b"\x00" in data[:SNIFF_BYTES]:
        raise not_text(path, "it contains NUL bytes, so it looks binary")


def check_text(data: bytes, path: str) -> None:
    """Raise FS_NOT_TEXT unless ``data`` is text (no NUL in the sniff, valid UTF-8)."""
    check_sniff(data, path)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise not_text(path, f"invalid UTF-8 at byte {e.start}") from e


def decode(data: bytes, path: str) -> TextDoc:
    """Decode a whole file (raises FS_NOT_TEXT)."""
    check_sniff(data, path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise not_text(path, f"invalid UTF-8 at byte {e.start}") from e
    bom = text.startswith(BOM)
    return TextDoc(text[1:] if bom else text, bom)


def split_lines(view: str) -> list[str]:
    """Lines of a view; a final newline ends the last line rather than starting another."""
    if not view:
        return []
    lines = view.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


@dataclass(frozen=True)
class TextFormat:
    """What a whole-file write keeps of the file it replaces."""

    bom: bool
    newline: str

    def styled(self, text: str) -> str:
        """``text`` (model newlines) in this newline style."""
        text = text.replace("\r\n", "\n")
        return text.replace("\n", self.newline) if self.newline != "\n" else text


def dominant_newline(crlf: int, newlines: int) -> str:
    return "\r\n" if crlf and crlf * 2 > newlines else "\n"


@dataclass
class TextDoc:
    """One decoded file: the original text (after the BOM) and its CR-free view."""

    original: str
    bom: bool
    view: str = field(init=False)
    newline: str = field(init=False)
    _cr_at: list[int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        o = self.original
        crlf = o.count("\r\n")
        self.newline = dominant_newline(crlf, o.count("\n"))
        if crlf:
            # View positions of each removed \r: the \r of the k-th CRLF sits at view index
            # (its original index - k).
            cr: list[int] = []
            i = o.find("\r\n")
            while i >= 0:
                cr.append(i - len(cr))
                i = o.find("\r\n", i + 2)
            self._cr_at = cr
            self.view = o.replace("\r\n", "\n")
        else:
            self._cr_at = []
            self.view = o

    def to_original(self, v: int) -> int:
        """Original index of view index ``v`` (a boundary between characters)."""
        return v + bisect.bisect_left(self._cr_at, v)

    @property
    def format(self) -> TextFormat:
        return TextFormat(self.bom, self.newline)

    def styled(self, text: str) -> str:
        return self.format.styled(text)

    def splice(self, regions: list[tuple[int, int, str]]) -> TextDoc:
        """Replace view regions ``[start, end)`` with model text; returns the new doc."""
        out: list[str] = []
        pos = 0
        for start, end, new in sorted(regions):
            o_start, o_end = self.to_original(start), self.to_original(end)
            out.append(self.original[pos:o_start])
            out.append(self.styled(new))
            pos = o_end
        out.append(self.original[pos:])
        return TextDoc("".join(out), self.bom)

    def encode(self) -> bytes:
        return ((BOM if self.bom else "") + self.original).encode("utf-8")

    @property
    def lines(self) -> list[str]:
        return split_lines(self.view)

    def line_start(self, index: int) -> int:
        """View offset where 0-based line ``index`` starts (``len(view)`` past the end)."""
        pos = 0
        for _ in range(index):
            nl = self.view.find("\n", pos)
            if nl < 0:
                return len(self.view)
            pos = nl + 1
        return pos

    def line_of(self, offset: int) -> int:
        """1-based line number of a view offset."""
        return self.view.count("\n", 0, offset) + 1


def encode_new(content: str, like: TextFormat | None) -> bytes:
    """Bytes for a whole-file write: an existing file keeps its BOM and newline style."""
    bom = content.startswith(BOM)
    if bom:
        content = content[1:]
    if like is None:
        return ((BOM if bom else "") + content).encode("utf-8")
    return ((BOM if like.bom or bom else "") + like.styled(content)).encode("utf-8")


class LineWindow:
    """Collects lines ``[first, first + limit)`` (1-based) from a stream of chunks.

    Works on bytes: a UTF-8 sequence never contains the byte ``\n``, so lines can be cut
    before decoding, and only the window's lines are decoded (strictly). Chunks wholly
    outside the window are only counted, in C. Memory holds the window and one partial line.
    """

    def __init__(self, path: str, first: int, limit: int) -> None:
        self.path = path
        self.first = first
        self.last = first + limit - 1
        self.lines: list[str] = []
        self.count = 0  # complete lines seen (a final unterminated line counts at the end)
        self.bytes_seen = 0
        self.bom = False
        self.crlf = 0
        self.newlines = 0
        self._partial = b""
        self._midline = False
        self._last_cr = False
        self._head = b""
        self._started = False

    @property
    def window_full(self) -> bool:
        return self.count >= self.last

    def _take(self, lines: list[bytes], last_is_final: bool = False) -> None:
        """Decode window lines (one decode call for all), dropping each CRLF's ``\r``.

        ``last_is_final``: the last line had no newline, so a trailing ``\r`` is content.
        """
        if not lines:
            return
        joined = b"\n".join(lines)
        if b"\r" in joined:
            # Every line but a final one ended in \n: its \r before the join's \n is a CRLF.
            joined = joined.replace(b"\r\n", b"\n")
            if not last_is_final and joined.endswith(b"\r"):
                joined = joined[:-1]
        try:
            text = joined.decode("utf-8")
        except UnicodeDecodeError as e:
            raise not_text(self.path, "invalid UTF-8") from e
        self.lines.extend(text.split("\n"))

    def feed(self, chunk: bytes, final: bool = False) -> None:
        if not self._started:
            # Hold back the first bytes until a BOM can be recognised whole.
            self._head += chunk
            if len(self._head) < len(BOM_BYTES) and not final:
                return
            chunk, self._head, self._started = self._head, b"", True
        if self.bytes_seen < SNIFF_BYTES:
            check_sniff(chunk[: SNIFF_BYTES - self.bytes_seen], self.path)
        if self.bytes_seen == 0 and chunk.startswith(BOM_BYTES):
            self.bom = True
            self.bytes_seen += len(BOM_BYTES)
            chunk = chunk[len(BOM_BYTES) :]
        self.bytes_seen += len(chunk)
        n = chunk.count(b"\n")
        self.newlines += n
        if b"\r" in chunk or self._last_cr:  # memchr first: most files have no CR at all
            self.crlf += chunk.count(b"\r\n") + (
                1 if self._last_cr and chunk[:1] == b"\n" else 0
            )
        if chunk:
            self._last_cr = chunk.endswith(b"\r")
        if self.count >= self.last or self.count + n < self.first - 1:
            self.count += n  # wholly outside the window: count only
        elif n == 0:
            self._partial += chunk  # the current line, which is in the window, goes on
        else:
            # Lines numbered count+1 .. count+n end in this chunk; the piece after the
            # last newline starts line count+n+1.
            pieces = chunk.split(b"\n")
            pieces[0] = self._partial + pieces[0]
            start = self.count + 1
            lo = max(self.first, start) - start
            hi = min(self.last, self.count + n) - start + 1
            if lo < hi:
                self._take(pieces[lo:hi])
            self.count += n
            self._partial = pieces[-1] if self.first <= self.count + 1 <= self.last else b""
        if chunk:
            self._midline = not chunk.endswith(b"\n")
        if final and self._midline:
            self.count += 1
            if self.first <= self.count <= self.last:
                self._take([self._partial], last_is_final=True)  # a lone final \r is content
            self._partial = b""
            self._midline = False

    @property
    def format(self) -> TextFormat:
        return TextFormat(self.bom, dominant_newline(self.crlf, self.newlines))
