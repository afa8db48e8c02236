"""The patch parser and hunk applier (pure): the envelope, where hunks apply, exact bytes."""

from __future__ import annotations

import pytest

from fsseam import ErrorCode, FsError
from fsseam.patches import (
    AddFile,
    DeleteFile,
    PatchHunk,
    UpdateFile,
    apply_hunks,
    parse_create_diff,
    parse_patch,
    parse_update_diff,
)
from fsseam.text import decode


def applied(data: bytes, diff: str) -> bytes:
    return apply_hunks(decode(data, "/f"), parse_update_diff(diff), "/f").encode()


def refused(data: bytes, diff: str) -> FsError:
    with pytest.raises(FsError) as e:
        apply_hunks(decode(data, "/f"), parse_update_diff(diff), "/f")
    return e.value


# -- the envelope ------------------------------------------------------------------------------
def test_every_section_kind() -> None:
    ops = parse_patch(
        "*** Begin Patch\n"
        "*** Add File: src/new.py\n+import os\n+\n+\tx = 1\n"
        "*** Delete File: old.txt\n"
        "*** Update File: a.py\n*** Move to: b/a.py\n@@ class A:\n@@     def f(self):\n"
        "-        pass\n+        return 1\n"
        "@@\n context\n+added\n*** End of File\n"
        "*** End Patch\n"
    )
    assert ops == [
        AddFile("src/new.py", "import os\n\n\tx = 1\n", 2),
        DeleteFile("old.txt", 6),
        UpdateFile("a.py", (
            PatchHunk(("class A:", "    def f(self):"), ("        pass",), ("        return 1",),
                 False, 9),
            PatchHunk((), ("context",), ("context", "added"), True, 13),
        ), "b/a.py", 7),
    ]


def test_lenient_wrapping_crlf_and_whitespace_around_markers() -> None:
    text = ("<<'EOF'\r\n  *** Begin Patch \r\n*** Update File: f\r\n-a\r\n+b\r\n"
            "*** End Patch  \r\nEOF\r\n")
    (op,) = parse_patch(text)
    assert isinstance(op, UpdateFile)
    assert op.hunks == (PatchHunk((), ("a",), ("b",), False, 4),)


def test_first_hunk_needs_no_header_and_blank_lines_are_empty_context() -> None:
    (op,) = parse_patch("*** Begin Patch\n*** Update File: f\n x\n\n-y\n+z\n*** End Patch")
    assert isinstance(op, UpdateFile)
    assert op.hunks[0].old == ("x", "", "y") and op.hunks[0].new == ("x", "", "z")


def test_unified_diff_headers_are_read_as_bare_or_named_anchors() -> None:
    hunks = parse_update_diff("@@ -1,2 +1,2 @@\n-a\n+b\n@@ -9,3 +9,3 @@ def g():\n-c\n+d\n")
    assert [h.anchors for h in hunks] == [(), ("def g():",)]


@pytest.mark.parametrize(
    ("text", "reason", "line"),
    [
        ("", "patch_no_begin", None),
        ("*** Update File: f\n-a\n+b\n*** End Patch", "patch_no_begin", None),
        ("*** Begin Patch\n*** Update File: f\n-a\n+b\n", "patch_no_end", None),
        ("*** Begin Patch\n*** End Patch", "patch_empty", None),
        ("*** Begin Patch\n*** Frob File: f\n*** End Patch", "patch_bad_header", 2),
        ("*** Begin Patch\n*** Add File: \n+x\n*** End Patch", "patch_no_path", 2),
        ("*** Begin Patch\n*** Update File: f\n*** End Patch", "patch_empty_update", 2),
        ("*** Begin Patch\n*** Update File: f\n-a\n+b\nx\n*** End Patch", "patch_bad_line", 5),
        ("*** Begin Patch\n*** Update File: f\n-a\n@@\n*** End Patch", "patch_empty_hunk", 4),
        ("*** Begin Patch\n*** Add File: f\n+a\nb\n*** End Patch", "patch_bad_header", 4),
    ],
)
def test_malformed_patches_name_the_line(text: str, reason: str, line: int | None) -> None:
    with pytest.raises(FsError) as e:
        parse_patch(text)
    assert e.value.code is ErrorCode.FS_INVALID_ARGUMENT
    assert e.value.reason == reason
    assert e.value.details.get("line") == line


def test_a_move_without_hunks_is_a_rename() -> None:
    (op,) = parse_patch("*** Begin Patch\n*** Update File: a\n*** Move to: b\n*** End Patch")
    assert op == UpdateFile("a", (), "b", 2)


def test_create_diff() -> None:
    assert parse_create_diff("+a\n+\n+\tb\n") == "a\n\n\tb\n"
    assert parse_create_diff("") == ""
    with pytest.raises(FsError) as e:
        parse_create_diff("+a\nb\n")
    assert e.value.reason == "patch_add_line" and e.value.details["line"] == 2


# -- where hunks apply -------------------------------------------------------------------------
def test_crlf_bom_tabs_and_bytes_outside_the_hunk_are_kept() -> None:
    data = b"\xef\xbb\xbfa\r\n\tb \r\nlone\rcr\r\nc\r\n"
    assert applied(data, "@@\n-\tb \n+\tB\n+new\n") == (
        b"\xef\xbb\xbfa\r\n\tB\r\nnew\r\nlone\rcr\r\nc\r\n"
    )


def test_matching_is_exact_first_then_as_loose_as_the_agents_sdk() -> None:
    # Whitespace differences match only where no exact match exists (as in the SDK's
    # apply_diff); a line that differs in more than whitespace never does.
    assert applied(b"\tindented\n", "@@\n-    indented\n+x\n") == b"x\n"
    assert applied(b"trailing \n", "@@\n-trailing\n+x\n") == b"x\n"
    err = refused(b"in dented\n", "@@\n-indented\n+x\n")
    assert err.code is ErrorCode.FS_NO_MATCH and err.reason == "patch_hunk_no_match"


def test_an_unanchored_hunk_must_match_one_place() -> None:
    data = b"x\nsame\nx\nsame\n"
    err = refused(data, "@@\n-same\n+other\n")
    assert err.code is ErrorCode.FS_MULTIPLE_MATCHES
    assert err.details["match_lines"] == [2, 4]
    # context makes it unique; an @@ line picks the first place after it
    assert applied(data, "@@\n x\n-same\n+other\n x\n") == b"x\nother\nx\nsame\n"
    assert applied(b"def f():\n  same\ndef g():\n  same\n",
                   "@@ def g():\n-  same\n+  other\n") == (
        b"def f():\n  same\ndef g():\n  other\n"
    )


def test_hunks_apply_in_order_after_each_other() -> None:
    data = b"start\na\nb\na\nb\n"
    # the second hunk only looks after the first: its 'a' is unique there
    assert applied(data, "@@\n start\n-a\n+A\n@@\n-a\n+AA\n") == b"start\nA\nb\nAA\nb\n"
    err = refused(b"a\nb\n", "@@\n-b\n+B\n@@\n-a\n+A\n")
    assert err.code is ErrorCode.FS_NO_MATCH and err.details["hunk"] == 2
    assert err.details["where"] == " after line 2"


def test_anchors_narrow_in_turn_and_ignore_surrounding_whitespace() -> None:
    data = b"class A:\n    def f():\n        x\nclass B:\n    def f():\n        x\n"
    out = applied(data, "@@ class B:\n@@ def f():\n-        x\n+        y\n")
    assert out == b"class A:\n    def f():\n        x\nclass B:\n    def f():\n        y\n"
    err = refused(data, "@@ class C:\n-        x\n+        y\n")
    assert err.reason == "patch_anchor_not_found"


def test_end_of_file_anchors_at_the_end() -> None:
    data = b"x\nend\nx\nend\n"
    assert applied(data, "@@\n x\n-end\n+END\n*** End of File\n") == b"x\nend\nx\nEND\n"
    err = refused(b"end\nx\n", "@@\n-end\n+END\n*** End of File\n")
    assert err.code is ErrorCode.FS_NO_MATCH and err.details["where"] == " at the end of the file"


def test_pure_additions() -> None:
    assert applied(b"a\nb\n", "@@\n+c\n") == b"a\nb\nc\n"  # unanchored: appended
    assert applied(b"a\nb\n", "@@ a\n+between\n") == b"a\nbetween\nb\n"
    assert applied(b"", "+first\n+second\n") == b"first\nsecond\n"


def test_a_file_without_a_final_newline_keeps_it_that_way() -> None:
    assert applied(b"a\nb", "@@\n-b\n+B\n") == b"a\nB"
    assert applied(b"a\nb", "@@\n b\n+c\n") == b"a\nb\nc"
    assert applied(b"a\nb", "@@ b\n+c\n") == b"a\nb\nc"
    assert applied(b"a\r\nb", "@@\n a\n-b\n") == b"a"
    assert applied(b"a\nb", "@@\n-a\n-b\n") == b""
    assert applied(b"a\nb\n", "@@\n-b\n") == b"a\n"


def test_a_blank_line_closing_a_hunk_may_be_a_separator() -> None:
    assert applied(b"a\nb\n", "@@\n-a\n+A\n\n") == b"A\nb\n"


def test_added_lines_may_not_hold_nul() -> None:
    err = refused(b"a\n", "@@\n-a\n+\x00\n")
    assert err.code is ErrorCode.FS_INVALID_ARGUMENT and err.reason == "text_has_nul"
