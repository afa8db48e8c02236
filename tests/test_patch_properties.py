"""Property: a V4A patch made by difflib from any edit applies and gives the target bytes
exactly, with LF or CRLF newlines, with or without a BOM and a final newline; and where
the text repeats itself the patch is applied exactly or refused, never applied elsewhere."""

from __future__ import annotations

import difflib
import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fsseam import ErrorCode, FsError, Workspace
from fsseam.patches import apply_hunks, parse_update_diff
from fsseam.text import decode
from fsseam.versions import Overwrite

from .budget import examples

# Line contents: anything but newlines and NUL, including what looks like patch syntax.
_CHARS = st.characters(blacklist_characters="\n\r\x00", codec="utf-8")
_TRICKY = st.sampled_from(["", " ", "\t", "@@", "@@ x", "*** End of File", "*** End Patch",
                           "-", "+", " -x", "+y", "é€𝄞"])
LINE = st.one_of(st.text(_CHARS, max_size=12), _TRICKY)
NEWLINE = st.sampled_from(["\n", "\r\n"])
_counter = itertools.count()


def v4a(a: list[str], b: list[str]) -> str:
    """The V4A hunks (bare ``@@`` headers, 3 lines of context) turning ``a`` into ``b``."""
    out: list[str] = []
    for group in difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(3):
        out.append("@@")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [" " + line for line in a[i1:i2]]
            else:
                out += ["-" + line for line in a[i1:i2]]
                out += ["+" + line for line in b[j1:j2]]
    return "\n".join(out) + "\n"


def file_bytes(lines: list[str], newline: str, final: bool, bom: bool) -> bytes:
    text = newline.join(lines) + (newline if lines and final else "")
    return (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8")


def canonical(lines: list[str], final: bool) -> tuple[list[str], bool]:
    """The lines a file of these lines really has: without a final newline, a last empty
    line is no line at all (``a\\n`` + ``""`` is ``a\\n``)."""
    if not final and lines and lines[-1] == "":
        return lines[:-1], True
    return lines, final


@st.composite
def edits(draw: st.DrawFn, unique: bool) -> tuple[list[str], list[str], bool]:
    """A text and an edit of it: lines replaced, inserted and deleted at random places."""
    source, final = canonical(draw(st.lists(LINE, max_size=25, unique=unique)),
                              draw(st.booleans()))
    target = list(source)
    for _ in range(draw(st.integers(1, 5))):
        op = draw(st.sampled_from(["insert", "delete", "replace"]))
        at = draw(st.integers(0, len(target)))
        new = draw(st.lists(LINE, min_size=1, max_size=3))
        if op == "insert" or not target:
            target[at:at] = new
        elif op == "delete":
            del target[at: at + draw(st.integers(1, 3))]
        else:
            target[at: at + draw(st.integers(1, 3))] = new
    return source, target, final


def expected(source: list[str], target: list[str], newline: str, final: bool,
             bom: bool) -> bytes:
    # A file with no newline at all has no newline style of its own: lines added to it
    # end with \n. And an empty file counts as ending with a newline.
    if len(source) + final < 2:
        newline = "\n"
    return file_bytes(target, newline, final or not source, bom)


@settings(max_examples=examples(300), deadline=None)
@given(edits(unique=True), NEWLINE, st.booleans())
def test_a_difflib_patch_reproduces_the_target_exactly(
    case: tuple[list[str], list[str], bool], newline: str, bom: bool
) -> None:
    source, target, final = case
    if source == target:
        return
    doc = decode(file_bytes(source, newline, final, bom), "/f")
    out = apply_hunks(doc, parse_update_diff(v4a(source, target)), "/f")
    assert out.encode() == expected(source, target, newline, final, bom)


# A small alphabet: the text repeats itself, so hunks can match in several places.
REPEATING = st.sampled_from(["a", "b", "c", ""])


@st.composite
def repeating_edits(draw: st.DrawFn) -> tuple[list[str], list[str], bool]:
    source, final = canonical(draw(st.lists(REPEATING, max_size=30)), draw(st.booleans()))
    target = draw(st.lists(REPEATING, max_size=30))
    return source, target, final


@settings(max_examples=examples(300), deadline=None)
@given(repeating_edits(), NEWLINE)
def test_a_patch_on_repeating_text_is_exact_or_refused(
    case: tuple[list[str], list[str], bool], newline: str
) -> None:
    source, target, final = case
    if source == target:
        return
    doc = decode(file_bytes(source, newline, final, False), "/f")
    try:
        out = apply_hunks(doc, parse_update_diff(v4a(source, target)), "/f")
    except FsError as e:
        assert e.code is ErrorCode.FS_MULTIPLE_MATCHES, e
        return
    assert out.encode() == expected(source, target, newline, final, False)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits(unique=True), NEWLINE, st.booleans())
def test_through_apply_patch_the_bytes_stored_are_the_target(
    case: tuple[list[str], list[str], bool], newline: str, bom: bool
) -> None:
    source, target, final = case
    if source == target:
        return
    ws = Workspace(f"memory://patch-property-{next(_counter)}")
    ctx = ws.context("a")
    data = file_bytes(source, newline, final, bom)
    ws.backend.write("f.txt", data, Overwrite())
    assert ctx.tools.execute("read", {"file_path": "/f.txt"}).ok
    diff = v4a(source, target)
    patch = "*** Begin Patch\n*** Update File: f.txt\n" + diff + "*** End Patch\n"
    res = ctx.tools.execute("apply_patch", {"patch": patch})
    assert res.ok, res.text
    assert ws.backend.read("f.txt").data == expected(source, target, newline, final, bom)
