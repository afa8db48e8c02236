"""Edit plans: pure functions, and one compare-and-swap for a whole sequence of edits."""

from __future__ import annotations

import pytest

from fsseam import ErrorCode, FsError, Overwrite, Workspace
from fsseam.edits import Insert, Replace, apply, find_matches
from fsseam.text import decode


def test_overlapping_occurrences_are_ambiguous() -> None:
    d = decode(b"aaa\n", "/f.txt")
    assert find_matches(d.view, "aa") == [0, 1]
    with pytest.raises(FsError) as info:
        apply(d, [Replace("aa", "b")], "/f.txt")
    assert info.value.code is ErrorCode.FS_MULTIPLE_MATCHES
    assert info.value.details["count"] == 2


def test_replace_all_replaces_non_overlapping_left_to_right() -> None:
    d = decode(b"aaaaa\n", "/f.txt")
    plan = apply(d, [Replace("aa", "b", replace_all=True)], "/f.txt")
    assert plan.after.encode() == b"bba\n"
    assert plan.replacements == 2


def test_a_sequence_applies_each_edit_to_the_result_of_the_previous() -> None:
    d = decode(b"one\r\ntwo\r\nthree\r\n", "/f.txt")
    plan = apply(
        d,
        [Replace("two", "2"), Replace("2\nthree", "2\n3"), Insert(0, "zero\n")],
        "/f.txt",
    )
    assert plan.after.encode() == b"zero\r\none\r\n2\r\n3\r\n"
    assert [(s.first_line, s.last_line, s.count) for s in plan.spans] == [
        (2, 2, 1), (2, 3, 1), (1, 1, 1),
    ]
    assert plan.before.encode() == b"one\r\ntwo\r\nthree\r\n"


def test_a_failing_edit_names_its_position() -> None:
    d = decode(b"a\nb\n", "/f.txt")
    with pytest.raises(FsError) as info:
        apply(d, [Replace("a", "A"), Replace("a", "x")], "/f.txt")
    assert info.value.code is ErrorCode.FS_NO_MATCH
    assert info.value.details["edit_index"] == 2


@pytest.mark.parametrize(
    ("data", "line", "text", "expected"),
    [
        (b"l1\nl2\nl3\n", 2, "X", b"l1\nl2\nXl3\n"),  # the rule, verbatim
        (b"l1\nl2\nl3\n", 2, "X\n", b"l1\nl2\nX\nl3\n"),
        (b"l1\nl2\nl3\n", 0, "X", b"Xl1\nl2\nl3\n"),
        (b"l1\nl2\nl3\n", 3, "X", b"l1\nl2\nl3\nX"),
        (b"l1\nl2", 2, "X", b"l1\nl2X"),
        (b"", 0, "X", b"X"),
        (b"a\r\nb\r\n", 1, "x\ny\n", b"a\r\nx\r\ny\r\nb\r\n"),
    ],
)
def test_insert_is_verbatim_at_the_boundary(
    data: bytes, line: int, text: str, expected: bytes
) -> None:
    plan = apply(decode(data, "/f.txt"), [Insert(line, text)], "/f.txt")
    assert plan.after.encode() == expected


def test_seam_edit_is_one_write_and_all_or_nothing() -> None:
    ws = Workspace("memory://edit-plans-test", {"global_store": False})
    ws.backend.write("f.txt", b"alpha\nbeta\ngamma\n", Overwrite())
    writes: list[bytes] = []
    real_write = ws.backend.write

    def counting(key: str, data: bytes, pre: object, **kw: object) -> object:
        writes.append(data)
        return real_write(key, data, pre)  # type: ignore[arg-type]

    ws.backend.write = counting  # type: ignore[method-assign]
    fs = ws.context("a").fs
    fs.read("/f.txt")
    with pytest.raises(FsError) as info:
        fs.edit("/f.txt", [Replace("alpha", "A"), Replace("nope", "x")])
    assert info.value.code is ErrorCode.FS_NO_MATCH
    assert writes == []
    out = fs.edit("/f.txt", [Replace("alpha", "A"), Replace("gamma", "G"), Insert(1, "+\n")])
    assert writes == [b"A\n+\nbeta\nG\n"]
    assert (out.operation, out.edits, out.replacements) == ("edit", 3, 3)
    assert "-alpha\n+A\n++\n beta\n-gamma\n+G\n" in (out.diff or "")
