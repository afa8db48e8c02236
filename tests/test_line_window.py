"""The streaming line window agrees with the whole-file view for any chunking."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fsseam.text import LineWindow, decode, split_lines

from .budget import examples

PIECES = st.sampled_from(["a", "bc", "\n", "\r\n", "\r", "\t", "é", "😀", " "])


@settings(max_examples=examples(400), deadline=None)
@given(
    text=st.lists(PIECES, max_size=60).map("".join),
    bom=st.booleans(),
    first=st.integers(1, 20),
    limit=st.integers(1, 8),
    cuts=st.lists(st.integers(1, 9), min_size=1, max_size=40),
)
def test_window_matches_view(
    text: str, bom: bool, first: int, limit: int, cuts: list[int]
) -> None:
    data = (("\ufeff" if bom else "") + text).encode()
    doc = decode(data, "/x")
    lines = split_lines(doc.view)
    w = LineWindow("/x", first, limit)
    i = 0
    k = 0
    while i < len(data):
        step = cuts[k % len(cuts)]
        w.feed(data[i : i + step])
        i += step
        k += 1
    w.feed(b"", final=True)
    assert w.count == len(lines)
    assert w.lines == lines[first - 1 : first - 1 + limit]
    assert w.bom is bom
    assert w.format.newline == doc.newline


def test_invalid_utf8_outside_window_is_not_decoded() -> None:
    w = LineWindow("/x", 1, 1)
    w.feed(b"good\n" + b"\xff\xfe bad\n" * 3, final=True)
    assert w.lines == ["good"] and w.count == 4


def test_invalid_utf8_inside_window_is_not_text() -> None:
    import pytest

    from fsseam import ErrorCode, FsError

    w = LineWindow("/x", 2, 1)
    with pytest.raises(FsError) as info:
        w.feed(b"good\n\xff bad\n", final=True)
    assert info.value.code is ErrorCode.FS_NOT_TEXT


def _feed(w: LineWindow, data: bytes, cuts: list[int]) -> LineWindow:
    i = k = 0
    while i < len(data):
        step = cuts[k % len(cuts)]
        w.feed(data[i : i + step])
        i += step
        k += 1
    w.feed(b"", final=True)
    return w


LONG_PIECES = st.sampled_from(["a", "bcdefgh", "\n", "\r\n", "\r", "é", "😀", "x" * 30])


@settings(max_examples=examples(400), deadline=None)
@given(
    text=st.lists(LONG_PIECES, max_size=80).map("".join),
    first=st.integers(1, 12),
    limit=st.integers(1, 30),
    max_chars=st.integers(0, 200),
    max_line=st.one_of(st.none(), st.integers(1, 40)),
    cuts=st.lists(st.integers(1, 60), min_size=1, max_size=20),
)
def test_budgeted_window_is_the_same_for_any_chunking(
    text: str, first: int, limit: int, max_chars: int, max_line: int | None, cuts: list[int]
) -> None:
    """With an output budget and a line cap, the lines kept, the lines cut and the count do
    not depend on how the bytes arrive: whole (one slice of the chunk decoded at once),
    byte by byte, or in random pieces."""
    data = text.encode()
    lines = split_lines(decode(data, "/x").view)
    whole = _feed(LineWindow("/x", first, limit, max_chars, max_line), data, [len(data) or 1])
    for pieces in ([1], cuts):
        w = _feed(LineWindow("/x", first, limit, max_chars, max_line), data, pieces)
        assert (w.lines, w.cut, w.count) == (whole.lines, whole.cut, whole.count)
    assert whole.count == len(lines)
    wanted = lines[first - 1 : first - 1 + limit]
    assert whole.lines == [
        line[:max_line] if max_line is not None else line for line in wanted[: len(whole.lines)]
    ]
    assert whole.cut == {
        first + i: len(line)
        for i, line in enumerate(wanted[: len(whole.lines)])
        if max_line is not None and len(line) > max_line
    }


@settings(max_examples=examples(300), deadline=None)
@given(text=st.text(st.sampled_from(["a", "\n", "é"]), max_size=120), cap=st.integers(0, 12))
def test_within_is_the_longest_line_check(text: str, cap: int) -> None:
    from fsseam.text import within

    assert within(text, cap) == (max(map(len, text.split("\n"))) <= cap)


BYTE_PIECES = st.sampled_from(
    [b"a", b"bc", b"\n", b"\r\n", b"\r", b"\xc3\xa9", b"\xc3", b"\xa9", b"\xff", b"x" * 20]
)


def _view_lines(data: bytes) -> list[bytes]:
    """The reference: the file's lines as bytes, split on ``\\n`` (a final newline ends the
    last line), each CRLF's ``\\r`` dropped."""
    if not data:
        return []
    lines = data.split(b"\n")
    last = lines.pop()
    lines = [line[:-1] if line.endswith(b"\r") else line for line in lines]
    return lines + ([last] if last else [])


@settings(max_examples=examples(400), deadline=None)
@given(
    data=st.lists(BYTE_PIECES, max_size=60).map(b"".join),
    first=st.integers(1, 12),
    limit=st.integers(1, 30),
    cuts=st.lists(st.integers(1, 60), min_size=1, max_size=20),
    whole=st.booleans(),
)
def test_only_the_window_is_decoded_and_decoded_all_means_utf8(
    data: bytes, first: int, limit: int, cuts: list[int], whole: bool
) -> None:
    """Bytes that are not UTF-8 are FS_NOT_TEXT exactly when they lie in a window line,
    however the bytes arrive; a window that says it decoded every byte holds a UTF-8
    file (the read then skips validating the whole file again)."""
    from fsseam import ErrorCode, FsError

    wanted = _view_lines(data)[first - 1 : first - 1 + limit]
    try:
        texts = [line.decode("utf-8") for line in wanted]
    except UnicodeDecodeError:
        texts = None
    w = LineWindow("/x", first, limit)
    try:
        _feed(w, data, [len(data) or 1] if whole else cuts)
    except FsError as e:
        assert e.code is ErrorCode.FS_NOT_TEXT
        assert texts is None
        return
    assert w.lines == texts
    assert w.count == len(_view_lines(data))
    if w.decoded_all:
        data.decode("utf-8")


def test_decoded_all_only_when_every_byte_was_decoded() -> None:
    def window(data: bytes, first: int, limit: int) -> LineWindow:
        return _feed(LineWindow("/x", first, limit), data, [len(data)])

    assert window(b"a\nb\nc", 1, 5).decoded_all  # every line in the window
    assert not window(b"\xff\nok\n", 2, 5).decoded_all  # line 1 ends before the window
    assert not window(b"ok\n\xff\n", 1, 1).decoded_all  # line 2 is past it
    assert not window(b"ok\nok\n\xff", 1, 2).decoded_all  # so is the final, unended line
    assert window(b"ok\nok\nend", 1, 3).decoded_all
    assert not window(b"a\n" * 3 + b"\xff\n", 6, 1).decoded_all  # all before the window


@settings(max_examples=examples(100), deadline=None)
@given(
    line=st.integers(0, 90),
    lines=st.integers(0, 800),
    head=st.binary(max_size=5000),
)
def test_newlines_is_the_count_of_newline_bytes(line: int, lines: int, head: bytes) -> None:
    """With numpy loaded (imported here), its count from 16 KiB, and ``count`` below it,
    count every ``\\n`` byte."""
    import numpy  # noqa: F401  (loaded: newlines uses it)

    from fsseam.text import newlines

    data = head + (b"x" * line + b"\n") * lines + b"\r\n\n"
    assert newlines(data) == data.count(b"\n")


_WITHOUT_NUMPY = """
import random, sys
sys.modules["numpy"] = None  # import numpy raises ImportError, as where it is not installed
from fsseam.text import newlines
rng = random.Random(7)
for _ in range(300):
    line, lines = rng.randrange(0, 300), rng.randrange(0, 2000)
    head = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 5000)))
    data = head + (b"x" * line + b"\\n") * lines + b"\\r\\n\\n"
    assert newlines(data) == data.count(b"\\n"), (line, lines, len(head))
print("counted")
"""

_NUMPY_ONLY_ONCE_LOADED = """
import sys
from unittest import mock
import fsseam, fsseam.text
big = b"a\\n" * 9000
print(fsseam.text.newlines(big), "numpy" in sys.modules)
import numpy
with mock.patch.object(numpy, "count_nonzero", wraps=numpy.count_nonzero) as counted:
    print(fsseam.text.newlines(big), counted.call_count)
sys.modules["numpy"] = mock.MagicMock()  # a stand-in is not trusted
print(fsseam.text.newlines(big))
"""


def test_newlines_without_numpy_chooses_between_the_two_loops() -> None:
    """Without numpy, either loop (chosen by the first 4 KiB: short lines by ``count``, long
    ones by deleting them) counts every ``\\n`` byte."""
    run = subprocess.run([sys.executable, "-c", _WITHOUT_NUMPY], capture_output=True, text=True)
    assert (run.returncode, run.stdout, run.stderr) == (0, "counted\n", "")


def test_numpy_is_used_once_loaded_and_never_imported_by_fsseam() -> None:
    """fsseam never imports numpy (its import starts a thread pool and can end a process
    whose address space is capped); once the process has loaded it, a large chunk is
    counted by it; a stand-in module under its name is not trusted."""
    run = subprocess.run([sys.executable, "-c", _NUMPY_ONLY_ONCE_LOADED],
                         capture_output=True, text=True)
    assert (run.returncode, run.stdout.split(), run.stderr) == (
        0, ["9000", "False", "9000", "1", "9000"], "")


@pytest.mark.parametrize("first,limit", [(1, 2000), (2, 50), (1, 10_000), (5_000, 3)])
def test_a_large_chunk_gives_the_same_window_either_way(first: int, limit: int) -> None:
    """A chunk over 256 KiB is decoded and split whole only when the window looks to take
    all its lines; else its window lines are split out of the bytes: the same lines, the
    same count either way."""
    data = b"".join(b"line %d \xc3\xa9 %s\r\n" % (i, b"x" * (i % 50)) for i in range(7_000))
    assert len(data) > 256 << 10
    lines = split_lines(decode(data, "/x").view)
    w = _feed(LineWindow("/x", first, limit), data, [len(data)])
    assert w.lines == lines[first - 1 : first - 1 + limit]
    assert (w.count, w.crlf, w.newlines) == (7_000, 7_000, 7_000)
    assert w.decoded_all is (first == 1 and limit >= 7_000)
