"""Property tests of the text rules (docs/text.md).

The expected bytes are computed here, independently of ``fsseam.text``: a small model of
the view (CRLF -> LF, lone CR kept, BOM hidden) with a map from view offsets back to
offsets in the original text, so that an edit of the view can be replayed on the original
bytes by hand.
"""

from __future__ import annotations

import os
import re
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from fsseam import ErrorCode, FsError, Limits, Workspace

BOM = "\ufeff"
BOM_BYTES = b"\xef\xbb\xbf"

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

# Characters of a line: ASCII, tabs, 2/3/4-byte UTF-8 (astral chars included), a lone CR,
# and characters that str.splitlines() would split on but the view must not.
LINE_CHARS = st.sampled_from(
    ["a", "b", "c", "x", " ", "\t", "é", "€", "😀", "𝄞", "\r", "\u2028", "\x85", "\x0c", "\x0b"]
)
LINE_ENDINGS = st.sampled_from(["\n", "\r\n"])


@st.composite
def texts(draw: st.DrawFn) -> tuple[bool, str]:
    """(has_bom, text after the BOM): lines with LF, CRLF or mixed endings."""
    style = draw(st.sampled_from(["lf", "crlf", "mixed"]))
    n = draw(st.integers(min_value=0, max_value=8))
    parts: list[str] = []
    for i in range(n):
        parts.append(draw(st.text(LINE_CHARS, max_size=8)))
        last = i == n - 1
        if last and draw(st.booleans()):
            break  # no newline at the end of the file
        if style == "lf":
            parts.append("\n")
        elif style == "crlf":
            parts.append("\r\n")
        else:
            parts.append(draw(LINE_ENDINGS))
    return draw(st.booleans()), "".join(parts)


@dataclass
class Model:
    """The view of an original text, with view offset -> original offset."""

    original: str
    view: str
    omap: list[int]  # len(view) + 1 entries

    @classmethod
    def of(cls, original: str) -> Model:
        view: list[str] = []
        omap: list[int] = []
        i = 0
        while i < len(original):
            ch = original[i]
            if ch == "\r" and original[i + 1 : i + 2] == "\n":
                view.append("\n")
                omap.append(i)  # the view's newline stands for the whole CRLF
                i += 2
                continue
            view.append(ch)
            omap.append(i)
            i += 1
        omap.append(len(original))
        return cls(original, "".join(view), omap)

    @property
    def lines(self) -> list[str]:
        if not self.view:
            return []
        lines = self.view.split("\n")
        if lines[-1] == "":
            lines.pop()
        return lines

    @property
    def newline(self) -> str:
        crlf = self.original.count("\r\n")
        return "\r\n" if crlf * 2 > self.original.count("\n") else "\n"

    def styled(self, text: str) -> str:
        return text.replace("\r\n", "\n").replace("\n", self.newline)

    def splice(self, start: int, end: int, new: str) -> str:
        o = self.original
        return o[: self.omap[start]] + self.styled(new) + o[self.omap[end] :]


def snippet_of(lines: list[str], first: int, inserted: str, at_least: int) -> tuple[list[str], int]:
    """The lines an edit's snippet shows: 3 lines of context around the lines from ``first``
    that the ``inserted`` text covers (at least ``at_least`` of them)."""
    covered = max(at_least, len(Model.of(inserted).lines))
    start = max(1, first - 3)
    return lines[start - 1 : min(len(lines), first + covered - 1 + 3)], start


def occurrences(haystack: str, needle: str) -> int:
    """Overlapping occurrences."""
    n, i = 0, haystack.find(needle)
    while i >= 0:
        n += 1
        i = haystack.find(needle, i + 1)
    return n


def encode(bom: bool, text: str) -> bytes:
    return (BOM_BYTES if bom else b"") + text.encode("utf-8")


class Env:
    def __init__(self, kind: str, chunk: int, policy: bool = True) -> None:
        self.kind = kind
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        limits = Limits(read_chunk_bytes=chunk)
        if kind == "memory":
            self.ws = Workspace(f"memory://props-{uuid.uuid4().hex}", limits=limits,
                                policy=policy, load_entry_points=False)
        else:
            self._tmp = tempfile.TemporaryDirectory()
            self.dir = self._tmp.name
            self.ws = Workspace(self.dir, limits=limits, policy=policy, load_entry_points=False)
        self.ctx = self.ws.context(owner="a")

    def put(self, name: str, data: bytes) -> None:
        if self.kind == "memory":
            fs = self.ws.backend.fs  # type: ignore[attr-defined]
            fs.pipe_file(self.ws.backend.path(name), data)  # type: ignore[attr-defined]
        else:
            with open(os.path.join(self.dir, name), "wb") as f:
                f.write(data)

    def get(self, name: str) -> bytes:
        if self.kind == "memory":
            fs = self.ws.backend.fs  # type: ignore[attr-defined]
            return bytes(fs.cat_file(self.ws.backend.path(name)))  # type: ignore[attr-defined]
        with open(os.path.join(self.dir, name), "rb") as f:
            return f.read()

    def close(self) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()


@contextmanager
def env(kind: str, chunk: int, policy: bool = True) -> Iterator[Env]:
    e = Env(kind, chunk, policy)
    try:
        yield e
    finally:
        e.close()


KINDS = pytest.mark.parametrize("kind", ["memory", "local"])
CHUNKS = st.sampled_from([1, 2, 3, 5, 64, 1 << 20])


# -- the model itself -----------------------------------------------------------------
def test_model_sanity() -> None:
    m = Model.of("a\r\nb\rc\n\r\r\nd")
    assert m.view == "a\nb\rc\n\r\nd"
    assert m.lines == ["a", "b\rc", "\r", "d"]
    assert m.splice(1, 2, "X") == "aXb\rc\n\r\r\nd"  # the whole CRLF is the view's "\n"
    assert m.splice(0, 1, "Z") == "Z\r\nb\rc\n\r\r\nd"  # the \r of the CRLF is kept


# -- read ------------------------------------------------------------------------------
@KINDS
@SETTINGS
@given(doc=texts(), chunk=CHUNKS, data=st.data())
def test_read_window_is_exactly_the_view_lines(
    kind: str, doc: tuple[bool, str], chunk: int, data: st.DataObject
) -> None:
    bom, text = doc
    m = Model.of(text)
    lines = m.lines
    n = len(lines)
    offset = data.draw(st.integers(min_value=1, max_value=max(n, 1)), label="offset")
    limit = data.draw(st.integers(min_value=1, max_value=n + 3), label="limit")
    raw = encode(bom, text)
    with env(kind, chunk) as e:
        e.put("f.txt", raw)
        out = e.ctx.fs.read("/f.txt", offset, limit)
        assert out.lines == lines[offset - 1 : offset - 1 + limit]
        assert out.total == n
        assert out.offset == offset
        assert out.returned == len(out.lines)
        assert out.partial == (not (offset == 1 and out.returned == n))
        assert e.get("f.txt") == raw
        # the same through the tool: cat -n rows with the lines verbatim
        res = e.ctx.tools.execute(
            "str_replace_editor",
            {"command": "view", "path": "/f.txt", "view_range": [offset, offset + limit - 1]},
        )
        assert res.ok, res.text
        assert res.value.lines == out.lines


@KINDS
@SETTINGS
@given(doc=texts(), chunk=CHUNKS)
def test_read_past_the_end_is_invalid_argument(
    kind: str, doc: tuple[bool, str], chunk: int
) -> None:
    bom, text = doc
    n = len(Model.of(text).lines)
    with env(kind, chunk) as e:
        e.put("f.txt", encode(bom, text))
        with pytest.raises(FsError) as info:
            e.ctx.fs.read("/f.txt", max(n, 1) + 1, 5)
        assert info.value.code is ErrorCode.FS_INVALID_ARGUMENT


# -- replace ---------------------------------------------------------------------------
new_strings = st.text(
    st.sampled_from(["q", "Z", " ", "\t", "\n", "\r", "é", "😀", "\u2028"]), max_size=10
).filter(lambda s: "\r\n" not in s)


@KINDS
@SETTINGS
@given(doc=texts(), chunk=CHUNKS, new=new_strings, data=st.data())
def test_replace_splices_exactly_the_matched_region(
    kind: str, doc: tuple[bool, str], chunk: int, new: str, data: st.DataObject
) -> None:
    bom, text = doc
    m = Model.of(text)
    assume(m.view)
    start = data.draw(st.integers(min_value=0, max_value=len(m.view) - 1), label="start")
    end = data.draw(st.integers(min_value=start + 1, max_value=len(m.view)), label="end")
    # widen to the right until the needle is unique in the view
    while end <= len(m.view) and occurrences(m.view, m.view[start:end]) > 1:
        end += 1
    assume(end <= len(m.view))
    old = m.view[start:end]
    assume("\r\n" not in old)  # a model's CRLF means a newline; the view has it only for "\r\r\n"
    assume(old != new)
    raw = encode(bom, text)
    expected_text = m.splice(start, end, new)
    expected = encode(bom, expected_text)
    # bytes outside the region are the original bytes
    prefix = encode(bom, text[: m.omap[start]])
    suffix = text[m.omap[end] :].encode("utf-8")
    assert expected.startswith(prefix) and expected.endswith(suffix)
    with env(kind, chunk) as e:
        e.put("f.txt", raw)
        e.ctx.fs.read("/f.txt")
        out = e.ctx.fs.replace("/f.txt", old, new)
        got = e.get("f.txt")
        assert got == expected
        assert got.startswith(prefix) and got.endswith(suffix)
        assert out.replacements == 1
        assert out.first_line == m.view.count("\n", 0, start) + 1
        # a fresh read shows the model's view of the new bytes
        assert e.ctx.fs.read("/f.txt").lines == Model.of(expected_text).lines
        # the snippet: the new text's lines around the change
        assert (out.snippet, out.snippet_start) == snippet_of(
            Model.of(expected_text).lines, out.first_line, new, 1
        )


@KINDS
@SETTINGS
@given(doc=texts(), chunk=CHUNKS, data=st.data())
def test_replace_of_a_repeated_or_absent_needle_changes_nothing(
    kind: str, doc: tuple[bool, str], chunk: int, data: st.DataObject
) -> None:
    bom, text = doc
    m = Model.of(text)
    raw = encode(bom, text)
    with env(kind, chunk) as e:
        e.put("f.txt", raw)
        e.ctx.fs.read("/f.txt")
        absent = "\x01nowhere\x01"
        with pytest.raises(FsError) as info:
            e.ctx.fs.replace("/f.txt", absent, "x")
        assert info.value.code is ErrorCode.FS_NO_MATCH
        assert e.get("f.txt") == raw
        repeated = [c for c in set(m.view) if m.view.count(c) > 1 and c != "\r"]
        if repeated:
            c = data.draw(st.sampled_from(sorted(repeated)), label="repeated")
            with pytest.raises(FsError) as info:
                e.ctx.fs.replace("/f.txt", c, "\x02")
            assert info.value.code is ErrorCode.FS_MULTIPLE_MATCHES
            assert e.get("f.txt") == raw


@KINDS
@SETTINGS
@given(doc=texts(), chunk=CHUNKS, new=new_strings, data=st.data())
def test_replace_all_replaces_every_non_overlapping_occurrence(
    kind: str, doc: tuple[bool, str], chunk: int, new: str, data: st.DataObject
) -> None:
    bom, text = doc
    m = Model.of(text)
    chars = sorted(c for c in set(m.view) if c not in "\r")
    assume(chars)
    old = data.draw(st.sampled_from(chars), label="old")
    assume(old != new)
    # expected: splice every occurrence, right to left, on the original
    starts = [i for i, c in enumerate(m.view) if c == old]
    out_text = text
    for s in reversed(starts):
        out_text = (
            out_text[: m.omap[s]] + m.styled(new) + out_text[m.omap[s + 1] :]
        )
    raw = encode(bom, text)
    with env(kind, chunk) as e:
        e.put("f.txt", raw)
        e.ctx.fs.read("/f.txt")
        res = e.ctx.fs.replace("/f.txt", old, new, replace_all=True)
        assert res.replacements == len(starts)
        assert e.get("f.txt") == encode(bom, out_text)


# -- insert ----------------------------------------------------------------------------
insert_texts = st.text(
    st.sampled_from(["k", "L", " ", "\t", "\n", "é", "😀", "\r"]), max_size=12
).filter(lambda s: "\r\n" not in s)


@KINDS
@SETTINGS
@given(doc=texts(), chunk=CHUNKS, ins=insert_texts, data=st.data())
def test_insert_at_a_line_boundary(
    kind: str, doc: tuple[bool, str], chunk: int, ins: str, data: st.DataObject
) -> None:
    bom, text = doc
    m = Model.of(text)
    # Oracle, independent of the view machinery: the original text as whole lines, each
    # with its own terminator; the insert goes between line `line` and the next, verbatim
    # (only its newlines take the file's style), with nothing added.
    lines = re.findall(r"[^\n]*\n|[^\n]+$", text)
    line = data.draw(st.integers(min_value=0, max_value=len(lines)), label="insert_line")
    head, tail = "".join(lines[:line]), "".join(lines[line:])
    expected = encode(bom, head + m.styled(ins) + tail)
    raw = encode(bom, text)
    with env(kind, chunk) as e:
        e.put("f.txt", raw)
        e.ctx.fs.read("/f.txt")
        out = e.ctx.fs.insert("/f.txt", line, ins)
        got = e.get("f.txt")
        assert got == expected
        assert (out.snippet, out.snippet_start) == snippet_of(
            Model.of(head + m.styled(ins) + tail).lines, line + 1, ins, 1
        )
        # untouched bytes on both sides
        assert got.startswith(encode(bom, head))
        assert got.endswith(tail.encode("utf-8"))


@KINDS
@SETTINGS
@given(doc=texts(), chunk=CHUNKS, data=st.data())
def test_insert_out_of_range_changes_nothing(
    kind: str, doc: tuple[bool, str], chunk: int, data: st.DataObject
) -> None:
    bom, text = doc
    n = len(Model.of(text).lines)
    line = data.draw(st.sampled_from([-1, n + 1, n + 7]), label="insert_line")
    raw = encode(bom, text)
    with env(kind, chunk) as e:
        e.put("f.txt", raw)
        e.ctx.fs.read("/f.txt")
        with pytest.raises(FsError) as info:
            e.ctx.fs.insert("/f.txt", line, "zzz")
        assert info.value.code is ErrorCode.FS_INVALID_ARGUMENT
        assert e.get("f.txt") == raw


# -- whole-file write -----------------------------------------------------------------
contents = st.lists(
    st.sampled_from(["w", "Y", " ", "\t", "\n", "\r\n", "\r", "é", "😀"]), max_size=16
).map("".join)


@KINDS
@SETTINGS
@given(doc=texts(), chunk=CHUNKS, content=contents, windowed=st.booleans())
def test_write_over_keeps_bom_and_dominant_newline(
    kind: str, doc: tuple[bool, str], chunk: int, content: str, windowed: bool
) -> None:
    bom, text = doc
    m = Model.of(text)
    expected = encode(bom, m.styled(content))
    raw = encode(bom, text)
    with env(kind, chunk) as e:
        e.put("f.txt", raw)
        if windowed:
            e.ctx.fs.read("/f.txt", 1, 1)
        else:
            e.ctx.fs.read("/f.txt")
        out = e.ctx.fs.write("/f.txt", content)
        assert e.get("f.txt") == expected
        assert out.created is False
        assert out.size == len(expected)


@KINDS
@SETTINGS
@given(doc=texts(), content=contents)
def test_write_over_without_policy_keeps_bom_and_dominant_newline(
    kind: str, doc: tuple[bool, str], content: str
) -> None:
    bom, text = doc
    m = Model.of(text)
    with env(kind, 1 << 20, policy=False) as e:
        e.put("f.txt", encode(bom, text))
        e.ctx.fs.write("/f.txt", content)
        assert e.get("f.txt") == encode(bom, m.styled(content))


@KINDS
@SETTINGS
@given(content=contents, bom=st.booleans())
def test_write_of_a_new_file_is_verbatim(kind: str, content: str, bom: bool) -> None:
    with env(kind, 1 << 20) as e:
        e.ctx.fs.write("/new.txt", (BOM if bom else "") + content)
        assert e.get("new.txt") == encode(bom, content)


# -- not text --------------------------------------------------------------------------
NOT_TEXT = [
    b"abc\xff\n",
    b"ok\n\xc3(\n",
    b"truncated \xe2\x82",
    b"surrogate \xed\xa0\x80\n",
    b"overlong \xc0\xaf\n",
    b"\xef\xbb\xbfbom then bad \x80\n",
    b"nul\x00here\n",
    b"\x00",
    b"x" * 8191 + b"\x00" + b"\nmore\n",
    BOM_BYTES + b"y" * 8188 + b"\x00\n",
]


@KINDS
@pytest.mark.parametrize("chunk", [1, 7, 4096, 1 << 20])
@pytest.mark.parametrize("raw", NOT_TEXT, ids=range(len(NOT_TEXT)))
def test_not_text_is_refused_and_left_unchanged(kind: str, chunk: int, raw: bytes) -> None:
    with env(kind, chunk) as e:
        e.put("b.bin", raw)
        for call in (
            lambda: e.ctx.fs.read("/b.bin"),
            lambda: e.ctx.fs.read("/b.bin", 1, 1),
            lambda: e.ctx.fs.replace("/b.bin", "x", "y"),
            lambda: e.ctx.fs.insert("/b.bin", 0, "y"),
        ):
            with pytest.raises(FsError) as info:
                call()
            assert info.value.code is ErrorCode.FS_NOT_TEXT
            assert e.get("b.bin") == raw
        res = e.ctx.tools.execute("read", {"file_path": "/b.bin"})
        assert not res.ok and res.error is not None
        assert res.error.code is ErrorCode.FS_NOT_TEXT
        # write-over: never rewritten. Nothing could be observed, so the policy refuses.
        res = e.ctx.tools.execute("write", {"file_path": "/b.bin", "content": "text\n"})
        assert not res.ok and res.error is not None
        assert res.error.code in (ErrorCode.FS_NOT_TEXT, ErrorCode.FS_NOT_OBSERVED)
        assert e.get("b.bin") == raw


@KINDS
@pytest.mark.parametrize("raw", NOT_TEXT, ids=range(len(NOT_TEXT)))
def test_not_text_write_over_without_policy_is_not_text(kind: str, raw: bytes) -> None:
    with env(kind, 1 << 20, policy=False) as e:
        e.put("b.bin", raw)
        with pytest.raises(FsError) as info:
            e.ctx.fs.write("/b.bin", "text\n")
        assert info.value.code is ErrorCode.FS_NOT_TEXT
        assert e.get("b.bin") == raw


@KINDS
@pytest.mark.parametrize("chunk", [1, 4096, 1 << 20])
def test_nul_after_the_first_8_kib_is_text(kind: str, chunk: int) -> None:
    raw = b"x" * 8192 + b"\x00\nend\n"
    with env(kind, chunk) as e:
        e.put("f.txt", raw)
        out = e.ctx.fs.read("/f.txt")
        assert out.lines == ["x" * 8192 + "\x00", "end"]
        e.ctx.fs.replace("/f.txt", "end", "END")
        assert e.get("f.txt") == b"x" * 8192 + b"\x00\nEND\n"


@SETTINGS
@given(doc=texts(), data=st.data())
def test_line_count_and_lines_near_agree_with_the_split_lines(
    doc: tuple[bool, str], data: st.DataObject
) -> None:
    from fsseam.text import TextDoc

    d = TextDoc(doc[1], doc[0])
    lines = Model.of(doc[1]).lines
    assert d.line_count == len(lines)
    starts = [0] + [i + 1 for i, c in enumerate(d.view) if c == "\n"]
    line = data.draw(st.integers(min_value=1, max_value=len(starts)), label="line")
    first = data.draw(st.integers(min_value=1, max_value=line), label="first")
    last = data.draw(st.integers(min_value=line - 1, max_value=line + 5), label="last")
    assert d.lines_near(starts[line - 1], line, first, last) == lines[first - 1 : last]
