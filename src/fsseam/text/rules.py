"""The text rules on a whole file: what the model sees of its bytes, and how edits go back.

The model sees UTF-8 text without the BOM, split on ``\\n``, with the ``\\r`` of each CRLF
removed. Edits are matched on that view and spliced into the *original* text, so every
byte outside the edited region is kept (mixed newlines, tabs, lone ``\\r`` included); the
inserted text takes the file's dominant newline style.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from ..errors import ErrorCode, FsError
from ..messages import Part, Reason

__all__ = [
    "BOM",
    "BOM_BYTES",
    "SNIFF_BYTES",
    "TextDoc",
    "TextFormat",
    "check_sniff",
    "check_text",
    "count_newlines",
    "decode",
    "dominant_newline",
    "encode_new",
    "new_doc",
    "not_text",
    "split_lines",
]

BOM = "\ufeff"
BOM_BYTES = BOM.encode("utf-8")
SNIFF_BYTES = 8192


def not_text(path: str, byte: int | None = None) -> FsError:
    """FS_NOT_TEXT for invalid UTF-8 (at ``byte``, when known)."""
    why = Part("_bad_utf8") if byte is None else Part("_bad_utf8_at")
    return FsError(
        ErrorCode.FS_NOT_TEXT, path=path, reason=Reason.not_text, details={"why": why, "byte": byte}
    )


def check_sniff(data: bytes, path: str) -> None:
    if b"\x00" in data[:SNIFF_BYTES]:
        raise FsError(ErrorCode.FS_NOT_TEXT, path=path, reason=Reason.not_text,
                      details={"why": Part("_nul_bytes")})


def check_text(data: bytes, path: str) -> None:
    """Raise FS_NOT_TEXT unless ``data`` is text (no NUL in the sniff, valid UTF-8)."""
    check_sniff(data, path)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise not_text(path, e.start) from e


def decode(data: bytes, path: str) -> TextDoc:
    """Decode a whole file (raises FS_NOT_TEXT)."""
    check_sniff(data, path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise not_text(path, e.start) from e
    bom = text.startswith(BOM)
    return TextDoc(text[1:] if bom else text, bom)


def count_newlines(text: str, end: int | None = None) -> int:
    """``text.count("\\n", 0, end)``, in about half the time on a large text: a str's (and
    bytes') ``count`` of one character tests every character in a loop, while deleting it
    from the UTF-8 bytes finds each one with ``memchr`` (one ``\\n`` byte per newline).
    In pieces, so a large text is never copied whole."""
    stop = len(text) if end is None else min(end, len(text))
    n = 0
    for i in range(0, stop, _COUNT_PIECE):
        data = text[i : min(i + _COUNT_PIECE, stop)].encode("utf-8", "surrogatepass")
        n += len(data) - len(data.replace(b"\n", b""))
    return n


_COUNT_PIECE = 1 << 20


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
        if "\r" in text:  # memchr: searching the text for CRLF costs 20 times more
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
        if "\r" not in o:
            # Most files have no CR at all: one memchr instead of counting CRLF and LF over
            # the whole text (two passes, for the before and the after text of every edit).
            self.newline = "\n"
            self._cr_at = []
            self.view = o
            return
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

    @property
    def line_count(self) -> int:
        """``len(self.lines)``, counted without splitting the text."""
        v = self.view
        if not v:
            return 0
        return count_newlines(v) + (0 if v.endswith("\n") else 1)

    def lines_near(self, at: int, line: int, first: int, last: int) -> list[str]:
        """Lines ``first`` to ``last`` (1-based, clipped to the text) given that view offset
        ``at`` starts line ``line`` (``first <= line``): found by searching outward from
        ``at``, so a snippet costs the lines it shows, not a split of the whole text."""
        v = self.view
        lo = at
        for _ in range(line - first):
            if lo == 0:
                break
            lo = v.rfind("\n", 0, lo - 1) + 1
        hi = at
        for _ in range(last - line + 1):
            nl = v.find("\n", hi)
            if nl < 0:
                hi = len(v)
                break
            hi = nl + 1
        return split_lines(v[lo:hi])

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
        return count_newlines(self.view, offset) + 1


def new_doc(content: str, like: TextFormat | None) -> TextDoc:
    """The document a whole-file write makes: what :func:`decode` gives of the bytes of
    :func:`encode_new` (``new_doc(c, f).encode() == encode_new(c, f)``), built from the
    text instead of decoding its bytes again."""
    bom = content.startswith(BOM)
    if bom:
        content = content[1:]
    if like is None:
        return TextDoc(content, bom)
    return TextDoc(like.styled(content), like.bom or bom)


def encode_new(content: str, like: TextFormat | None) -> bytes:
    """Bytes for a whole-file write: an existing file keeps its BOM and newline style."""
    bom = content.startswith(BOM)
    if bom:
        content = content[1:]
    if like is None:
        return ((BOM if bom else "") + content).encode("utf-8")
    return ((BOM if like.bom or bom else "") + like.styled(content)).encode("utf-8")
