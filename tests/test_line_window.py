"""The streaming line window agrees with the whole-file view for any chunking."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fsseam.text import LineWindow, decode, split_lines

PIECES = st.sampled_from(["a", "bc", "\n", "\r\n", "\r", "\t", "é", "😀", " "])


@settings(max_examples=400, deadline=None)
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
