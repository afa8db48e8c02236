"""The text rules: what the model sees of a file's bytes, and how edits go back.

The model sees UTF-8 text without the BOM, split on ``\\n``, with the ``\\r`` of each CRLF
removed. Edits are matched on that view and spliced into the *original* text, so every
byte outside the edited region is kept (mixed newlines, tabs, lone ``\\r`` included); the
inserted text takes the file's dominant newline style.

The rules hold on a whole file (:class:`TextDoc`, :func:`decode`, :func:`encode_new`) and
on a stream, for a window of lines (:class:`LineWindow`: the same rules, BOM, CRLF, strict
UTF-8 and the NUL sniff, applied to bytes as they arrive, only the window's lines decoded
and kept).
"""

from __future__ import annotations

import bisect
import codecs
import numbers
import sys
from dataclasses import dataclass, field

from .errors import ErrorCode, FsError
from .messages import Part, Reason

__all__ = [
    "BOM",
    "BOM_BYTES",
    "SNIFF_BYTES",
    "LineWindow",
    "TextDoc",
    "TextFormat",
    "check_sniff",
    "check_text",
    "count_newlines",
    "decode",
    "dominant_newline",
    "encode_new",
    "new_doc",
    "newlines",
    "not_text",
    "split_lines",
    "within",
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


def newlines(data: bytes) -> int:
    """``data.count(b"\n")``. Where the process has numpy loaded already (pandas, polars,
    any data work), a large chunk is counted by its vectorised compare, eight times
    faster; fsseam never imports it. Otherwise by the cheaper of two loops in C: ``count``
    tests every byte, while deleting the newlines finds each with ``memchr`` (a call per
    newline, the bytes between skipped many at a time), which wins for lines longer than
    some 60 bytes and loses several times over for very short ones. The first bytes tell
    which."""
    if len(data) >= _VECTOR_BYTES and (numpy := sys.modules.get("numpy")) is not None:
        try:
            # CPython's count of one byte (3.11, 3.12) is a loop with a branch per byte,
            # 0.5-0.9 ms on 1 MiB of source lines; numpy's compare and count, 0.1.
            count = numpy.count_nonzero(numpy.frombuffer(data, numpy.uint8) == _NEWLINE)
        except AttributeError:
            count = None  # numpy half imported by another thread
        if isinstance(count, numbers.Integral):  # not a stand-in (a test's mock of numpy)
            return int(count)
    if len(data) < 4 * _SAMPLE_BYTES:
        return data.count(b"\n")
    if data.count(b"\n", 0, _SAMPLE_BYTES) * _MEMCHR_LINE_BYTES > _SAMPLE_BYTES:
        return data.count(b"\n")
    return len(data) - len(data.replace(b"\n", b""))


_NEWLINE = ord("\n")
_VECTOR_BYTES = 16 << 10
"""From this size a chunk is counted by numpy, where loaded: 3 µs against ``count``'s 10
(at 4 KB the two are even, at 256 KB numpy is ten times faster)."""
_SAMPLE_BYTES = 4096
_MEMCHR_LINE_BYTES = 64
"""The mean line length (bytes) from which counting by ``memchr`` is the faster (measured
on 1 MiB not in the cache, as a download is: 5% slower at 40 bytes a line, 8% faster at
64, twice as fast at 200, 1.4 times slower at 16)."""
_WHOLE_CHUNK_BYTES = 256 << 10
"""A larger chunk is decoded and split whole only when its lines look all in the window."""


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


# -- a window of lines, from a stream ------------------------------------------------------
def within(joined: str, cap: int) -> bool:
    """Whether no line of ``joined`` (lines joined by ``\n``) is longer than ``cap``.

    Exact, in about ``len(joined) / cap`` searches: from each line start, the next
    ``cap + 1`` characters hold a newline, or the line starting there is too long; the
    search goes on after the last newline among them."""
    end = len(joined)
    pos = 0
    while end - pos > cap:
        nl = joined.rfind("\n", pos, pos + cap + 1)
        if nl < 0:
            return False
        pos = nl + 1
    return True


class _LongLine:
    """A window line longer than the window keeps: its first bytes, and a count of its
    characters (validated as UTF-8 as they pass), so memory stays flat however long it is."""

    def __init__(self, path: str, head: bytes, keep: int) -> None:
        self.path = path
        self.prefix = head[:keep]
        self.chars = 0
        self.ends_cr = False
        self._decoder = codecs.getincrementaldecoder("utf-8")()
        self.feed(head)

    def feed(self, piece: bytes) -> None:
        if not piece:
            return
        try:
            self.chars += len(self._decoder.decode(piece))
        except UnicodeDecodeError as e:
            raise not_text(self.path) from e
        self.ends_cr = piece.endswith(b"\r")

    def finish(self, terminated: bool) -> tuple[str, int]:
        """The kept text and the line's length in characters (a CRLF's ``\r`` excluded)."""
        try:
            self._decoder.decode(b"", final=True)
        except UnicodeDecodeError as e:
            raise not_text(self.path) from e
        # The prefix may end inside a character: decode only the complete ones.
        text = codecs.getincrementaldecoder("utf-8")().decode(self.prefix)
        return text, self.chars - (1 if terminated and self.ends_cr else 0)


class LineWindow:
    """Collects lines ``[first, first + limit)`` (1-based) from a stream of chunks.

    Works on bytes: a UTF-8 sequence never contains the byte ``\n``, so lines can be cut
    before decoding, and only the window's lines need be UTF-8 (decoded strictly; a chunk
    whose lines start in the window is decoded at once, and cut to the window's lines only
    when that fails). Chunks wholly outside the window are only counted, in C. Memory holds
    the window and one partial line (and a chunk).

    With ``max_line_chars``, a longer line is kept as its first ``max_line_chars``
    characters and its full length is recorded in ``cut`` (line number -> characters); it
    is never held whole. With ``max_chars``, the window also ends one line after the line
    where the kept characters (each line counted as ``min(len, max_line_chars) + 8``, no
    more than a ``cat -n`` row of it costs) first exceed ``max_chars``: what no output of
    that size could show is not collected.
    """

    def __init__(
        self, path: str, first: int, limit: int, max_chars: int | None = None,
        max_line_chars: int | None = None,
    ) -> None:
        self.path = path
        self.first = first
        self.last = first + limit - 1
        self.lines: list[str] = []
        self.cut: dict[int, int] = {}
        self.count = 0  # complete lines seen (a final unterminated line counts at the end)
        self.bytes_seen = 0
        self.bom = False
        self.crlf = 0
        self.newlines = 0
        self.max_chars = max_chars
        self.max_line = max_line_chars
        self._keep = None if max_line_chars is None else 4 * (max_line_chars + 1)
        self._used = 0
        self._spent = False
        self._parts: list[bytes] = []
        self._held_bytes = 0
        self._long: _LongLine | None = None
        self._midline = False
        self._last_cr = False
        self._head = b""
        self._started = False
        self.decoded_all = True
        """Whether every byte fed so far was decoded (strictly): then the bytes are UTF-8."""

    @property
    def window_full(self) -> bool:
        return self.count >= self.last

    def _add(self, texts: list[str], first_no: int, joined: str) -> None:
        """Keep decoded window lines numbered from ``first_no``, within the budgets
        (``joined``: the same lines joined by ``\n``, for their lengths without a pass over
        the list)."""
        cap = self.max_line
        if cap is None or within(joined, cap):
            if self.max_chars is None:
                self.lines.extend(texts)
                return
            # Every line's characters plus 8: the joined text holds all of them but the
            # newlines between lines.
            cost = len(joined) - (len(texts) - 1) + 8 * len(texts)
            if not self._spent and self._used + cost <= self.max_chars:
                self._used += cost
                self.lines.extend(texts)
                return
        for i, text in enumerate(texts):
            self._add_one(first_no + i, text, len(text))
            if self.count >= self.last or first_no + i >= self.last:
                return

    def _add_one(self, number: int, text: str, length: int) -> None:
        cap = self.max_line
        if cap is not None and length > cap:
            self.cut[number] = length
            text = text[:cap]
        self.lines.append(text)
        if self.max_chars is not None and not self._spent:
            self._used += min(length, cap if cap is not None else length) + 8
            if self._used > self.max_chars:
                # Past this line nothing could be shown; one more line is kept so that an
                # output clipped at its first line still sees that more lines follow.
                self._spent = True
                self.last = min(self.last, number + 1)

    def _room(self) -> int | None:
        """How many more lines the output budget could take (every line costs at least 8);
        None without a budget."""
        if self.max_chars is None:
            return None
        return max(0, self.max_chars - self._used) // 8 + 2

    def _take(self, lines: list[bytes], first_no: int, last_is_final: bool = False) -> None:
        """Decode window lines (one decode call for all), dropping each CRLF's ``\r``.

        ``last_is_final``: the last line had no newline, so a trailing ``\r`` is content.
        """
        if not lines:
            return
        room = self._room()
        if room is not None:
            lines = lines[:room]
        self._take_joined(b"\n".join(lines), first_no, last_is_final)

    def _take_joined(self, joined: bytes, first_no: int, last_is_final: bool = False) -> None:
        """``_take`` of lines already joined by ``\n`` (a slice of a chunk)."""
        if b"\r" in joined:
            # Every line but a final one ended in \n: its \r before the join's \n is a CRLF.
            joined = joined.replace(b"\r\n", b"\n")
            if not last_is_final and joined.endswith(b"\r"):
                joined = joined[:-1]
        try:
            text = joined.decode("utf-8")
        except UnicodeDecodeError as e:
            raise not_text(self.path) from e
        self._add(text.split("\n"), first_no, text)

    def _hold(self, piece: bytes) -> None:
        """Add bytes to the current (window) line, which goes on in the next chunk."""
        if self._long is not None:
            self._long.feed(piece)
            return
        self._parts.append(piece)
        self._held_bytes += len(piece)
        if self._keep is not None and self._held_bytes > self._keep:
            head = b"".join(self._parts)
            self._parts, self._held_bytes = [], 0
            self._long = _LongLine(self.path, head, self._keep)

    def _finish_held(self, tail: bytes, number: int, final: bool = False) -> None:
        """The held line ends with ``tail``: keep it as line ``number``."""
        if self._long is not None:
            self._long.feed(tail)
            text, length = self._long.finish(terminated=not final)
            self._long = None
            self._add_one(number, text, length)
            return
        raw = b"".join([*self._parts, tail]) if self._parts else tail
        self._parts, self._held_bytes = [], 0
        self._take([raw], number, last_is_final=final)

    def _drop_held(self) -> None:
        self._parts, self._held_bytes, self._long = [], 0, None

    def feed(self, chunk: bytes, final: bool = False) -> None:
        opened = self._open(chunk, final)
        if opened is None:
            return
        chunk = opened
        if not self._whole_chunk(chunk):
            n = self._count(chunk)
            if self.count >= self.last or self.count + n < self.first - 1:
                self.count += n  # wholly outside the window: count only
                self.decoded_all = self.decoded_all and not chunk
            elif n == 0:
                self._hold(chunk)  # the current line, which is in the window, goes on
            else:
                self._lines_ending_in(chunk, n)
                self.decoded_all = False
        if chunk:
            self._midline = not chunk.endswith(b"\n")
        if final and self._midline:
            self.count += 1
            if self.first <= self.count <= self.last:
                self._finish_held(b"", self.count, final=True)  # a lone final \r is content
            self._drop_held()
            self._midline = False

    def _open(self, chunk: bytes, final: bool) -> bytes | None:
        """``chunk`` past the file's start (the BOM set aside, the head sniffed); None while
        the first bytes are still too few to tell a BOM."""
        if not self._started:
            # Hold back the first bytes until a BOM can be recognised whole.
            self._head += chunk
            if len(self._head) < len(BOM_BYTES) and not final:
                return None
            chunk, self._head, self._started = self._head, b"", True
        if self.bytes_seen < SNIFF_BYTES:
            check_sniff(chunk[: SNIFF_BYTES - self.bytes_seen], self.path)
        if self.bytes_seen == 0 and chunk.startswith(BOM_BYTES):
            self.bom = True
            self.bytes_seen += len(BOM_BYTES)
            chunk = chunk[len(BOM_BYTES) :]
        return chunk

    def _count(self, chunk: bytes) -> int:
        """Count the chunk's bytes, newlines and CRLFs; returns its newlines."""
        n = newlines(chunk)
        self._counted(chunk, n)
        return n

    def _counted(self, chunk: bytes, n: int) -> None:
        """Add the chunk's bytes, its ``n`` newlines and its CRLFs to the counts."""
        self.bytes_seen += len(chunk)
        self.newlines += n
        if b"\r" in chunk or self._last_cr:  # memchr first: most files have no CR at all
            self.crlf += chunk.count(b"\r\n") + (
                1 if self._last_cr and chunk[:1] == b"\n" else 0
            )
        if chunk:
            self._last_cr = chunk.endswith(b"\r")

    def _whole_chunk(self, chunk: bytes) -> bool:
        """The usual read: the lines ending in ``chunk`` start in the window. Their bytes
        are decoded and split once, and the split counts them: no pass that only counts
        newlines, no split and re-join of bytes. False, with nothing done, where the window
        starts further on or ends before, or where the bytes are not all UTF-8 (the general
        path then tells whether the bad bytes lie in the window)."""
        start = self.count + 1
        if start > self.last or start + 1 < self.first:
            return False
        if len(chunk) > _WHOLE_CHUNK_BYTES and not self._reaches_end(chunk, start):
            return False
        last_nl = chunk.rfind(b"\n")
        if last_nl < 0:
            return False
        # With nothing held of the current line (the chunk starts a line) and that line in
        # the window, the chunk's lines are one slice from its start.
        whole = self.first <= start and not self._held_bytes and self._long is None
        first_nl = 0 if whole else chunk.find(b"\n")
        lo = 0 if whole else first_nl + 1
        text = self._decoded(chunk, lo, last_nl) if lo <= last_nl else ""
        if text is None:
            return False
        if not whole and self.first <= start:
            self._finish_held(chunk[:first_nl], start)  # began in an earlier chunk
        elif not whole:
            self.decoded_all = False  # the end of a line before the window
        n = 0 if whole else 1
        if lo <= last_nl:
            kept = self._add_split(text, start if whole else start + 1)
            # Lines past the window: counted in the bytes, the cheaper count.
            n = newlines(chunk) if kept is None else n + kept
        self._counted(chunk, n)
        self.count += n
        self._drop_held()
        tail = chunk[last_nl + 1 :]
        if self.first <= self.count + 1 <= self.last:
            self._hold(tail)
        elif tail:
            self.decoded_all = False
        return True

    def _reaches_end(self, chunk: bytes, start: int) -> bool:
        """Whether the window looks to take every line of a large chunk, by the length of
        its first lines: a window that ends early in it (2,000 lines of a 1 MiB chunk)
        costs less counted and split out of the bytes than with the rest decoded too."""
        seen = chunk.count(b"\n", 0, _SAMPLE_BYTES)
        return len(chunk) * seen <= (self.last - start + 1) * _SAMPLE_BYTES

    def _decoded(self, chunk: bytes, lo: int, hi: int) -> str | None:
        """The lines of ``chunk[lo:hi]`` (each ended by a newline in the chunk), decoded,
        each CRLF's ``\r`` dropped; None when they are not UTF-8."""
        joined: bytes | memoryview
        if chunk.find(b"\r", lo, hi) >= 0:
            joined = chunk[lo:hi].replace(b"\r\n", b"\n")
            if joined.endswith(b"\r"):
                joined = joined[:-1]
        else:
            joined = memoryview(chunk)[lo:hi]  # decoded where it lies: no copy first
        try:
            return str(joined, "utf-8")
        except UnicodeDecodeError:
            return None

    def _add_split(self, text: str, first_no: int) -> int | None:
        """Keep the window's lines of ``text`` (lines joined by ``\n``) numbered from
        ``first_no``; returns how many lines it holds, None when more than the window
        (and the output budget) take: the split goes no further than they reach."""
        room = self._room()
        k = self.last - first_no + 1 if room is None else min(self.last - first_no + 1, room)
        if k <= 0:
            return None
        lines = text.split("\n", k)
        if len(lines) <= k:
            self._add(lines, first_no, text)
            return len(lines)
        rest = lines.pop()
        self._add(lines, first_no, text[: len(text) - len(rest) - 1])
        return None

    def _lines_ending_in(self, chunk: bytes, n: int) -> None:
        """Lines numbered count+1 .. count+n end in ``chunk``; the piece after its last
        newline starts line count+n+1."""
        start = self.count + 1
        first_nl = chunk.find(b"\n")
        if self.first <= start:
            self._finish_held(chunk[:first_nl], start)  # began in an earlier chunk
        lo = max(1, max(self.first, start) - start)
        hi = min(self.last, self.count + n) - start + 1
        if lo < hi:
            # Only the window's lines are split out (a 1 MiB chunk holds some 26,000
            # lines, a window 2,000): the chunk's newlines are counted already. (A chunk
            # whose lines start in the window comes here only when it is large and the
            # window ends early in it, or when it is not all UTF-8: see _whole_chunk.)
            self._take(chunk.split(b"\n", hi)[lo:hi], start + lo)
        tail = chunk[chunk.rfind(b"\n") + 1 :]
        self.count += n
        self._drop_held()
        if self.first <= self.count + 1 <= self.last:
            self._hold(tail)

    @property
    def format(self) -> TextFormat:
        return TextFormat(self.bom, dominant_newline(self.crlf, self.newlines))
