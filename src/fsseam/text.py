"""The text rules: what the model sees of a file's bytes, and how edits go back.

The model sees UTF-8 text without the BOM, split on ``\\n``, with the ``\\r`` of each CRLF
removed. Edits are matched on that view and spliced into the *original* text, so every
byte outside the edited region is kept (mixed newlines, tabs, lone ``\\r`` included); the
inserted text takes the file's dominant newline style.
"""

from __future__ import annotations

import bisect
import codecs
from dataclasses import dataclass, field

from .errors import ErrorCode, FsError

__all__ = ["BOM", "LineWindow", "TextDoc", "TextFormat", "decode", "encode_new", "split_lines"]

BOM = "\ufeff"
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

    Decodes incrementally and strictly; counts every line it passes. Memory holds only the
    window and one partial line.
    """

    def __init__(self, path: str, first: int, limit: int) -> None:
        self.path = path
        self.first = first
        self.limit = limit
        self.lines: list[str] = []
        self.count = 0  # complete lines seen
        self.crlf = 0
        self.newlines = 0
        self._last_cr = False
        self.bytes_seen = 0
        self.bom = False
        self._decoder = codecs.getincrementaldecoder("utf-8")("strict")
        self._partial = ""
        self._midline = False
        self._started = False

    @property
    def window_full(self) -> bool:
        return len(self.lines) >= self.limit

    def feed(self, chunk: bytes, final: bool = False) -> None:
        if self.bytes_seen < SNIFF_BYTES:
            check_sniff(chunk[: SNIFF_BYTES - self.bytes_seen], self.path)
        self.bytes_seen += len(chunk)
        try:
            text = self._decoder.decode(chunk, final)
        except UnicodeDecodeError as e:
            raise not_text(self.path, "invalid UTF-8") from e
        if not self._started and text:
            self._started = True
            if text.startswith(BOM):
                self.bom = True
                text = text[1:]
        self.newlines += text.count("\n")
        self.crlf += text.count("\r\n") + (1 if self._last_cr and text.startswith("\n") else 0)
        if text:
            self._last_cr = text.endswith("\r")
        last = self.first + self.limit - 1
        pos = 0
        while True:
            nl = text.find("\n", pos)
            if nl < 0:
                break
            self.count += 1
            if self.first <= self.count <= last:
                line = self._partial + text[pos:nl]
                self.lines.append(line[:-1] if line.endswith("\r") else line)
            self._partial = ""
            self._midline = False
            pos = nl + 1
        rest = text[pos:]
        if rest:
            self._midline = True
        # Only the window's partial line is kept: lines outside it are counted, not held.
        if self.first <= self.count + 1 <= last:
            self._partial += rest
        if final and self._midline:
            self.count += 1
            if self.first <= self.count <= last:
                self.lines.append(self._partial)
            self._partial = ""
            self._midline = False

    @property
    def format(self) -> TextFormat:
        return TextFormat(self.bom, dominant_newline(self.crlf, self.newlines))
