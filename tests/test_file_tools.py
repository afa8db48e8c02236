"""read / write / edit through ctx.tools.execute only, on real local and memory backends."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fsseam import ErrorCode, Overwrite, ReadOutcome, Workspace, hookimpl
from fsseam.events import FsEvent

from .helpers import fails, ok, raw
from .snapshot import check


@pytest.fixture(params=["memory", "local"])
def ws(request: pytest.FixtureRequest, root: Path) -> Workspace:
    if request.param == "memory":
        return Workspace("memory://tools", {"global_store": False})
    return Workspace(str(root))


def _url(kind: str, root: Path) -> tuple[str, dict[str, Any] | None]:
    """A fresh workspace of ``kind``: an isolated memory store, or the local root."""
    return ("memory://t", {"global_store": False}) if kind == "memory" else (str(root), None)


def put(ws: Workspace, path: str, data: bytes) -> None:
    ws.backend.write(path.lstrip("/"), data, Overwrite())


def run(ws: Workspace, tool: str, owner: str = "a", **args: Any) -> Any:
    return ws.context(owner).tools.execute(tool, args)


# -- read ---------------------------------------------------------------------------------
def test_read_cat_n_with_tabs_kept(ws: Workspace) -> None:
    put(ws, "/t.py", b"def f():\n\treturn 1\n")
    res = ok(run(ws, "read", file_path="/t.py"))
    assert res.text == "     1\tdef f():\n     2\t\treturn 1"
    assert isinstance(res.value, ReadOutcome)
    assert (res.value.returned, res.value.total, res.value.partial) == (2, 2, False)
    assert res.value.lines == ["def f():", "\treturn 1"]


def test_line_copied_from_view_is_valid_old_string(ws: Workspace) -> None:
    put(ws, "/t.py", b"if x:\n\t\tdo(1)\n")
    text = ok(run(ws, "read", file_path="/t.py")).text
    line2 = text.splitlines()[1].split("\t", 1)[1]
    ok(run(ws, "edit", file_path="/t.py", old_string=line2, new_string="\t\tdo(2)"))
    assert raw(ws, "/t.py") == b"if x:\n\t\tdo(2)\n"


def test_read_window_and_footer(ws: Workspace) -> None:
    put(ws, "/n.txt", "".join(f"line {i}\n" for i in range(1, 11)).encode())
    res = ok(run(ws, "read", file_path="/n.txt", offset=3, limit=4))
    assert res.text == (
        "     3\tline 3\n     4\tline 4\n     5\tline 5\n     6\tline 6\n\n"
        "(Showing lines 3-6 of 10. Use offset=7 to continue.)"
    )
    end = ok(run(ws, "read", file_path="/n.txt", offset=9, limit=5))
    assert end.text.endswith("(End of file: lines 9-10 of 10.)")


def test_read_default_limit_is_2000(ws: Workspace) -> None:
    put(ws, "/big.txt", "".join(f"{i}\n" for i in range(1, 2501)).encode())
    res = ok(run(ws, "read", file_path="/big.txt"))
    assert res.value.returned == 2000
    assert res.text.endswith("(Showing lines 1-2000 of 2500. Use offset=2001 to continue.)")


def test_read_empty_file(ws: Workspace) -> None:
    put(ws, "/e.txt", b"")
    assert ok(run(ws, "read", file_path="/e.txt")).text == "(The file /e.txt is empty.)"


def test_long_line_cut_with_marker(ws: Workspace) -> None:
    put(ws, "/l.txt", b"x" * 2500 + b"\nshort\n")
    text = ok(run(ws, "read", file_path="/l.txt")).text
    first = text.splitlines()[0]
    assert first == "     1\t" + "x" * 2000 + "... [line truncated: 500 more characters]"


def test_output_cap_keeps_prefix_and_says_how_to_continue(ws: Workspace) -> None:
    put(ws, "/w.txt", ("y" * 1500 + "\n").encode() * 200)
    text = ok(run(ws, "read", file_path="/w.txt")).text
    assert len(text) < 101_000
    rows = text.split("\n\n(")[0].splitlines()
    assert rows[0].startswith("     1\t")
    n = len(rows)
    assert text.endswith(
        f"(Output capped at 100000 characters: showing lines 1-{n} of 200. "
        f"Use offset={n + 1} to continue.)"
    )


def test_read_crlf_and_bom_hidden(ws: Workspace) -> None:
    put(ws, "/c.txt", b"\xef\xbb\xbfone\r\ntwo\r\n")
    res = ok(run(ws, "read", file_path="/c.txt"))
    assert res.text == "     1\tone\n     2\ttwo"


@pytest.mark.parametrize(
    "data", [b"\x00\x01\x02binary", b"caf\xe9\n", b"ok\n" + b"\xff" * 3]
)
def test_read_not_text(ws: Workspace, data: bytes) -> None:
    put(ws, "/b.bin", data)
    fails(run(ws, "read", file_path="/b.bin"), ErrorCode.FS_NOT_TEXT)
    assert raw(ws, "/b.bin") == data


def test_read_missing_and_directory(ws: Workspace) -> None:
    fails(run(ws, "read", file_path="/nope.txt"), ErrorCode.FS_NOT_FOUND)
    put(ws, "/d/x.txt", b"x")
    fails(run(ws, "read", file_path="/d"), ErrorCode.FS_IS_DIRECTORY)


# -- write --------------------------------------------------------------------------------
def test_write_creates_then_needs_read(ws: Workspace) -> None:
    res = ok(run(ws, "write", file_path="/new/a.txt", content="hello\n"))
    assert res.text == "Created /new/a.txt (1 line)."
    assert raw(ws, "/new/a.txt") == b"hello\n"
    fails(run(ws, "write", owner="b", file_path="/new/a.txt", content="x"),
          ErrorCode.FS_NOT_OBSERVED)
    assert raw(ws, "/new/a.txt") == b"hello\n"
    res2 = ok(run(ws, "write", file_path="/new/a.txt", content="again\nmore\n"))
    assert res2.text == "Wrote /new/a.txt (2 lines)."


def test_write_keeps_bom_and_crlf(ws: Workspace) -> None:
    put(ws, "/c.txt", b"\xef\xbb\xbfa\r\nb\r\n")
    ok(run(ws, "read", file_path="/c.txt"))
    ok(run(ws, "write", file_path="/c.txt", content="x\ny\nz\n"))
    assert raw(ws, "/c.txt") == b"\xef\xbb\xbfx\r\ny\r\nz\r\n"


def test_write_stale_keeps_other_content(ws: Workspace) -> None:
    put(ws, "/s.txt", b"v1\n")
    ok(run(ws, "read", file_path="/s.txt"))
    ok(run(ws, "read", owner="b", file_path="/s.txt"))
    ok(run(ws, "write", owner="b", file_path="/s.txt", content="from b\n"))
    res = fails(run(ws, "write", file_path="/s.txt", content="from a\n"), ErrorCode.FS_STALE)
    assert res.text == (
        "Error [FS_STALE]: /s.txt has changed since you last read it, so your write was not "
        "applied. What changed, from the version you read to the current one:\n"
        "@@ -1 +1 @@\n-v1\n+from b\n"
        "Your write replaces the whole file, so sending it again would throw this change "
        "away. Read the file again and keep the change in what you send, or use edit to "
        "change only your part."
    )
    assert raw(ws, "/s.txt") == b"from b\n"
    # The diff is no read for a whole-file write: the same content sent again would drop
    # b's change, so it is refused again and b's bytes stay.
    fails(run(ws, "write", file_path="/s.txt", content="from a\n"), ErrorCode.FS_STALE)
    assert raw(ws, "/s.txt") == b"from b\n"
    # After a read, the write is a's decision on b's version.
    ok(run(ws, "read", file_path="/s.txt"))
    ok(run(ws, "write", file_path="/s.txt", content="from a\n"))
    assert raw(ws, "/s.txt") == b"from a\n"


# -- edit ---------------------------------------------------------------------------------
def test_edit_crlf_file_keeps_every_other_byte(ws: Workspace) -> None:
    data = b"a\r\nb\nc\r\nd\r\n"  # mixed, CRLF dominant
    put(ws, "/m.txt", data)
    ok(run(ws, "read", file_path="/m.txt"))
    ok(run(ws, "edit", file_path="/m.txt", old_string="c\nd", new_string="C\nD\nE"))
    assert raw(ws, "/m.txt") == b"a\r\nb\nC\r\nD\r\nE\r\n"


def test_edit_bom_kept(ws: Workspace) -> None:
    put(ws, "/b.txt", b"\xef\xbb\xbfhello\n")
    ok(run(ws, "read", file_path="/b.txt"))
    ok(run(ws, "edit", file_path="/b.txt", old_string="hello", new_string="bye"))
    assert raw(ws, "/b.txt") == b"\xef\xbb\xbfbye\n"


def test_edit_tabs_never_expanded(ws: Workspace) -> None:
    data = b"\tone\n\t\ttwo\n  three\t\n"
    put(ws, "/t.txt", data)
    ok(run(ws, "read", file_path="/t.txt"))
    ok(run(ws, "edit", file_path="/t.txt", old_string="two", new_string="2"))
    assert raw(ws, "/t.txt") == b"\tone\n\t\t2\n  three\t\n"


def test_edit_ambiguous_lists_lines(ws: Workspace) -> None:
    put(ws, "/x.txt", b"x\ny\nx\n")
    ok(run(ws, "read", file_path="/x.txt"))
    res = fails(run(ws, "edit", file_path="/x.txt", old_string="x", new_string="z"),
                ErrorCode.FS_MULTIPLE_MATCHES)
    assert "at lines 1, 3" in res.text and "replace_all" in res.text
    assert raw(ws, "/x.txt") == b"x\ny\nx\n"


def test_edit_no_match_is_exact(ws: Workspace) -> None:
    put(ws, "/x.txt", b"\tindented\n")
    ok(run(ws, "read", file_path="/x.txt"))
    fails(run(ws, "edit", file_path="/x.txt", old_string="    indented", new_string="z"),
          ErrorCode.FS_NO_MATCH)
    assert raw(ws, "/x.txt") == b"\tindented\n"


def test_edit_non_utf8_never_rewritten(ws: Workspace) -> None:
    put(ws, "/l.txt", b"caf\xe9 au lait\n")
    fails(run(ws, "read", file_path="/l.txt"), ErrorCode.FS_NOT_TEXT)
    fails(run(ws, "edit", file_path="/l.txt", old_string="caf", new_string="x"),
          ErrorCode.FS_NOT_TEXT)
    assert raw(ws, "/l.txt") == b"caf\xe9 au lait\n"


def test_edit_result_text_and_value(ws: Workspace) -> None:
    put(ws, "/e.txt", "".join(f"l{i}\n" for i in range(1, 11)).encode())
    ok(run(ws, "read", file_path="/e.txt"))
    res = ok(run(ws, "edit", file_path="/e.txt", old_string="l5\n", new_string="five\n"))
    assert res.text == (
        "Edited /e.txt: replaced 1 occurrence at line 5.\n"
        "     2\tl2\n     3\tl3\n     4\tl4\n     5\tfive\n     6\tl6\n     7\tl7\n     8\tl8"
    )
    assert res.value.replacements == 1 and res.value.replace_all is False
    assert "-l5\n+five\n" in res.value.diff


def test_edit_replace_all_counts(ws: Workspace) -> None:
    put(ws, "/r.txt", b"a.a.a\n")
    ok(run(ws, "read", file_path="/r.txt"))
    res = ok(run(ws, "edit", file_path="/r.txt", old_string="a", new_string="bb",
                 replace_all=True))
    assert res.value.replacements == 3 and res.value.replace_all is True
    assert res.text.startswith("Edited /r.txt: replaced 3 occurrences.")
    assert raw(ws, "/r.txt") == b"bb.bb.bb\n"


def test_traversal_refused(ws: Workspace) -> None:
    for path in ("/../escape.txt", "../../etc/passwd", "a/../../b"):
        fails(run(ws, "write", file_path=path, content="x"), ErrorCode.FS_OUTSIDE_ROOT)
        fails(run(ws, "read", file_path=path), ErrorCode.FS_OUTSIDE_ROOT)


def test_symlink_escape_refused_local(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"secret\n")
    os.symlink(outside, root / "link.txt")
    ws = Workspace(str(root))
    fails(run(ws, "read", file_path="/link.txt"), ErrorCode.FS_OUTSIDE_ROOT)
    fails(run(ws, "write", file_path="/link.txt", content="x"), ErrorCode.FS_OUTSIDE_ROOT)
    assert outside.read_bytes() == b"secret\n"


# -- the calls become ctx.fs calls and fs/* events ---------------------------------------
class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    def _add(self, event: FsEvent) -> None:
        self.events.append((event.name, event.path))

    @hookimpl
    def fs_read(self, event: FsEvent) -> None:
        self._add(event)

    @hookimpl
    def fs_missing(self, event: FsEvent) -> None:
        self._add(event)

    @hookimpl
    def fs_write_intent(self, event: FsEvent) -> None:
        self._add(event)

    @hookimpl
    def fs_edit_intent(self, event: FsEvent) -> None:
        self._add(event)

    @hookimpl
    def fs_written(self, event: FsEvent) -> None:
        self._add(event)


@pytest.mark.parametrize("kind", ["memory", "local"])
def test_tool_calls_dispatch_events(kind: str, root: Path) -> None:
    rec = Recorder()
    ws = Workspace(*_url(kind, root), plugins=[rec])
    calls: list[Callable[[], Any]] = [
        lambda: run(ws, "read", file_path="/a.txt"),
        lambda: run(ws, "write", file_path="/a.txt", content="one\n"),
        lambda: run(ws, "read", file_path="a.txt", offset=1, limit=1),
        lambda: run(ws, "edit", file_path="/./a.txt", old_string="one", new_string="two"),
    ]
    for c in calls:
        c()
    assert rec.events == [
        ("fs/missing", "/a.txt"),
        ("fs/write-intent", "/a.txt"),
        ("fs/written", "/a.txt"),
        ("fs/read", "/a.txt"),
        ("fs/edit-intent", "/a.txt"),
        ("fs/written", "/a.txt"),
    ]
    assert raw(ws, "/a.txt") == b"two\n"


def test_rendered_texts_snapshot() -> None:
    ws = Workspace("memory://snap", {"global_store": False})
    put(ws, "/doc.md", b"# Title\n\n\tindented\r\nlast line without newline")
    out = []
    for tool, args in [
        ("read", {"file_path": "/doc.md"}),
        ("read", {"file_path": "/doc.md", "offset": 2, "limit": 2}),
        ("edit", {"file_path": "/doc.md", "old_string": "Title", "new_string": "Heading"}),
        ("write", {"file_path": "/doc.md", "content": "replaced\n"}),
        ("write", {"file_path": "/new.md", "content": "a\nb\n"}),
        ("edit", {"file_path": "/new.md", "old_string": "zzz", "new_string": "y"}),
        ("read", {"file_path": "/missing.md"}),
        ("str_replace_editor", {"command": "view", "path": "/"}),
        ("str_replace_editor", {"command": "view", "path": "/new.md"}),
        ("str_replace_editor", {"command": "insert", "path": "/new.md", "insert_line": 1,
                                "insert_text": "mid"}),
        ("str_replace_editor", {"command": "create", "path": "/new.md", "file_text": "x"}),
    ]:
        res = ws.context("a").tools.execute(tool, args)
        out.append(f"=== {tool} {args}\n{res.text}\n")
    check("rendered.txt", "".join(out))


@pytest.mark.parametrize("kind", ["memory", "local"])
def test_too_large_for_edit_and_write_changes_nothing(kind: str, root: Path) -> None:
    from fsseam import Limits

    ws = Workspace(*_url(kind, root), limits=Limits(max_edit_bytes=1000, read_chunk_bytes=64))
    data = b"0123456789\n" * 100  # 1100 bytes
    put(ws, "/big.txt", data)
    first = ok(run(ws, "read", file_path="/big.txt", limit=3))  # windows still work
    assert first.value.lines == ["0123456789"] * 3
    res = fails(run(ws, "edit", file_path="/big.txt", old_string="0123", new_string="x",
                    replace_all=True), ErrorCode.FS_TOO_LARGE)
    assert "1100 bytes or more" in res.text and "offset/limit" in res.text
    fails(run(ws, "write", file_path="/big.txt", content="z" * 1001), ErrorCode.FS_TOO_LARGE)
    fails(run(ws, "write", file_path="/new.txt", content="y" * 1001), ErrorCode.FS_TOO_LARGE)
    assert raw(ws, "/big.txt") == data
    assert raw(ws, "/new.txt") is None
    # Replacing the big file with small content needs no load of the old one: allowed.
    ok(run(ws, "write", file_path="/big.txt", content="small\n"))
    assert raw(ws, "/big.txt") == b"small\n"


@pytest.mark.parametrize("kind", ["memory", "local"])
def test_nul_and_lone_surrogates_are_refused(kind: str, root: Path) -> None:
    ws = Workspace(*_url(kind, root))
    put(ws, "/t.txt", b"keep\n")
    ok(run(ws, "read", file_path="/t.txt"))
    for args in (
        {"file_path": "/t.txt", "content": "a\x00b"},
        {"file_path": "/t.txt", "content": "bad \ud800 surrogate"},
    ):
        res = fails(run(ws, "write", **args), ErrorCode.FS_INVALID_ARGUMENT)
        assert "content" in res.text
    fails(run(ws, "edit", file_path="/t.txt", old_string="keep", new_string="x\x00"),
          ErrorCode.FS_INVALID_ARGUMENT)
    fails(run(ws, "edit", file_path="/t.txt", old_string="keep", new_string="\udfff"),
          ErrorCode.FS_INVALID_ARGUMENT)
    fails(run(ws, "str_replace_editor", command="insert", path="/t.txt", insert_line=0,
              new_str="\x00"), ErrorCode.FS_INVALID_ARGUMENT)
    fails(run(ws, "write", file_path="/new.txt", content="\ud800"),
          ErrorCode.FS_INVALID_ARGUMENT)
    assert raw(ws, "/t.txt") == b"keep\n"
    assert raw(ws, "/new.txt") is None
