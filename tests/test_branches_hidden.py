"""The branches' folder (``.fsseam-branches/``) is out of every tool's reach, on main and on
a branch, on every store: each call that names it is refused (FS_PERMISSION_DENIED, the
folder named), nothing changes, and no listing, glob or grep shows it.

Every tool the registry offers is asked (a tool added later without a case here fails the
test), with each spelling of the folder's paths an agent could send.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fsseam import ErrorCode, Workspace
from fsseam.branches import PREFIX

from .test_branches import (
    STORES,
    Rig,
    branch_files,
    code,
    make_rig,
    ok,
    reserved,
    seed,
    show,
    stored,
)

REF = f"{PREFIX}/refs/feat.json"
SPELLINGS = [f"/{REF}", REF, f"/./{REF}", f"/a/../{REF}", f"//{REF}"]
"""One object of the folder, as an agent might name it."""
FOLDERS = [f"/{PREFIX}", f"/{PREFIX}/", f"/{PREFIX}/refs", PREFIX]
DENIED = "where fsseam keeps its own records of this workspace"
SPELLED = {"read", "write", "ls", "grep"}
"""The tools asked with each other spelling too (every tool resolves paths alike)."""


@pytest.fixture(params=STORES)
def rig(request: pytest.FixtureRequest, tmp_path: Path) -> Rig:
    return make_rig(request, request.param, tmp_path)


def file_calls(path: str) -> list[tuple[str, dict[str, Any]]]:
    """Every tool's call on the object ``path`` of the folder."""
    bare = path.lstrip("/")
    return [
        ("read", {"file_path": path}),
        ("write", {"file_path": path, "content": "{}"}),
        ("edit", {"file_path": path, "old_string": "feat", "new_string": "x"}),
        ("str_replace_editor", {"command": "view", "path": path}),
        ("str_replace_editor", {"command": "create", "path": path, "file_text": "{}"}),
        ("str_replace_editor", {"command": "str_replace", "path": path, "old_str": "feat",
                                "new_str": "x"}),
        ("str_replace_editor", {"command": "insert", "path": path, "insert_line": 0,
                                "insert_text": "x\n"}),
        ("str_replace_editor", {"command": "undo_edit", "path": path}),
        ("delete", {"file_path": path}),
        ("move", {"source_path": path, "destination_path": "/stolen.json"}),
        ("move", {"source_path": "/a.txt", "destination_path": path}),
        ("multi_edit", {"file_path": path, "edits": [{"old_string": "feat",
                                                      "new_string": "x"}]}),
        ("apply_patch", {"patch": f"*** Begin Patch\n*** Update File: {bare}\n@@\n-x\n+y\n"
                                  "*** End Patch"}),
        ("apply_patch", {"patch": f"*** Begin Patch\n*** Delete File: {bare}\n*** End Patch"}),
        ("apply_patch", {"patch": f"*** Begin Patch\n*** Add File: {bare}.new\n+x\n"
                                  "*** End Patch"}),
        ("apply_patch", {"patch": "*** Begin Patch\n*** Update File: a.txt\n"
                                  f"*** Move to: {bare}.moved\n@@\n-a\n+b\n*** End Patch"}),
        ("history", {"file_path": path}),
        ("restore", {"file_path": path, "version": "0"}),
        ("grep", {"pattern": "head", "path": path}),
        ("glob", {"pattern": "*", "path": path}),
        ("ls", {"path": path}),
    ]


def folder_calls(folder: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("ls", {"path": folder}),
        ("glob", {"pattern": "**/*", "path": folder}),
        ("grep", {"pattern": "head", "path": folder}),
        ("delete", {"file_path": folder}),
        ("move", {"source_path": folder, "destination_path": "/stolen"}),
        ("write", {"file_path": folder.rstrip("/") + "/refs/other.json", "content": "{}"}),
    ]


# The memory tool works under /memories only: a path that climbs out of /memories to the
# folder meets the workspace's own rule for it first (FS_PERMISSION_DENIED), as every tool's.
MEMORY_CALLS = [
    ("memory", {"command": "view", "path": f"/memories/../{REF}"}),
    ("memory", {"command": "create", "path": f"/memories/../{REF}", "file_text": "{}"}),
    ("memory", {"command": "str_replace", "path": f"/memories/../{REF}", "old_str": "feat",
                "new_str": "x"}),
    ("memory", {"command": "insert", "path": f"/memories/../{REF}", "insert_line": 0,
                "insert_text": "x"}),
    ("memory", {"command": "delete", "path": f"/memories/../{REF}"}),
    ("memory", {"command": "rename", "old_path": f"/memories/../{REF}",
                "new_path": "/memories/stolen.json"}),
    ("memory", {"command": "rename", "old_path": "/memories/m.txt",
                "new_path": f"/memories/../{REF}"}),
]


def test_every_tool_is_refused_the_branches_folder_on_main_and_on_a_branch(rig: Rig) -> None:
    main = seed(rig.ws, {"/a.txt": "a\n", "/b.txt": "b\n", "/memories/m.txt": "m\n"})
    br = rig.ws.branch("feat")
    b = br.context("b")
    show(b, "/b.txt")
    ok(b.tools.execute("write", {"file_path": "/b.txt", "content": "b on the branch\n"}))
    objects = reserved(rig.ws.backend)
    assert f"{PREFIX}/refs/feat.json" in objects
    on_branch = branch_files(br)
    for ws in (rig.ws, br):
        ctx = ws.context("agent")
        show(ctx, "/a.txt")
        show(ctx, "/memories/m.txt")
        calls = file_calls(f"/{REF}") + folder_calls(f"/{PREFIX}")
        calls += [c for p in SPELLINGS[1:] for c in file_calls(p) if c[0] in SPELLED]
        calls += [c for f in FOLDERS[1:] for c in folder_calls(f) if c[0] in SPELLED]
        asked = {name for name, _ in calls + MEMORY_CALLS}
        assert asked == set(ctx.tools.names())
        for name, args in calls:
            res = ctx.tools.execute(name, args)
            assert code(res) is ErrorCode.FS_PERMISSION_DENIED, (ws.branch_name, name, args,
                                                                   res.text)
            assert DENIED in res.text, res.text
        for name, args in MEMORY_CALLS:
            res = ctx.tools.execute(name, args)
            assert code(res) is ErrorCode.FS_PERMISSION_DENIED, (ws.branch_name, args, res.text)
        assert reserved(rig.ws.backend) == objects
        assert branch_files(br) == on_branch
        assert stored(rig.ws.backend) == main


def test_no_listing_glob_or_grep_shows_the_branches_folder(rig: Rig) -> None:
    seed(rig.ws, {"/a.txt": "head\n", "/d/b.txt": "head feat\n"})
    br = rig.ws.branch("feat")
    b = br.context("b")
    show(b, "/a.txt")
    ok(b.tools.execute("write", {"file_path": "/a.txt", "content": "head feat\n"}))
    assert reserved(rig.ws.backend)
    expected = {
        ("ls", "/"): "/a.txt  (5 bytes)\n/d/",
        ("glob", "**/*"): "/a.txt\n/d/b.txt",
        ("glob", ".*/**"): "No files match .*/** in /.",
        ("grep", "head"): "/a.txt\n/d/b.txt",
        ("grep", "feat"): "/d/b.txt",
    }
    for ws, first in ((rig.ws, "/a.txt  (5 bytes)"), (br, "/a.txt  (10 bytes)")):
        ctx = ws.context("agent")
        for (tool, arg), text in expected.items():
            key = "path" if tool == "ls" else "pattern"
            got = ok(ctx.tools.execute(tool, {key: arg})).text
            if (tool, arg) == ("ls", "/"):
                text = text.replace("/a.txt  (5 bytes)", first)
            if (tool, arg) == ("grep", "feat") and ws is br:
                text = "/a.txt\n/d/b.txt"
            assert got == text, (ws.branch_name, tool, arg, got)
            assert PREFIX not in got
        for args in ({"pattern": "head", "glob": f"{PREFIX}/**"},
                     {"pattern": "head", "output_mode": "content"},
                     {"pattern": "sha256", "output_mode": "count"}):
            got = ctx.tools.execute("grep", args).text
            assert PREFIX not in got and "refs" not in got, (ws.branch_name, args, got)


@pytest.mark.parametrize("processes", [0, 2])
def test_a_local_search_in_one_pass_or_by_helpers_leaves_the_folder_out(
        tmp_path: Path, processes: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """On local disk a search reads the tree in one pass, or in parts by helper
    processes, not through the gate's walk: the folder's files are left out there too."""
    from fsseam.limits import Limits
    from fsseam.seam import finding

    fast: list[str] = []
    tree, run_parts = finding.GrepCall.tree, finding.run_parts

    def one_pass(self: Any) -> Any:
        got = tree(self)
        if got is not None:
            fast.append("one pass")
        return got

    def by_parts(*args: Any) -> Any:
        fast.append("parts")
        return run_parts(*args)

    monkeypatch.setattr(finding.GrepCall, "tree", one_pass)
    monkeypatch.setattr(finding, "run_parts", by_parts)
    ws = Workspace(str(tmp_path), limits=Limits(finder_processes=processes))
    seed(ws, {f"/d{i}/f{j}.txt": "head\n" for i in range(3) for j in range(2)})
    ok(ws.branch("feat").context("b").tools.execute(
        "write", {"file_path": "/d9/new.txt", "content": "head on the branch\n"}))
    ctx = ws.context("agent")
    for args in ({"pattern": "head", "glob": f"{PREFIX}/**"},
                 {"pattern": "head", "glob": "**/*.json"},
                 {"pattern": "head", "glob": "**/.*/**"}):
        got = ok(ctx.tools.execute("grep", args)).text
        assert got == "No matches for head in / (0 files searched).", (args, got)
    got = ok(ctx.tools.execute("grep", {"pattern": "head", "output_mode": "count"})).text
    assert got.endswith("Total: 6 matching lines in 6 files."), got
    assert fast == ["parts" if processes else "one pass"] * 4
