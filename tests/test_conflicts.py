"""What FS_STALE shows: a diff bounded in size, where the agent's edit stands, and when the
refusal counts as a read of the current version (after an edit, never after a whole-file
write, a delete, a move or a restore)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fsseam import Context, ErrorCode, Limits, ToolResult, Workspace
from fsseam.conflicts import MAX_DIFF_LINE_CHARS, changes_part, summarize, target_status
from fsseam.edits import Insert, Replace
from fsseam.messages import render

from .helpers import fails, ok, raw


def _ws(limits: Limits | None = None) -> Workspace:
    return Workspace(f"memory://c-{uuid.uuid4().hex[:8]}", {"global_store": False},
                     limits=limits, load_entry_points=False)


def test_summary_is_whole_lines_within_the_budget() -> None:
    old = "".join(f"line {i}\n" for i in range(100))
    new = "".join(f"LINE {i}\n" for i in range(100))
    whole = summarize("/f", old, new, 100_000)
    assert (whole.changed, whole.shown, whole.complete) == (200, 200, True)
    cut = summarize("/f", old, new, 200)
    assert not cut.complete and cut.changed == 200
    assert len(cut.diff) <= 200
    assert cut.diff.startswith("@@ -1,100 +1,100 @@\n-line 0\n-line 1\n")
    assert cut.shown == cut.diff.count("\n-") + cut.diff.count("\n+")


def test_an_overlong_line_is_cut_and_the_diff_is_not_complete() -> None:
    s = summarize("/f", "a\n", "b" * 2000 + "\n", 10_000)
    assert s.diff.splitlines()[2] == "+" + "b" * (MAX_DIFF_LINE_CHARS - 1) + "... [line cut]"
    assert (s.changed, s.shown, s.complete) == (2, 1, False)


def test_same_text_is_not_a_change() -> None:
    s = summarize("/f", "x\n", "x\n", 100)
    assert (s.diff, s.same_text, s.complete) == ("", True, True)


def test_target_status_per_replacement() -> None:
    view = "a\nb\nb\n"
    parts = target_status(view, [Replace("a", "A"), Replace("b", "B"), Replace("c", "C"),
                                 Insert(0, "x")])
    text = render("changes_complete", "/f", {"since": "then", "diff": "", "status": parts,
                                             "advice": "."})
    assert text == (
        "What changed, from then to the current one:\n\n"
        "Your old_string (edit 1) still occurs exactly once in it. Your old_string (edit 2) "
        "now occurs 2 times in it. Your old_string (edit 3) no longer occurs in it. ."
    )


def test_a_diff_too_long_to_show_is_cut_and_asks_for_a_read() -> None:
    ws = _ws(Limits(conflict_diff_chars=120))
    a, b = ws.context("a"), ws.context("b")
    ok(a.tools.execute("write", {"file_path": "/f.txt", "content": "keep\n" + "x\n" * 30}))
    ok(b.tools.execute("read", {"file_path": "/f.txt"}))
    ok(b.tools.execute("write", {"file_path": "/f.txt", "content": "keep\n" + "y\n" * 30}))
    res = fails(a.tools.execute("edit", {"file_path": "/f.txt", "old_string": "keep",
                                         "new_string": "kept"}), ErrorCode.FS_STALE)
    body = res.text.split("\n")
    assert body[0] == (
        "Error [FS_STALE]: /f.txt has changed since you last read it, so your edit was not "
        "applied. What changed, from the version you read to the current one (the first 32 "
        "changed lines; 28 more are not shown):"
    )
    assert body[-1] == (
        "Your old_string still occurs exactly once in it. Read the file again, then retry the "
        "edit."
    )
    assert len("\n".join(body[1:-1])) <= 120
    # Not all of it was shown, so it is no read: the retry is refused again.
    fails(a.tools.execute("edit", {"file_path": "/f.txt", "old_string": "keep",
                                   "new_string": "kept"}), ErrorCode.FS_STALE)
    ok(a.tools.execute("read", {"file_path": "/f.txt"}))
    ok(a.tools.execute("edit", {"file_path": "/f.txt", "old_string": "keep",
                                "new_string": "kept"}))


def test_the_edit_target_gone_or_ambiguous() -> None:
    ws = _ws()
    a, b = ws.context("a"), ws.context("b")
    ok(a.tools.execute("write", {"file_path": "/g.txt", "content": "alpha\nbeta\n"}))
    ok(b.tools.execute("read", {"file_path": "/g.txt"}))
    ok(b.tools.execute("write", {"file_path": "/g.txt", "content": "ALPHA\nbeta\nbeta\n"}))
    res = fails(a.tools.execute("str_replace_editor", {
        "command": "str_replace", "path": "/g.txt", "old_str": "alpha", "new_str": "a"}),
        ErrorCode.FS_STALE)
    assert "Your old_str no longer occurs in it." in res.text
    ok(b.tools.execute("write", {"file_path": "/g.txt", "content": "alpha\nbeta\nbeta\n"}))
    res = fails(a.tools.execute("edit", {"file_path": "/g.txt", "old_string": "beta",
                                         "new_string": "b"}), ErrorCode.FS_STALE)
    assert "Your old_string now occurs 2 times in it." in res.text


def test_a_file_rewritten_with_the_same_text_is_no_change() -> None:
    """The message when only the version moved on (GCS gives a rewrite of identical bytes
    a new generation; backends/gcs/tests/test_gcs_history.py runs it for real)."""
    part = changes_part(summarize("/s.txt", "same\n", "same\n", 100),
                        target_status("same\n", []))
    assert render("stale_changed", "/s.txt", {"action": "edit", "changes": part}) == (
        "/s.txt has changed since you last read it, so your edit was not applied. Its text "
        "is the same as the version you read (it was rewritten with the same content). Retry "
        "the edit as it is; this refusal counts as your read of the current version."
    )


# -- a retry after a conflict: what the diff lets through ----------------------------------


def _patch(body: str) -> dict[str, Any]:
    return {"patch": f"*** Begin Patch\n{body}*** End Patch"}


def _native(ctx: Context, op: dict[str, Any]) -> ToolResult:
    """OpenAI's apply_patch_call, as a ToolResult-like pair (ok, text)."""
    out = ctx.tools.handle({"type": "apply_patch_call", "call_id": "c", "operation": op})
    code = ErrorCode.FS_STALE if "[FS_STALE]" in out["output"] else None
    return ToolResult(tool="apply_patch", ok=out["status"] == "completed", text=out["output"],
                      error=None if code is None else {"code": code, "message": ""})


# (name, the call a makes, the bytes it leaves at /d/f.txt when it goes ahead)
WHOLE_FILE: list[tuple[str, Callable[[Context], ToolResult], bytes | None]] = [
    ("write", lambda c: c.tools.execute("write", {"file_path": "/d/f.txt",
                                                  "content": "mine\n"}), b"mine\n"),
    ("delete", lambda c: c.tools.execute("delete", {"file_path": "/d/f.txt"}), None),
    ("move", lambda c: c.tools.execute("move", {"source_path": "/d/f.txt",
                                                "destination_path": "/d/g.txt"}), None),
    ("patch delete", lambda c: c.tools.execute(
        "apply_patch", _patch("*** Delete File: d/f.txt\n")), None),
    ("patch move", lambda c: c.tools.execute(
        "apply_patch", _patch("*** Update File: d/f.txt\n*** Move to: d/g.txt\n")), None),
    ("native delete", lambda c: _native(c, {"type": "delete_file", "path": "d/f.txt"}), None),
]


@pytest.fixture(params=["memory", "local"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Workspace:
    if request.param == "memory":
        return _ws()
    return Workspace(str(tmp_path), load_entry_points=False)


@pytest.mark.parametrize("name, act, after", WHOLE_FILE, ids=[w[0] for w in WHOLE_FILE])
def test_a_whole_file_call_retried_after_a_conflict_keeps_the_other_change(
    store: Workspace, name: str, act: Callable[[Context], ToolResult], after: bytes | None
) -> None:
    """A reads, B edits, A's call is refused with the whole diff; the same call again is
    refused again and B's bytes stay exactly; after a read it goes ahead."""
    ws = store
    a, b = ws.context("a"), ws.context("b")
    ok(b.tools.execute("write", {"file_path": "/d/f.txt", "content": "one\n"}))
    ok(a.tools.execute("read", {"file_path": "/d/f.txt"}))
    ok(b.tools.execute("edit", {"file_path": "/d/f.txt", "old_string": "one",
                                "new_string": "b's\n"}))
    first = fails(act(a), ErrorCode.FS_STALE)
    assert "\n@@ -1 +1,2 @@\n-one\n+b's\n+\n" in first.text, first.text
    assert "Read the file again" in first.text, first.text
    again = fails(act(a), ErrorCode.FS_STALE)
    assert again.text == first.text
    assert raw(ws, "/d/f.txt") == b"b's\n\n"
    assert raw(ws, "/d/g.txt") is None
    ok(a.tools.execute("read", {"file_path": "/d/f.txt"}))
    ok(act(a))
    assert raw(ws, "/d/f.txt") == after


def test_an_edit_retried_after_a_conflict_needs_no_read(store: Workspace) -> None:
    """The edit family keeps the rule: its exact-match replace cannot drop what the diff
    showed, so the retry goes ahead and both changes are in the file."""
    ws = store
    a, b = ws.context("a"), ws.context("b")
    ok(b.tools.execute("write", {"file_path": "/e.txt", "content": "x = 1\ny = 2\n"}))
    ok(a.tools.execute("read", {"file_path": "/e.txt"}))
    ok(b.tools.execute("edit", {"file_path": "/e.txt", "old_string": "x = 1",
                                "new_string": "x = 10"}))
    fails(a.tools.execute("apply_patch", _patch("*** Update File: e.txt\n@@\n-y = 2\n+y = 3\n")),
          ErrorCode.FS_STALE)
    ok(a.tools.execute("apply_patch", _patch("*** Update File: e.txt\n@@\n-y = 2\n+y = 3\n")))
    assert raw(ws, "/e.txt") == b"x = 10\ny = 3\n"


def test_the_memory_tools_create_over_a_changed_file_keeps_it(store: Workspace) -> None:
    """create never replaces a file: over one another agent changed since a's view it is
    refused, again on a retry, and the other agent's bytes stay; str_replace after a view
    changes only a's part."""
    ws = store
    a, b = ws.context("a"), ws.context("b")
    m = "memory"
    ok(b.tools.execute(m, {"command": "create", "path": "/memories/n.md",
                           "file_text": "- tea\n"}))
    ok(a.tools.execute(m, {"command": "view", "path": "/memories/n.md"}))
    ok(b.tools.execute(m, {"command": "str_replace", "path": "/memories/n.md",
                           "old_str": "tea", "new_str": "coffee"}))
    for _ in range(2):
        fails(a.tools.execute(m, {"command": "create", "path": "/memories/n.md",
                                  "file_text": "- tea\n- cake\n"}), ErrorCode.FS_ALREADY_EXISTS)
        assert raw(ws, "/memories/n.md") == b"- coffee\n"
    ok(a.tools.execute(m, {"command": "view", "path": "/memories/n.md"}))
    ok(a.tools.execute(m, {"command": "insert", "path": "/memories/n.md", "insert_line": 1,
                           "insert_text": "- cake"}))
    assert raw(ws, "/memories/n.md") == b"- coffee\n- cake\n"
