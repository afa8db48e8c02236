"""Hunks whose lines differ from the file's only in whitespace: matched as the Agents SDK's
``apply_diff`` matches them (exactly, else but for trailing whitespace, else but for the
whitespace around each line), the file's own context lines kept, an ambiguous loose match
refused. Pure, plus one run through the ``apply_patch`` tool."""

from __future__ import annotations

import pytest

from fsseam import ErrorCode, FsError, Workspace
from fsseam.patches import apply_hunks, parse_update_diff
from fsseam.text import decode


def applied(data: bytes, diff: str) -> bytes:
    return apply_hunks(decode(data, "/f"), parse_update_diff(diff), "/f").encode()


def refused(data: bytes, diff: str) -> FsError:
    with pytest.raises(FsError) as e:
        apply_hunks(decode(data, "/f"), parse_update_diff(diff), "/f")
    return e.value


# (file, diff, what both fsseam and the SDK's apply_diff make of it)
AS_THE_SDK = [
    # the file's context line has trailing spaces the model left out
    (b"a = 1  \nb = 2\n", "@@\n a = 1\n-b = 2\n+b = 3\n", b"a = 1  \nb = 3\n"),
    # the model's context line has trailing spaces the file has not
    (b"a = 1\nb = 2\n", "@@\n a = 1   \n-b = 2\n+b = 3\n", b"a = 1\nb = 3\n"),
    # a removed line with a trailing tab in the file
    (b"x\nold\t\ny\n", "@@\n x\n-old\n+new\n y\n", b"x\nnew\ny\n"),
    # indentation differs (tab against spaces): the context keeps the file's tab
    (b"def f():\n\treturn 1\n", "@@\n def f():\n-    return 1\n+    return 2\n",
     b"def f():\n    return 2\n"),
    (b"if x:\n\tpass\nend\n", "@@\n   pass\n-end\n+done\n", b"if x:\n\tpass\ndone\n"),
    # an exact match wins over an earlier loose one
    (b"k \nk\n", "@@\n-k\n+K\n", b"k \nK\n"),
    # at the end of the file
    (b"a\nlast  \n", "@@\n-last\n+LAST\n*** End of File\n", b"a\nLAST\n"),
]


@pytest.mark.parametrize(("data", "diff", "expected"), AS_THE_SDK)
def test_whitespace_differences_match_as_in_the_agents_sdk(
    data: bytes, diff: str, expected: bytes
) -> None:
    assert applied(data, diff) == expected


@pytest.mark.parametrize(("data", "diff", "expected"), AS_THE_SDK)
def test_the_sdks_own_apply_diff_agrees(data: bytes, diff: str, expected: bytes) -> None:
    apply_diff = pytest.importorskip("agents.apply_diff").apply_diff
    assert apply_diff(data.decode(), diff.replace("*** End of File\n", "")) == expected.decode()


def test_crlf_bom_and_context_bytes_are_kept_after_a_loose_match() -> None:
    data = b"\xef\xbb\xbfkeep \t\r\nold  \r\ntail\r\n"
    assert applied(data, "@@\n keep\n-old\n+new\n tail\n") == (
        b"\xef\xbb\xbfkeep \t\r\nnew\r\ntail\r\n"
    )


def test_a_loose_match_in_two_places_is_refused() -> None:
    # The SDK's apply_diff takes the first; fsseam never edits at a guess.
    err = refused(b"x = 1 \ny\nx = 1\t\n", "@@\n-x = 1\n+x = 2\n")
    assert err.code is ErrorCode.FS_MULTIPLE_MATCHES
    assert err.details["match_lines"] == [1, 3]
    # One exact match among loose ones is not ambiguous.
    assert applied(b"x = 1 \nx = 1\nx = 1\t\n", "@@\n-x = 1\n+x = 2\n") == (
        b"x = 1 \nx = 2\nx = 1\t\n"
    )


def test_more_than_whitespace_never_matches() -> None:
    for data, diff in [(b"a b\n", "@@\n-ab\n+c\n"), (b"a\n", "@@\n-A\n+c\n"),
                       (b"x\n\n", "@@\n-x\n-y\n+z\n")]:
        err = refused(data, diff)
        assert err.code is ErrorCode.FS_NO_MATCH and err.reason == "patch_hunk_no_match"


def test_through_the_apply_patch_tool() -> None:
    ws = Workspace("memory://loose-patch", storage_options={"global_store": False})
    ctx = ws.context("a")
    ctx.tools.execute("write", {"file_path": "/c.py", "content": "def f():  \n    return 1\n"})
    ctx.tools.execute("read", {"file_path": "/c.py"})
    refused_result = ctx.tools.execute("apply_patch", {"patch": (
        "*** Begin Patch\n*** Update File: c.py\n@@\n def g():\n-    return 1\n+    return 2\n"
        "*** End Patch\n")})
    assert refused_result.error is not None
    assert refused_result.error.code is ErrorCode.FS_NO_MATCH
    assert ws.backend.read("c.py").data == b"def f():  \n    return 1\n"
    result = ctx.tools.execute("apply_patch", {"patch": (
        "*** Begin Patch\n*** Update File: c.py\n@@\n def f():\n-    return 1\n+    return 2\n"
        "*** End Patch\n")})
    assert result.ok, result.text
    assert ws.backend.read("c.py").data == b"def f():  \n    return 2\n"
