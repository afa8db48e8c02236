"""str_replace_editor through ctx.tools.execute, with exact bytes on disk."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fsseam import CreateOnly, ErrorCode, Overwrite, StrReplaceEditor, Workspace

from .helpers import fails, ok, raw


@pytest.fixture(params=["memory", "local"])
def ws(request: pytest.FixtureRequest, root: Path) -> Workspace:
    if request.param == "memory":
        return Workspace("memory://ed", {"global_store": False})
    return Workspace(str(root))


def put(ws: Workspace, path: str, data: bytes) -> None:
    ws.backend.write(path.lstrip("/"), data, Overwrite())


def ed(ws: Workspace, owner: str = "a", **args: Any) -> Any:
    return ws.context(owner).tools.execute("str_replace_editor", args)


def test_view_file_header_and_tabs(ws: Workspace) -> None:
    put(ws, "/a.py", b"x = 1\n\ty = 2\n")
    res = ok(ed(ws, command="view", path="/a.py"))
    assert res.text == (
        "Here's the result of running `cat -n` on /a.py:\n     1\tx = 1\n     2\t\ty = 2\n"
    )


def test_view_range(ws: Workspace) -> None:
    put(ws, "/n.txt", "".join(f"{i}\n" for i in range(1, 21)).encode())
    res = ok(ed(ws, command="view", path="/n.txt", view_range=[3, 5]))
    assert res.text == (
        "Here's the result of running `cat -n` on /n.txt:\n     3\t3\n     4\t4\n     5\t5\n"
        "<response clipped: showing lines 3-5 of 20. To see more, view with view_range "
        "[6, 20].>"
    )
    tail = ok(ed(ws, command="view", path="/n.txt", view_range=[19, -1]))
    assert tail.text == "Here's the result of running `cat -n` on /n.txt:\n    19\t19\n    20\t20\n"
    fails(ed(ws, command="view", path="/n.txt", view_range=[5, 2]), ErrorCode.FS_INVALID_ARGUMENT)
    fails(ed(ws, command="view", path="/n.txt", view_range=[0, 2]), ErrorCode.FS_INVALID_ARGUMENT)


def test_long_view_clipped_with_notice(ws: Workspace) -> None:
    put(ws, "/big.txt", "".join(f"line number {i}\n" for i in range(1, 3001)).encode())
    res = ok(ed(ws, command="view", path="/big.txt"))
    assert len(res.text) <= 16_000 + 200
    assert res.text.startswith("Here's the result of running `cat -n` on /big.txt:\n     1\t")
    last_row = res.text.split("\n<response clipped")[0].splitlines()[-1]
    n = int(last_row.split("\t")[0])
    assert res.text.endswith(
        f"<response clipped: showing lines 1-{n} of 3000. To see more, view with view_range "
        f"[{n + 1}, 3000].>"
    )


def test_max_output_chars_is_configurable(ws: Workspace) -> None:
    put(ws, "/s.txt", b"abcdefghij\n" * 100)
    ctx = ws.context("a")
    ctx.tools.register(StrReplaceEditor(max_output_chars=200))
    res = ok(ctx.tools.execute("str_replace_editor", {"command": "view", "path": "/s.txt"}))
    assert len(res.text) < 400
    assert "view_range [" in res.text


def test_view_directory_two_levels_with_omissions(ws: Workspace) -> None:
    for key in [
        "src/app.py", "src/pkg/mod.py", "src/pkg/deep/too_deep.py", "README.md",
        ".git/config", "node_modules/x/index.js", ".venv/bin/python", "venv/lib.py",
        "src/__pycache__/app.cpython-311.pyc", "src/old.pyc", "lib/site-packages/p.py",
    ]:
        ws.backend.write(key, b"x", CreateOnly())
    res = ok(ed(ws, command="view", path="/"))
    assert res.text == (
        "Here's the files and directories up to 2 levels deep in /, excluding hidden items:\n"
        "/README.md\n/lib/\n/src/\n/src/app.py\n/src/pkg/\n"
        "(7 hidden, dependency or cache entries omitted)"
    )


def test_create_new_and_existing(ws: Workspace) -> None:
    res = ok(ed(ws, command="create", path="/dir/new.txt", file_text="hello\n"))
    assert res.text == "File created successfully at: /dir/new.txt"
    assert res.value.diff.endswith("+hello\n")
    assert raw(ws, "/dir/new.txt") == b"hello\n"
    again = fails(ed(ws, command="create", path="/dir/new.txt", file_text="x"),
                  ErrorCode.FS_ALREADY_EXISTS)
    assert "str_replace" in again.text
    assert raw(ws, "/dir/new.txt") == b"hello\n"


def test_str_replace_unique_with_snippet(ws: Workspace) -> None:
    put(ws, "/f.txt", b"alpha\nbeta\ngamma\n")
    ok(ed(ws, command="view", path="/f.txt"))
    res = ok(ed(ws, command="str_replace", path="/f.txt", old_str="beta", new_str="BETA"))
    assert res.text == (
        "The file /f.txt has been edited. Here's the result of running `cat -n` on a snippet "
        "of /f.txt:\n     1\talpha\n     2\tBETA\n     3\tgamma\nReview the changes and make "
        "sure they are as expected. Edit the file again if necessary."
    )
    assert "-beta\n+BETA\n" in res.value.diff
    assert raw(ws, "/f.txt") == b"alpha\nBETA\ngamma\n"


def test_str_replace_errors_speak_old_str(ws: Workspace) -> None:
    put(ws, "/f.txt", b"dup\nx\ndup\n")
    ok(ed(ws, command="view", path="/f.txt"))
    multi = fails(ed(ws, command="str_replace", path="/f.txt", old_str="dup", new_str="y"),
                  ErrorCode.FS_MULTIPLE_MATCHES)
    assert "old_str occurs 2 times" in multi.text and "lines 1, 3" in multi.text
    none = fails(ed(ws, command="str_replace", path="/f.txt", old_str="nope", new_str="y"),
                 ErrorCode.FS_NO_MATCH)
    assert "old_str was not found" in none.text
    assert "old_string" not in multi.text + none.text
    assert raw(ws, "/f.txt") == b"dup\nx\ndup\n"


def test_str_replace_no_fuzzy_matching(ws: Workspace) -> None:
    put(ws, "/f.py", b"def f():\n    return 1\n")
    ok(ed(ws, command="view", path="/f.py"))
    fails(ed(ws, command="str_replace", path="/f.py", old_str="def f():\n  return 1",
             new_str="x"), ErrorCode.FS_NO_MATCH)
    fails(ed(ws, command="str_replace", path="/f.py", old_str="def  f():", new_str="x"),
          ErrorCode.FS_NO_MATCH)
    assert raw(ws, "/f.py") == b"def f():\n    return 1\n"


def test_str_replace_new_str_defaults_to_empty(ws: Workspace) -> None:
    put(ws, "/f.txt", b"keep DELETE keep\n")
    ok(ed(ws, command="view", path="/f.txt"))
    ok(ed(ws, command="str_replace", path="/f.txt", old_str=" DELETE"))
    assert raw(ws, "/f.txt") == b"keep keep\n"


@pytest.mark.parametrize("field", ["new_str", "insert_text"])
def test_insert_accepts_both_field_names(ws: Workspace, field: str) -> None:
    put(ws, "/i.txt", b"a\nb\n")
    ok(ed(ws, command="view", path="/i.txt"))
    ok(ed(ws, command="insert", path="/i.txt", insert_line=1, **{field: "x\n"}))
    assert raw(ws, "/i.txt") == b"a\nx\nb\n"


@pytest.mark.parametrize(
    ("data", "line", "text", "expected"),
    [
        (b"a\nb\n", 0, "top\n", b"top\na\nb\n"),
        (b"a\nb\n", 0, "top", b"topa\nb\n"),  # verbatim: no newline is added
        (b"a\nb\n", 2, "end", b"a\nb\nend"),  # no implicit trailing newline at EOF
        (b"a\nb\n", 2, "end\n", b"a\nb\nend\n"),
        (b"a\nb", 2, "end", b"a\nbend"),  # the end of the file, verbatim
        (b"a\nb", 2, "\nend", b"a\nb\nend"),
        (b"a\r\nb\r\n", 1, "x\ny\n", b"a\r\nx\r\ny\r\nb\r\n"),
        (b"a\r\nb\r\n", 1, "x\ny", b"a\r\nx\r\nyb\r\n"),
        (b"\xef\xbb\xbfa\n", 0, "z\n", b"\xef\xbb\xbfz\na\n"),
        (b"", 0, "first", b"first"),
        (b"\ta\n", 1, "\tb", b"\ta\n\tb"),
    ],
)
def test_insert_boundaries(
    ws: Workspace, data: bytes, line: int, text: str, expected: bytes
) -> None:
    put(ws, "/i.txt", data)
    ok(ed(ws, command="view", path="/i.txt"))
    ok(ed(ws, command="insert", path="/i.txt", insert_line=line, new_str=text))
    assert raw(ws, "/i.txt") == expected


def test_insert_argument_errors(ws: Workspace) -> None:
    put(ws, "/i.txt", b"a\n")
    ok(ed(ws, command="view", path="/i.txt"))
    fails(ed(ws, command="insert", path="/i.txt", insert_line=0), ErrorCode.FS_INVALID_ARGUMENT)
    fails(ed(ws, command="insert", path="/i.txt", insert_line=0, new_str="a", insert_text="b"),
          ErrorCode.FS_INVALID_ARGUMENT)
    fails(ed(ws, command="insert", path="/i.txt", insert_line=-1, new_str="a"),
          ErrorCode.FS_INVALID_ARGUMENT)
    assert raw(ws, "/i.txt") == b"a\n"


def test_recreate_after_external_delete(ws: Workspace) -> None:
    put(ws, "/r.txt", b"v1\n")
    ok(ed(ws, command="view", path="/r.txt"))
    ws.backend.delete("r.txt")
    fails(ed(ws, command="view", path="/r.txt"), ErrorCode.FS_NOT_FOUND)
    fails(ed(ws, command="str_replace", path="/r.txt", old_str="v1", new_str="v2"),
          ErrorCode.FS_NOT_FOUND)
    ok(ed(ws, command="create", path="/r.txt", file_text="v2\n"))
    assert raw(ws, "/r.txt") == b"v2\n"


def test_absence_never_authorizes_str_replace(ws: Workspace) -> None:
    fails(ed(ws, command="view", path="/late.txt"), ErrorCode.FS_NOT_FOUND)
    put(ws, "/late.txt", b"someone else's\n")
    fails(ed(ws, command="str_replace", path="/late.txt", old_str="someone", new_str="mine"),
          ErrorCode.FS_STALE)
    fails(ed(ws, command="insert", path="/late.txt", insert_line=0, new_str="mine"),
          ErrorCode.FS_STALE)
    assert raw(ws, "/late.txt") == b"someone else's\n"


def test_mutations_keep_tabs_bom_crlf(ws: Workspace) -> None:
    data = b"\xef\xbb\xbf\tone\r\n\t\ttwo\r\nthree\r\n"
    put(ws, "/k.txt", data)
    ok(ed(ws, command="view", path="/k.txt"))
    ok(ed(ws, command="str_replace", path="/k.txt", old_str="\t\ttwo", new_str="\t\t2"))
    ok(ed(ws, command="insert", path="/k.txt", insert_line=3, new_str="four\n"))
    assert raw(ws, "/k.txt") == b"\xef\xbb\xbf\tone\r\n\t\t2\r\nthree\r\nfour\r\n"


def test_stale_str_replace_keeps_other_agents_content(ws: Workspace) -> None:
    put(ws, "/s.txt", b"x = 1\n")
    ok(ed(ws, "a", command="view", path="/s.txt"))
    ok(ed(ws, "b", command="view", path="/s.txt"))
    ok(ed(ws, "b", command="str_replace", path="/s.txt", old_str="1", new_str="2"))
    fails(ed(ws, "a", command="str_replace", path="/s.txt", old_str="x = 1", new_str="x = 3"),
          ErrorCode.FS_STALE)
    assert raw(ws, "/s.txt") == b"x = 2\n"
    ok(ed(ws, "a", command="view", path="/s.txt"))
    ok(ed(ws, "a", command="str_replace", path="/s.txt", old_str="x = 2", new_str="x = 3"))
    assert raw(ws, "/s.txt") == b"x = 3\n"


def test_null_fields_and_unknown_commands(ws: Workspace) -> None:
    put(ws, "/f.txt", b"a\n")
    ok(ed(ws, command="view", path="/f.txt", view_range=None, old_str=None, file_text=None))
    # undo_edit is a command now; with no change of this agent's to take back it says so
    fails(ed(ws, command="undo_edit", path="/f.txt"), ErrorCode.FS_INVALID_ARGUMENT)
    fails(ed(ws, command="view", path="/f.txt", file_text="x"), ErrorCode.FS_INVALID_ARGUMENT)
    fails(ed(ws, path="/f.txt"), ErrorCode.FS_INVALID_ARGUMENT)


def test_view_directory_rejects_view_range(ws: Workspace) -> None:
    ws.backend.write("d/x.txt", b"x", CreateOnly())
    fails(ed(ws, command="view", path="/d", view_range=[1, 2]), ErrorCode.FS_INVALID_ARGUMENT)
