"""ls / glob / grep / delete / move beyond the shared conformance cases: escapes, limits,
bad patterns, races, and the skip rules."""

from __future__ import annotations

import os
import threading
import uuid
from pathlib import Path

import pytest

from fsseam import ErrorCode, Overwrite, Workspace
from fsseam.globs import compile_glob
from fsseam.grep import compile_pattern, hunks, matching_lines


def _ws(kind: str, tmp_path: Path) -> Workspace:
    if kind == "memory":
        return Workspace(f"memory://finders-{uuid.uuid4().hex}")
    root = tmp_path / "root"
    root.mkdir()
    return Workspace(str(root))


@pytest.fixture(params=["memory", "local"])
def ws(request: pytest.FixtureRequest, tmp_path: Path) -> Workspace:
    return _ws(request.param, tmp_path)


def put(ws: Workspace, key: str, data: bytes) -> None:
    ws.backend.write(key, data, Overwrite())


# -- pure parts ----------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("**/*.py", "a.py", True),
        ("**/*.py", "x/y/a.py", True),
        ("*.py", "x/a.py", False),
        ("src/**", "src/a/b", True),
        ("src/**/test_*.py", "src/test_a.py", True),
        ("src/**/test_*.py", "src/x/test_a.py", True),
        ("src/**/test_*.py", "srcx/test_a.py", False),
        ("**/*.{ts,tsx}", "a/b.tsx", True),
        ("**/*.{ts,tsx}", "a/b.js", False),
        ("[ab]?.txt", "a1.txt", True),
        ("[!ab]?.txt", "a1.txt", False),
        ("a/*/c", "a/b/x/c", False),
    ],
)
def test_glob_semantics(pattern: str, path: str, matches: bool) -> None:
    assert compile_glob(pattern).match(path) is matches


def test_glob_base_is_the_literal_prefix() -> None:
    assert compile_glob("src/app/**/*.py").base == "src/app"
    assert compile_glob("**/*.py").base == ""
    assert compile_glob("{a,b}/x.py").base == ""


@pytest.mark.parametrize("bad", ["", "  ", "a/[bc", "../x", "{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}"])
def test_bad_globs_are_invalid_arguments(bad: str) -> None:
    from fsseam import FsError

    with pytest.raises(FsError) as info:
        compile_glob(bad)
    assert info.value.code is ErrorCode.FS_INVALID_ARGUMENT


def test_matching_lines_and_hunks() -> None:
    text = "a\nb match\nc\nd\ne match\nf\ng\nh\ni match\n"
    p = compile_pattern("match")
    lines = matching_lines(text, p)
    assert lines == [1, 4, 8]
    got = [(h.first, h.lines, h.matches) for h in hunks(text, lines, 1)]
    # adjacent runs merge, as in grep -C
    assert got == [
        (1, ["a", "b match", "c", "d", "e match", "f"], [2, 5]),
        (8, ["h", "i match"], [9]),
    ]
    assert [(h.first, h.matches) for h in hunks(text, lines, 0)] == [(2, [2]), (5, [5]),
                                                                     (9, [9])]
    assert [(h.first, h.matches) for h in hunks(text, lines, 2)] == [(1, [2, 5, 9])]


def test_literal_patterns_skip_the_regex_engine() -> None:
    assert compile_pattern("plain text").literal == "plain text"
    assert compile_pattern("a.b").literal is None
    assert compile_pattern("abc", case_insensitive=True).literal is None


# -- tools ---------------------------------------------------------------------------------

def test_grep_survives_a_runaway_pattern(ws: Workspace) -> None:
    put(ws, "slow.txt", b"a" * 40 + b"b\n")
    put(ws, "fine.txt", b"aaab\n")
    ctx = ws.context("a")
    res = ctx.tools.execute("grep", {"pattern": "(a|aa)+$"})
    assert res.ok, res.text
    assert "1 too slow for the pattern" in res.text


@pytest.mark.parametrize(
    "args",
    [
        {"pattern": ""},
        {"pattern": "(x"},
        {"pattern": "x", "max_results": 0},
        {"pattern": "x", "max_results": 10**9},
        {"pattern": "x", "context_lines": -1},
        {"pattern": "x", "output_mode": "lines"},
        {"pattern": "x", "glob": "[x"},
    ],
)
def test_grep_bad_arguments(ws: Workspace, args: dict[str, object]) -> None:
    res = ws.context("a").tools.execute("grep", args)
    assert res.error is not None and res.error.code is ErrorCode.FS_INVALID_ARGUMENT, res.text


def test_grep_caps_content_and_says_how_to_see_more(ws: Workspace) -> None:
    put(ws, "many.txt", "".join(f"hit {i}\n" for i in range(300)).encode())
    ctx = ws.context("a")
    res = ctx.tools.execute("grep", {"pattern": "hit", "output_mode": "content",
                                     "max_results": 5})
    assert res.ok, res.text
    assert res.text.splitlines()[:6] == ["/many.txt", *(f"{n:>6}\thit {n - 1}" for n in
                                                       range(1, 6))]
    assert "(Output limited: 300 matching lines in all. Set max_results" in res.text


def test_grep_reports_skipped_files(ws: Workspace) -> None:
    put(ws, "bin.dat", b"needle\x00\x01")
    put(ws, "latin1.txt", "needle caf\xe9".encode("latin-1"))
    put(ws, "ok.txt", b"needle\n")
    put(ws, "node_modules/x/y.js", b"needle\n")
    res = ws.context("a").tools.execute("grep", {"pattern": "needle"})
    assert res.text == (
        "/ok.txt\n(Not searched: 1 binary, 1 in hidden or dependency directories (name them "
        "in glob or path to search them), 1 not UTF-8.)"
    )
    res = ws.context("a").tools.execute("grep", {"pattern": "needle",
                                                 "path": "/node_modules"})
    assert res.text == "/node_modules/x/y.js"


def test_grep_of_one_file(ws: Workspace) -> None:
    put(ws, "d/one.txt", b"x\nneedle\n")
    res = ws.context("a").tools.execute("grep", {"pattern": "needle", "path": "/d/one.txt",
                                                 "output_mode": "content"})
    assert res.text == "/d/one.txt\n     2\tneedle"
    res = ws.context("a").tools.execute("grep", {"pattern": "needle", "path": "/d/none.txt"})
    assert res.error is not None and res.error.code is ErrorCode.FS_NOT_FOUND


def test_grep_matches_crlf_files_on_the_model_view(ws: Workspace) -> None:
    put(ws, "w.txt", b"\xef\xbb\xbfone\r\ntwo\r\n")
    res = ws.context("a").tools.execute("grep", {"pattern": "^two$", "output_mode": "content"})
    assert res.text == "/w.txt\n     2\ttwo"


def test_finders_stay_inside_the_root(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("needle\n")
    root = tmp_path / "root"
    root.mkdir()
    (root / "in.txt").write_text("needle\n")
    os.symlink(outside, root / "link")
    ws = Workspace(str(root))
    ctx = ws.context("a")
    for tool, args in [
        ("glob", {"pattern": "**/*.txt"}),
        ("grep", {"pattern": "needle"}),
        ("grep", {"pattern": "needle", "output_mode": "content"}),
    ]:
        res = ctx.tools.execute(tool, args)
        assert res.ok, res.text
        assert "secret" not in res.text and "/in.txt" in res.text
    for tool, args in [
        ("glob", {"pattern": "*.txt", "path": "/../outside"}),
        ("grep", {"pattern": "needle", "path": "/link"}),
        ("ls", {"path": "/link"}),
        ("move", {"source_path": "/in.txt", "destination_path": "/link/stolen.txt"}),
        ("move", {"source_path": "/link/secret.txt", "destination_path": "/mine.txt"}),
        ("delete", {"file_path": "/link/secret.txt"}),
    ]:
        res = ctx.tools.execute(tool, args)
        assert res.error is not None and res.error.code is ErrorCode.FS_OUTSIDE_ROOT, (
            tool, args, res.text)
    assert (outside / "secret.txt").read_text() == "needle\n"
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


def test_delete_and_move_refuse_directories(ws: Workspace) -> None:
    put(ws, "d/f.txt", b"x")
    ctx = ws.context("a")
    res = ctx.tools.execute("delete", {"file_path": "/d"})
    assert res.error is not None and res.error.code in (
        ErrorCode.FS_NOT_OBSERVED, ErrorCode.FS_IS_DIRECTORY)
    assert ws.backend.read("d/f.txt").data == b"x"
    res = ctx.tools.execute("move", {"source_path": "/d/f.txt", "destination_path": "/d/f.txt"})
    assert res.error is not None and res.error.code is ErrorCode.FS_INVALID_ARGUMENT


def _race_once(ws: Workspace, action: str, round_: int) -> None:
    put(ws, "race.txt", f"v{round_}\n".encode())
    with_edit, with_other = ws.context(f"e{round_}"), ws.context(f"o{round_}")
    assert with_edit.tools.execute("read", {"file_path": "/race.txt"}).ok
    assert with_other.tools.execute("read", {"file_path": "/race.txt"}).ok
    results: dict[str, bool] = {}
    barrier = threading.Barrier(2)

    def edit() -> None:
        barrier.wait()
        results["edit"] = with_edit.tools.execute(
            "edit", {"file_path": "/race.txt", "old_string": f"v{round_}",
                     "new_string": "edited"}).ok

    def other() -> None:
        barrier.wait()
        args = ({"file_path": "/race.txt"} if action == "delete" else
                {"source_path": "/race.txt", "destination_path": f"/moved{round_}.txt"})
        results["other"] = with_other.tools.execute(action, args).ok

    threads = [threading.Thread(target=edit), threading.Thread(target=other)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results.values()) == [False, True], results
    listing = {e.key: ws.backend.read(e.key).data for e in ws.backend.walk("")}
    if results["edit"]:
        assert listing.get("race.txt") == b"edited\n"
        assert f"moved{round_}.txt" not in listing
    elif action == "move":
        assert "race.txt" not in listing
        assert listing[f"moved{round_}.txt"] == f"v{round_}\n".encode()
    else:
        assert "race.txt" not in listing
    for key in listing:
        ws.backend.delete(key)


@pytest.mark.parametrize("action", ["delete", "move"])
def test_delete_or_move_racing_an_edit_exactly_one_wins(ws: Workspace, action: str) -> None:
    """Two agents observed the same version: one edits, the other deletes or moves. However
    the threads interleave, exactly one succeeds and no bytes are lost."""
    for round_ in range(20):
        _race_once(ws, action, round_)
