"""The diffs carried by fs/written apply: old + diff == new, on every path of diff.py."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fsseam.diff as diff_mod
from fsseam.diff import unified_diff

from .budget import examples

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@$")


def apply(old: str, patch: str) -> str:
    """A minimal unified-diff applier (enough to check ours)."""
    src = old.splitlines(keepends=True)
    lines = patch.splitlines(keepends=True)
    assert lines[0].startswith("--- a/") and lines[1].startswith("+++ b/")
    out: list[str] = []
    pos = 0
    i = 2
    while i < len(lines):
        m = HUNK.match(lines[i].rstrip("\n"))
        assert m, lines[i]
        a_start, a_len = int(m.group(1)), int(m.group(2) or 1)
        first = a_start - 1 if a_len else a_start
        out.extend(src[pos:first])
        pos = first
        i += 1
        while i < len(lines) and not lines[i].startswith("@@"):
            tag, text = lines[i][0], lines[i][1:]
            if i + 1 < len(lines) and lines[i + 1].startswith("\\ No newline"):
                text = text[:-1]
                i += 1
            if tag in " -":
                assert src[pos] == text, (src[pos], text)
                pos += 1
            if tag in " +":
                out.append(text)
            i += 1
    out.extend(src[pos:])
    return "".join(out)


TEXT = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "d", "\n", "e\n"]), max_size=25).map(
    "".join
)


@pytest.mark.parametrize("work", [10**9, -1], ids=["difflib", "one-hunk"])
@settings(max_examples=examples(300), deadline=None)
@given(old=TEXT, new=TEXT)
def test_diff_applies(work: int, old: str, new: str) -> None:
    saved = diff_mod.MAX_DIFF_WORK
    diff_mod.MAX_DIFF_WORK = work
    try:
        patch = unified_diff("/f", old, new)
    finally:
        diff_mod.MAX_DIFF_WORK = saved
    if old == new:
        assert patch == ""
    else:
        assert apply(old, patch) == new


def test_large_rewrite_is_one_hunk_and_fast_path() -> None:
    old = "".join(f"line {i}\n" for i in range(3000))
    new = "".join(f"LINE {i}\n" for i in range(3000))
    patch = unified_diff("/big", old, new)
    assert patch.count("\n@@ ") + patch.startswith("@@") == 1
    assert patch.splitlines()[2] == "@@ -1,3000 +1,3000 @@"
    assert apply(old, patch) == new
