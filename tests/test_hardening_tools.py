"""Issue 13 at the tool surfaces: names that are not UTF-8, output budgets, malformed
calls, overlapping matches, plugins failing after a write, deep paths on every store."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fsseam import ErrorCode, FsError, Overwrite, Workspace, hookimpl
from fsseam.events import WrittenEvent
from fsseam.paths import display, to_key
from fsseam.tools.render import MAX_LINE_CHARS, render_read

from .helpers import call, fails, ok, raw

# -- item 3: names shown losslessly and safely -----------------------------------------------

BAD = os.fsdecode(b"bad\xff\xfe.txt")  # not UTF-8: lone surrogates once decoded


@pytest.fixture
def odd_names(root: Path) -> Path:
    (root / "sub").mkdir()
    with open(os.path.join(os.fsencode(root / "sub"), b"bad\xff\xfe.txt"), "wb") as f:
        f.write(b"raw name\n")
    (root / "two\nlines.txt").write_bytes(b"two\n")
    (root / "back\\slash.txt").write_bytes(b"back\n")
    (root / "plain.txt").write_bytes(b"plain\n")
    return root


def test_view_of_odd_names_is_serialisable_and_escaped(odd_names: Path) -> None:
    ctx = Workspace(str(odd_names), load_entry_points=False).context("a")
    res = ok(ctx.tools.execute("str_replace_editor", {"command": "view", "path": "/"}))
    res.text.encode("utf-8")  # no lone surrogate
    json.loads(res.model_dump_json(exclude={"value"}))
    json.loads(res.value.model_dump_json())
    rows = res.text.splitlines()[1:]
    assert rows == [
        "/back\\\\slash.txt",
        "/plain.txt",
        "/sub/",
        "/sub/bad\\xff\\xfe.txt",
        "/two\\x0alines.txt",
    ]


@pytest.mark.parametrize(
    ("shown", "data"),
    [
        ("/sub/bad\\xff\\xfe.txt", b"raw name\n"),
        ("/two\\x0alines.txt", b"two\n"),
        ("/back\\\\slash.txt", b"back\n"),
        ("/back\\slash.txt", b"back\n"),  # typed with one backslash: taken literally
    ],
)
def test_a_shown_path_names_exactly_that_file(odd_names: Path, shown: str, data: bytes) -> None:
    ws = Workspace(str(odd_names), load_entry_points=False)
    res = ok(call(ws, "a", "read", file_path=shown))
    assert res.text == "     1\t" + data.decode().rstrip("\n")
    first = data.decode().split("\n")[0]
    edit = ok(call(ws, "a", "edit", file_path=shown, old_string=first, new_string="edited"))
    assert edit.value.path == shown.replace("/back\\slash", "/back\\\\slash")
    key = to_key(shown)
    assert (odd_names / key).read_bytes() == b"edited\n"


def test_errors_about_odd_names_are_serialisable(odd_names: Path) -> None:
    ctx = Workspace(str(odd_names), load_entry_points=False).context("a")
    res = fails(ctx.tools.execute("edit", {"file_path": "/sub/" + BAD, "old_string": "x",
                                           "new_string": "y"}), ErrorCode.FS_NOT_OBSERVED)
    assert "/sub/bad\\xff\\xfe.txt" in res.text
    res.text.encode("utf-8")
    missing = fails(ctx.tools.execute("read", {"file_path": "/nope\udcff"}),
                    ErrorCode.FS_NOT_FOUND)
    assert "/nope\\xff" in missing.text
    json.loads(missing.model_dump_json())
    # A surrogate that is not a raw byte can name no file anywhere.
    bad = fails(ctx.tools.execute("write", {"file_path": "/x\ud800", "content": "x"}),
                ErrorCode.FS_INVALID_ARGUMENT)
    assert "/x\\ud800" in bad.text
    json.loads(bad.model_dump_json())


_NAMES = st.lists(
    st.characters(exclude_characters="/\x00", exclude_categories=["Cs"])
    | st.sampled_from(["\\", "\\x41", "\\u0085", "\\\\", "\udcff", "\udc80", "\x85"]),
    min_size=1, max_size=12,
).map("".join).filter(lambda n: n not in (".", ".."))


@settings(max_examples=300, deadline=None)
@given(st.lists(_NAMES, min_size=1, max_size=4))
def test_display_and_to_key_are_inverse(names: list[str]) -> None:
    key = "/".join(names)
    shown = display(key)
    shown.encode("utf-8")
    assert "\n" not in shown and "\u2028" not in shown
    assert to_key(shown) == key


async def _mcp_view(root: Path) -> tuple[str, str]:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "fsseam.cli", "mcp", str(root)],
                                   env=dict(os.environ))
    with anyio.fail_after(60):
        async with stdio_client(params) as (r, w), ClientSession(r, w) as session:
            await session.initialize()
            view = await session.call_tool("str_replace_editor",
                                           {"command": "view", "path": "/"})
            assert not view.is_error
            again = await session.call_tool("read", {"file_path": "/sub/bad\\xff\\xfe.txt"})
            assert not again.is_error
            return view.content[0].text, again.content[0].text  # type: ignore[union-attr]


def test_mcp_server_survives_a_tree_with_names_that_are_not_utf8(odd_names: Path) -> None:
    pytest.importorskip("mcp")
    listing, read = anyio.run(_mcp_view, odd_names)
    assert "/sub/bad\\xff\\xfe.txt" in listing
    assert read == "     1\traw name"


# -- item 5: output budgets keep the text the model sees ------------------------------------

_LINES = st.lists(
    st.one_of(st.text("ab\t", max_size=30), st.integers(1900, 2600).map(lambda n: "y" * n)),
    max_size=40,
)


@settings(max_examples=150, deadline=None)
@given(lines=_LINES, offset=st.integers(1, 5), limit=st.integers(1, 60),
       budget=st.integers(10, 9000), final_newline=st.booleans())
def test_a_budgeted_read_renders_the_same_text(
    lines: list[str], offset: int, limit: int, budget: int, final_newline: bool
) -> None:
    ws = Workspace("memory://hardening-budget", load_entry_points=False)
    data = "\n".join(lines) + ("\n" if final_newline else "")
    ws.backend.write("f.txt", data.encode(), Overwrite())
    fs = ws.context("a").fs
    try:
        whole = fs.read("/f.txt", offset, limit)
    except FsError as e:
        assert e.code is ErrorCode.FS_INVALID_ARGUMENT  # offset past the end
        return
    kept = fs.read("/f.txt", offset, limit, max_chars=budget, max_line_chars=MAX_LINE_CHARS)
    assert render_read(kept, budget) == render_read(whole, budget)
    assert kept.lines == [ln[:MAX_LINE_CHARS] for ln in whole.lines[: len(kept.lines)]]
    assert kept.cut == {
        n: len(ln) for n, ln in enumerate(whole.lines[: len(kept.lines)], offset)
        if len(ln) > MAX_LINE_CHARS
    }
    assert (kept.version, kept.total) == (whole.version, whole.total)


# -- item 11: deeply nested arguments ------------------------------------------------------


def test_deeply_nested_json_arguments_are_invalid_argument(root: Path) -> None:
    ctx = Workspace(str(root), load_entry_points=False).context("a")
    deep = '{"file_path": ' + "[" * 100_000 + "]" * 100_000 + "}"
    res = fails(ctx.tools.execute("read", deep), ErrorCode.FS_INVALID_ARGUMENT)
    assert "nested too deeply" in res.text
    nested: Any = "x"
    for _ in range(100_000):
        nested = [nested]
    fails(ctx.tools.execute("write", {"file_path": "/a.txt", "content": nested}),
          ErrorCode.FS_INVALID_ARGUMENT)
    assert list(root.iterdir()) == []


# -- overlapping occurrences ---------------------------------------------------------------


@pytest.mark.parametrize("url", ["local", "memory"])
def test_overlapping_occurrences_are_ambiguous(root: Path, url: str) -> None:
    ws = Workspace(str(root) if url == "local" else "memory://hardening-overlap",
                   load_entry_points=False)
    ws.backend.write("a.txt", b"aaa\nbab\n", Overwrite())
    ok(call(ws, "a", "read", file_path="/a.txt"))
    res = fails(call(ws, "a", "edit", file_path="/a.txt", old_string="aa", new_string="X"),
                ErrorCode.FS_MULTIPLE_MATCHES)
    assert "occurs 2 times" in res.text
    assert raw(ws, "/a.txt") == b"aaa\nbab\n"
    fails(call(ws, "a", "str_replace_editor", command="str_replace", path="/a.txt",
               old_str="aa", new_str="X"), ErrorCode.FS_MULTIPLE_MATCHES)
    ok(call(ws, "a", "edit", file_path="/a.txt", old_string="aa", new_string="X",
            replace_all=True))
    assert raw(ws, "/a.txt") == b"Xa\nbab\n"  # non-overlapping, left to right
    ok(call(ws, "a", "edit", file_path="/a.txt", old_string="bab", new_string="B"))
    assert raw(ws, "/a.txt") == b"Xa\nB\n"


# -- a plugin failing after the write landed ----------------------------------------------


class _Failing:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    @hookimpl
    def fs_written(self, event: WrittenEvent) -> None:
        raise self.exc


class _Recorder:
    def __init__(self) -> None:
        self.seen: list[str] = []

    @hookimpl(trylast=True)
    def fs_written(self, event: WrittenEvent) -> None:
        self.seen.append(event.path)


@pytest.mark.parametrize(
    "exc", [RuntimeError("plugin bug"), FsError(ErrorCode.FS_BACKEND, "diff card server down")]
)
def test_a_plugin_failing_on_written_does_not_fail_the_call(
    root: Path, exc: BaseException, caplog: pytest.LogCaptureFixture
) -> None:
    recorder = _Recorder()
    ws = Workspace(str(root), load_entry_points=False, plugins=[_Failing(exc), recorder])
    (root / "a.txt").write_bytes(b"one\n")
    ok(call(ws, "a", "read", file_path="/a.txt"))
    res = ok(call(ws, "a", "edit", file_path="/a.txt", old_string="one", new_string="two"))
    assert res.text.startswith("Edited /a.txt")
    # The ledger recorded the new version: the next edit is not stale.
    ok(call(ws, "a", "edit", file_path="/a.txt", old_string="two", new_string="three"))
    ok(call(ws, "a", "write", file_path="/b.txt", content="b\n"))
    assert (root / "a.txt").read_bytes() == b"three\n"
    assert recorder.seen == ["/a.txt", "/a.txt", "/b.txt"]
    assert any("write itself succeeded" in r.getMessage() for r in caplog.records)


# -- paths too deep or too long, on every store ---------------------------------------------


@pytest.mark.parametrize("url", ["local", "memory"])
def test_too_deep_or_too_long_paths_are_refused(root: Path, url: str) -> None:
    ws = Workspace(str(root) if url == "local" else "memory://hardening-deep",
                   load_entry_points=False)
    for path in ["a/" * 3000 + "x", "/" + "n" * 5000, "/d/" + "x/" * 128 + "f"]:
        res = fails(call(ws, "a", "write", file_path=path, content="x"),
                    ErrorCode.FS_INVALID_ARGUMENT)
        assert "at most" in res.text
        fails(call(ws, "a", "read", file_path=path), ErrorCode.FS_INVALID_ARGUMENT)
    fails(call(ws, "a", "read", file_path="/a/x"), ErrorCode.FS_NOT_FOUND)
    if url == "local":
        assert list(root.iterdir()) == []
