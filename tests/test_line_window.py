"""The streaming line window agrees with the whole-file view for any chunking."""

from __future__ import annotations

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
