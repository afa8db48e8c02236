"""Edits whose old text occurs very often stay bounded: a unique match stops at the second
occurrence, a refusal counts and lists a bounded number of them, and replace_all keeps no
offsets (16 MiB of ``a`` once took +600 MiB to refuse and +1.7 GB to replace)."""

from __future__ import annotations

import tracemalloc
import uuid
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fsseam import ErrorCode, FsError, Overwrite, Workspace
from fsseam.edits import MAX_COUNTED_MATCHES, MAX_LISTED_MATCHES, Replace, Span, apply
from fsseam.text import TextDoc, decode, split_lines

from .helpers import call, fails, ok, raw

MiB = 1 << 20
BIG = 16 * MiB


# -- the plan is the one the offset-listing algorithm made ----------------------------------


def _reference(doc: TextDoc, old: str, new: str, replace_all: bool
               ) -> tuple[bytes, Span] | tuple[str, list[int]]:
    """The plan as it was made before: every overlapping offset listed, then the
    non-overlapping ones chosen left to right and spliced in."""
    old, new = old.replace("\r\n", "\n"), new.replace("\r\n", "\n")
    view = doc.view
    starts = []
    i = view.find(old)
    while i >= 0:
        starts.append(i)
        i = view.find(old, i + 1)
    if not starts:
        return "none", []
    if len(starts) > 1 and not replace_all:
        return "many", starts
    chosen, end = [], -1
    for s in starts:
        if s >= end:
            chosen.append(s)
            end = s + len(old)
    after = doc.splice([(s, s + len(old), new) for s in chosen])
    first = doc.line_of(chosen[0])
    last = first + max(0, len(split_lines(new)) - 1)
    return after.encode(), Span(first, last, len(chosen), view.rfind("\n", 0, chosen[0]) + 1)


_PIECES = st.sampled_from(["a", "b", "\n", "\r", "\r\n", "ab", "aa"])
_TEXTS = st.lists(_PIECES, max_size=30).map("".join)


@settings(max_examples=600, deadline=None)
@given(text=_TEXTS, old=st.lists(_PIECES, min_size=1, max_size=4).map("".join),
       new=st.lists(_PIECES, max_size=3).map("".join), replace_all=st.booleans(),
       bom=st.booleans())
def test_plans_match_the_offset_listing_algorithm(text: str, old: str, new: str,
                                                  replace_all: bool, bom: bool) -> None:
    if old.replace("\r\n", "\n") == new.replace("\r\n", "\n"):
        return  # refused before any search
    doc = decode((b"\xef\xbb\xbf" if bom else b"") + text.encode(), "/f.txt")
    expected = _reference(doc, old, new, replace_all)
    try:
        plan = apply(doc, [Replace(old, new, replace_all)], "/f.txt")
    except FsError as e:
        kind, starts = expected
        assert isinstance(kind, str) and isinstance(starts, list), (e, expected)
        if kind == "none":
            assert e.code is ErrorCode.FS_NO_MATCH
            return
        assert e.code is ErrorCode.FS_MULTIPLE_MATCHES
        assert e.details["count"] == len(starts)
        lines = list(dict.fromkeys(doc.line_of(s) for s in starts))
        assert e.details["match_lines"] == lines[:MAX_LISTED_MATCHES]
        assert e.details["more"] == (len(lines) > MAX_LISTED_MATCHES)
        return
    data, span = expected
    assert plan.after.encode() == data
    assert plan.spans == (span,)


def test_a_refusal_names_each_line_once_and_at_most_five() -> None:
    doc = decode(b"x x\nx\ny\n" + b"x\n" * 10, "/f.txt")
    with pytest.raises(FsError) as info:
        apply(doc, [Replace("x", "z")], "/f.txt")
    assert info.value.details["match_lines"] == [1, 2, 4, 5, 6]
    assert info.value.render() == (
        "old_string occurs 13 times in /f.txt, at lines 1, 2, 4, 5, 6 and on later lines. "
        "Include more surrounding lines in old_string to make it unique, or set replace_all "
        "to replace every occurrence."
    )


def test_a_refusal_counts_up_to_its_bound() -> None:
    doc = decode(b"a" * (MAX_COUNTED_MATCHES + 1), "/f.txt")
    with pytest.raises(FsError) as info:
        apply(doc, [Replace("a", "b")], "/f.txt")
    assert info.value.render().startswith(
        f"old_string occurs more than {MAX_COUNTED_MATCHES} times in /f.txt, at line 1. "
    )
    doc = decode(b"a" * MAX_COUNTED_MATCHES, "/f.txt")
    with pytest.raises(FsError) as info:
        apply(doc, [Replace("a", "b")], "/f.txt")
    assert info.value.render().startswith(
        f"old_string occurs {MAX_COUNTED_MATCHES} times in /f.txt, at line 1. "
    )


# -- 16 MiB of "a", through the tool, on each store ------------------------------------------


def _workspace(store: str, root: Path) -> Workspace:
    if store == "local":
        return Workspace(str(root), load_entry_points=False)
    return Workspace(f"memory://bounded-{uuid.uuid4().hex}", {"global_store": False},
                     load_entry_points=False)


def _peak(run: object) -> tuple[object, int]:
    assert callable(run)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        result = run()
        return result, tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("store", ["memory", "local"])
def test_a_unique_match_in_16_mib_of_a_is_refused_in_bounded_memory(store: str,
                                                                     root: Path) -> None:
    ws = _workspace(store, root)
    ws.backend.write("big.txt", b"a" * BIG, Overwrite())
    ok(call(ws, "a", "read", file_path="/big.txt", limit=1))
    res, peak = _peak(lambda: call(ws, "a", "edit", file_path="/big.txt", old_string="a",
                                   new_string="b"))
    fails(res, ErrorCode.FS_MULTIPLE_MATCHES)  # type: ignore[arg-type]
    assert res.text == (  # type: ignore[attr-defined]
        f"Error [FS_MULTIPLE_MATCHES]: old_string occurs more than {MAX_COUNTED_MATCHES} "
        "times in /big.txt, at line 1. Include more surrounding lines in old_string to make "
        "it unique, or set replace_all to replace every occurrence."
    )
    # Measured: +32 MiB on memory, +48 MiB local (the bytes and their text); it was +600 MiB.
    assert peak < 4 * BIG, peak
    assert raw(ws, "/big.txt") == b"a" * BIG


@pytest.mark.parametrize("store", ["memory", "local"])
def test_replace_all_in_16_mib_of_a_keeps_no_offsets(store: str, root: Path) -> None:
    ws = _workspace(store, root)
    ws.backend.write("big.txt", b"a" * BIG, Overwrite())
    ok(call(ws, "a", "read", file_path="/big.txt", limit=1))
    res, peak = _peak(lambda: call(ws, "a", "edit", file_path="/big.txt", old_string="aa",
                                   new_string="b", replace_all=True))
    ok(res)  # type: ignore[arg-type]
    assert res.text.startswith(  # type: ignore[attr-defined]
        f"Edited /big.txt: replaced {BIG // 2} occurrences.\n     1\tbbb")
    # Measured: +48 MiB on memory, +64 MiB local (old and new bytes and texts); it was
    # +1.7 GB.
    assert peak < 6 * BIG, peak
    assert raw(ws, "/big.txt") == b"b" * (BIG // 2)


def test_replace_all_with_mixed_newlines_keeps_no_offsets(root: Path) -> None:
    """CRLF and LF in one file: the occurrences are spliced one by one into the original,
    each written out as found."""
    n = MiB // 5
    data = b"a\r\na\n" * n
    doc = decode(data, "/f.txt")
    plan, peak = _peak(lambda: apply(doc, [Replace("a\na", "b", replace_all=True)], "/f.txt"))
    assert plan.after.encode() == b"b\n" * n  # type: ignore[attr-defined]
    assert plan.replacements == n  # type: ignore[attr-defined]
    # Measured: +1.1 MiB (the new text); the lists of offsets took +42 MiB.
    assert peak < 3 * len(data), peak


def test_a_stale_edit_counts_its_target_up_to_the_bound() -> None:
    ws = Workspace(f"memory://bounded-{uuid.uuid4().hex}", {"global_store": False},
                   load_entry_points=False)
    ws.backend.write("f.txt", b"a\n", Overwrite())
    ok(call(ws, "a", "read", file_path="/f.txt"))
    ws.backend.write("f.txt", b"a" * (MAX_COUNTED_MATCHES * 4) + b"\n", Overwrite())
    res = fails(call(ws, "a", "edit", file_path="/f.txt", old_string="a", new_string="b"),
                ErrorCode.FS_STALE)
    assert f"Your old_string now occurs more than {MAX_COUNTED_MATCHES} times in it." in res.text
    assert raw(ws, "/f.txt") == b"a" * (MAX_COUNTED_MATCHES * 4) + b"\n"
