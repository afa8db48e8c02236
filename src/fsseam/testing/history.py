"""History conformance: undo, restore, history and conflicts behave the same on every store
that keeps versions (S3 versioned buckets, GCS object versioning, fsseam's own history)."""

from __future__ import annotations

import threading

from ..errors import ErrorCode, FsError
from ..tools.base import ToolResult
from ..workspace import Context, Workspace

__all__ = ["HistoryConformance"]

EDITOR = "str_replace_editor"


def _ok(res: ToolResult) -> ToolResult:
    assert res.ok, res.text
    return res


def _fails(res: ToolResult, code: ErrorCode) -> ToolResult:
    assert res.error is not None and res.error.code is code, res.text
    return res


def _bytes(ws: Workspace, key: str) -> bytes | None:
    try:
        return ws.backend.read(key).data
    except FsError as e:
        if e.code is ErrorCode.FS_NOT_FOUND:
            return None
        raise


def _undo(ctx: Context, path: str) -> ToolResult:
    return ctx.tools.execute(EDITOR, {"command": "undo_edit", "path": path})


def _edit(ctx: Context, path: str, old: str, new: str) -> ToolResult:
    return ctx.tools.execute("edit", {"file_path": path, "old_string": old, "new_string": new})


class HistoryConformance:
    """Mixin: subclass with a ``history_workspace`` fixture (a Workspace over an empty root
    whose storage keeps versions)."""

    def test_undo_takes_back_own_changes_newest_first(self, history_workspace: Workspace
                                                       ) -> None:
        ws = history_workspace
        a = ws.context("a")
        _ok(a.tools.execute("write", {"file_path": "/u.txt", "content": "one\ntwo\n"}))
        _ok(_edit(a, "/u.txt", "two", "TWO"))
        _ok(a.tools.execute(EDITOR, {"command": "str_replace", "path": "/u.txt",
                                     "old_str": "one", "new_str": "ONE"}))
        assert _bytes(ws, "u.txt") == b"ONE\nTWO\n"
        res = _ok(_undo(a, "/u.txt"))
        assert res.text == (
            "Last edit to /u.txt undone successfully. Here's the result of running `cat -n` "
            "on /u.txt:\n     1\tone\n     2\tTWO"
        )
        assert _bytes(ws, "u.txt") == b"one\nTWO\n"
        _ok(_undo(a, "/u.txt"))
        assert _bytes(ws, "u.txt") == b"one\ntwo\n"
        # The first change created the file: undoing it deletes the file.
        res = _ok(_undo(a, "/u.txt"))
        assert res.text == (
            "Last edit to /u.txt undone successfully: it created the file, which is now "
            "deleted."
        )
        assert _bytes(ws, "u.txt") is None
        res = _fails(_undo(a, "/u.txt"), ErrorCode.FS_INVALID_ARGUMENT)
        assert "no change to /u.txt that can be undone" in res.text
        # After the undo the file is known absent: a create needs no read.
        _ok(a.tools.execute(EDITOR, {"command": "create", "path": "/u.txt",
                                     "file_text": "again\n"}))

    def test_undo_after_a_patch_writes_back_what_the_patch_replaced(
        self, history_workspace: Workspace
    ) -> None:
        """An Update of an existing file, through apply_patch (one file or several) and
        through OpenAI's native apply_patch_call, is undone by writing back the version it
        replaced: the file is never deleted."""
        ws = history_workspace
        a = ws.context("a")
        _ok(a.tools.execute("write", {"file_path": "/p.cfg", "content": "a=1\nb=2\n"}))
        _ok(a.tools.execute("write", {"file_path": "/q.cfg", "content": "q=1\n"}))
        for path in ("/p.cfg", "/q.cfg"):
            _ok(a.tools.execute("read", {"file_path": path}))
        _ok(a.tools.execute("apply_patch", {"patch": (
            "*** Begin Patch\n*** Update File: p.cfg\n@@\n-a=1\n+a=9\n*** End Patch")}))
        assert _bytes(ws, "p.cfg") == b"a=9\nb=2\n"
        res = _ok(_undo(a, "/p.cfg"))
        assert "created the file" not in res.text and not res.value.deleted, res.text
        assert _bytes(ws, "p.cfg") == b"a=1\nb=2\n"
        # several files in one patch: each update is undone on its own, the added file's
        # undo deletes it
        _ok(a.tools.execute("apply_patch", {"patch": (
            "*** Begin Patch\n*** Update File: p.cfg\n@@\n-b=2\n+b=8\n"
            "*** Update File: q.cfg\n@@\n-q=1\n+q=7\n"
            "*** Add File: n.cfg\n+n=1\n*** End Patch")}))
        _ok(_undo(a, "/q.cfg"))
        assert _bytes(ws, "q.cfg") == b"q=1\n"
        _ok(_undo(a, "/p.cfg"))
        assert _bytes(ws, "p.cfg") == b"a=1\nb=2\n"
        _ok(_undo(a, "/n.cfg"))
        assert _bytes(ws, "n.cfg") is None
        # OpenAI's native apply_patch_call takes the same route
        out = a.tools.handle({"type": "apply_patch_call", "call_id": "c1", "operation": {
            "type": "update_file", "path": "/p.cfg", "diff": "@@\n-a=1\n+a=5\n"}})
        assert out["status"] == "completed", out
        assert _bytes(ws, "p.cfg") == b"a=5\nb=2\n"
        _ok(_undo(a, "/p.cfg"))
        assert _bytes(ws, "p.cfg") == b"a=1\nb=2\n"
        # what is left below the patches is the write that created the file
        res = _ok(_undo(a, "/p.cfg"))
        assert res.value.deleted and _bytes(ws, "p.cfg") is None

    def test_undo_over_another_agents_change_is_refused(self, history_workspace: Workspace
                                                        ) -> None:
        ws = history_workspace
        a, b = ws.context("a"), ws.context("b")
        _ok(a.tools.execute("write", {"file_path": "/r.txt", "content": "one\ntwo\n"}))
        _ok(_edit(a, "/r.txt", "two", "TWO"))
        _ok(b.tools.execute("read", {"file_path": "/r.txt"}))
        _ok(_edit(b, "/r.txt", "one", "ONE"))
        res = _fails(_undo(a, "/r.txt"), ErrorCode.FS_STALE)
        # (The whole text is pinned in fsseam's own tests; here: what every store must say.)
        assert res.text.startswith("Error [FS_STALE]: /r.txt was changed by someone else")
        assert ":\n@@ -1,2 +1,2 @@\n-one\n+ONE\n TWO\n" in res.text
        assert _bytes(ws, "r.txt") == b"ONE\nTWO\n"
        # a has seen b's version: taking its own change back by hand needs no read.
        _ok(_edit(a, "/r.txt", "TWO", "two"))
        assert _bytes(ws, "r.txt") == b"ONE\ntwo\n"

    def test_history_lists_versions_newest_first(self, history_workspace: Workspace) -> None:
        ws = history_workspace
        a, b = ws.context("a"), ws.context("b")
        _ok(a.tools.execute("write", {"file_path": "/h.txt", "content": "1\n"}))
        _ok(_edit(a, "/h.txt", "1", "22"))
        _ok(b.tools.execute("read", {"file_path": "/h.txt"}))
        _ok(_edit(b, "/h.txt", "22", "333"))
        out = _ok(a.tools.execute("history", {"file_path": "/h.txt"})).value
        entries = [(e.size, e.latest, e.deleted) for e in out.entries]
        assert entries == [(4, True, False), (3, False, False), (2, False, False)]
        assert [e.owner for e in out.entries] == ["b", "a", "a"]
        assert len({e.id for e in out.entries}) == 3
        text = a.tools.execute("history", {"file_path": "/h.txt", "limit": 2}).text
        lines = text.splitlines()
        assert lines[0] == "/h.txt: 2 versions kept, newest first."
        assert lines[1].startswith(f"1. {out.entries[0].id}  (current)  ")
        assert lines[1].endswith("  4 bytes  by b")
        assert lines[2].startswith(f"2. {out.entries[1].id}  ")
        assert lines[2].endswith("  3 bytes  by a (you)")
        assert lines[3:] == [
            "(Showing the newest 2; older versions may be kept too: raise limit to see them.)",
            "To bring one back: restore with file_path and its version id.",
        ]

    def test_undo_and_restore_keep_the_author_of_the_bytes(
        self, history_workspace: Workspace
    ) -> None:
        """Bytes written back by an undo or a restore are listed as their first writer's,
        not as the agent's that brought them back."""
        ws = history_workspace
        a, b, c = ws.context("a"), ws.context("b"), ws.context("c")
        _ok(a.tools.execute("write", {"file_path": "/o.txt", "content": "by a\n"}))
        _ok(b.tools.execute("read", {"file_path": "/o.txt"}))
        _ok(_edit(b, "/o.txt", "by a", "by b"))
        _ok(_undo(b, "/o.txt"))
        assert _bytes(ws, "o.txt") == b"by a\n"
        entries = _ok(c.tools.execute("history", {"file_path": "/o.txt"})).value.entries
        assert [e.owner for e in entries] == ["a", "b", "a"]
        assert entries[0].latest
        _ok(c.tools.execute("read", {"file_path": "/o.txt"}))
        _ok(c.tools.execute("restore", {"file_path": "/o.txt", "version": entries[1].id}))
        assert _bytes(ws, "o.txt") == b"by b\n"
        text = c.tools.execute("history", {"file_path": "/o.txt", "limit": 1}).text
        assert text.splitlines()[1].endswith("  5 bytes  by b"), text

    def test_restore_brings_back_an_old_version_as_a_guarded_write(
        self, history_workspace: Workspace
    ) -> None:
        ws = history_workspace
        a, b, c = ws.context("a"), ws.context("b"), ws.context("c")
        _ok(a.tools.execute("write", {"file_path": "/s.txt", "content": "first\n"}))
        _ok(a.tools.execute("write", {"file_path": "/s.txt", "content": "second\n"}))
        oldest = _ok(a.tools.execute("history", {"file_path": "/s.txt"})).value.entries[-1]
        # Not read: refused like a write, and nothing changes.
        _fails(c.tools.execute("restore", {"file_path": "/s.txt", "version": oldest.id}),
               ErrorCode.FS_NOT_OBSERVED)
        # Changed since a's last look: refused with what changed.
        _ok(b.tools.execute("read", {"file_path": "/s.txt"}))
        _ok(b.tools.execute("write", {"file_path": "/s.txt", "content": "third\n"}))
        res = _fails(a.tools.execute("restore", {"file_path": "/s.txt", "version": oldest.id}),
                     ErrorCode.FS_STALE)
        assert "so your restore was not applied" in res.text
        assert "\n-second\n+third\n" in res.text
        assert _bytes(ws, "s.txt") == b"third\n"
        # A restore replaces the whole file: the diff is no read, so the same restore is
        # refused again (b's bytes stay) until a reads the file.
        _fails(a.tools.execute("restore", {"file_path": "/s.txt", "version": oldest.id}),
               ErrorCode.FS_STALE)
        assert _bytes(ws, "s.txt") == b"third\n"
        _ok(a.tools.execute("read", {"file_path": "/s.txt"}))
        res = _ok(a.tools.execute("restore", {"file_path": "/s.txt", "version": oldest.id}))
        assert res.text.startswith(f"Restored /s.txt at version {oldest.id} (6 bytes, 1 line)")
        assert _bytes(ws, "s.txt") == b"first\n"
        # Restoring it again writes nothing; undo takes the restore back.
        res = _ok(a.tools.execute("restore", {"file_path": "/s.txt", "version": oldest.id}))
        assert res.text == f"/s.txt already holds version {oldest.id}; nothing was written."
        _ok(_undo(a, "/s.txt"))
        assert _bytes(ws, "s.txt") == b"third\n"
        _fails(a.tools.execute("restore", {"file_path": "/s.txt", "version": "zzzzzzzzz"}),
               ErrorCode.FS_NOT_FOUND)

    def test_restore_brings_back_a_deleted_file(self, history_workspace: Workspace) -> None:
        ws = history_workspace
        a = ws.context("a")
        _ok(a.tools.execute("write", {"file_path": "/d.txt", "content": "keep me\n"}))
        version = _ok(a.tools.execute("history", {"file_path": "/d.txt"})).value.entries[0].id
        _ok(a.tools.execute("delete", {"file_path": "/d.txt"}))
        assert _bytes(ws, "d.txt") is None
        res = _ok(a.tools.execute("restore", {"file_path": "/d.txt", "version": version}))
        assert res.text.startswith(f"Recreated /d.txt at version {version}")
        assert _bytes(ws, "d.txt") == b"keep me\n"

    def test_conflict_shows_the_change_and_the_next_edit_needs_no_read(
        self, history_workspace: Workspace
    ) -> None:
        ws = history_workspace
        a, b = ws.context("a"), ws.context("b")
        _ok(a.tools.execute("write", {"file_path": "/c.py", "content": "x = 1\ny = 2\n"}))
        _ok(b.tools.execute("read", {"file_path": "/c.py"}))
        _ok(_edit(b, "/c.py", "x = 1", "x = 10"))
        res = _fails(_edit(a, "/c.py", "y = 2", "y = 20"), ErrorCode.FS_STALE)
        assert ":\n@@ -1,2 +1,2 @@\n-x = 1\n+x = 10\n y = 2\nYour old_string still " in res.text
        _ok(_edit(a, "/c.py", "y = 2", "y = 20"))
        assert _bytes(ws, "c.py") == b"x = 10\ny = 20\n"

    def test_the_same_fix_made_by_another_agent_is_refused_as_theirs(
            self, history_workspace: Workspace) -> None:
        """A change someone else made is not yours: b's edit, made on its read, gives
        exactly what a wrote since; b is told so (FS_STALE, with the diff, which counts as
        its read) and nothing is written."""
        ws = history_workspace
        a, b = ws.context("a"), ws.context("b")
        _ok(a.tools.execute("write", {"file_path": "/f.py", "content": "retries = 1\n"}))
        _ok(b.tools.execute("read", {"file_path": "/f.py"}))
        _ok(_edit(a, "/f.py", "retries = 1", "retries = 3"))
        res = _fails(_edit(b, "/f.py", "retries = 1", "retries = 3"), ErrorCode.FS_STALE)
        assert res.text.startswith(
            "Error [FS_STALE]: /f.py already holds exactly your change, made "), res.text
        assert ("nothing was written: if your change should apply once, it is there; if it "
                "builds on the old value, apply it again. What changed, from the version you "
                "read to the current one:\n@@ -1 +1 @@\n-retries = 1\n+retries = 3\n"
                ) in res.text
        assert _bytes(ws, "f.py") == b"retries = 3\n"
        # b's refusal wrote nothing: two versions are kept, not three.
        assert len(ws.context("x").fs.history("/f.py").entries) == 2
        # and the diff, shown whole, was b's read of the current version.
        _ok(_edit(b, "/f.py", "retries = 3", "retries = 4"))

    def test_an_undo_whose_result_another_writer_made_is_refused_as_not_its_own(
            self, history_workspace: Workspace) -> None:
        """b's undo would put back a's bytes, which a itself put back since: the file holds
        exactly the undo's result, made by someone else, so the undo is refused saying so
        (the owner the object names is the one the undo writes for, which proves nothing
        of who made this version), and nothing is written."""
        ws = history_workspace
        a, b = ws.context("a"), ws.context("b")
        _ok(a.tools.execute("write", {"file_path": "/r.txt", "content": "x = 1\n"}))
        _ok(b.tools.execute("read", {"file_path": "/r.txt"}))
        _ok(_edit(b, "/r.txt", "x = 1", "x = 2"))
        _ok(a.tools.execute("read", {"file_path": "/r.txt"}))
        _ok(_edit(a, "/r.txt", "x = 2", "x = 1"))
        kept = len(ws.context("x").fs.history("/r.txt").entries)
        res = _fails(_undo(b, "/r.txt"), ErrorCode.FS_STALE)
        assert "/r.txt already holds exactly your change, made " in res.text, res.text
        assert _bytes(ws, "r.txt") == b"x = 1\n"
        assert len(ws.context("x").fs.history("/r.txt").entries) == kept

    def test_identical_writes_racing_one_succeeds_the_rest_are_told(
        self, history_workspace: Workspace
    ) -> None:
        ws = history_workspace
        _ok(ws.context("setup").tools.execute("write", {"file_path": "/w.txt",
                                                        "content": "v0\n"}))
        agents = [ws.context(f"agent-{i}") for i in range(4)]
        for ctx in agents:
            _ok(ctx.tools.execute("read", {"file_path": "/w.txt"}))
        barrier = threading.Barrier(len(agents))
        results: list[ToolResult] = []

        def write(ctx: Context) -> None:
            barrier.wait()
            results.append(ctx.tools.execute("write", {"file_path": "/w.txt",
                                                       "content": "fixed\n"}))

        threads = [threading.Thread(target=write, args=(ctx,)) for ctx in agents]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sum(r.ok for r in results) == 1, [r.text for r in results]
        for r in results:
            if not r.ok:
                assert r.error is not None and r.error.code is ErrorCode.FS_STALE
                assert "/w.txt already holds exactly your change, made " in r.text, r.text
        assert _bytes(ws, "w.txt") == b"fixed\n"
        assert len(ws.context("x").fs.history("/w.txt").entries) == 2

    def test_writing_what_was_read_writes_nothing(self, history_workspace: Workspace) -> None:
        ws = history_workspace
        a = ws.context("a")
        _ok(a.tools.execute("write", {"file_path": "/n.txt", "content": "same\n"}))
        _ok(a.tools.execute("read", {"file_path": "/n.txt"}))
        res = _ok(a.tools.execute("write", {"file_path": "/n.txt", "content": "same\n"}))
        assert res.text == "/n.txt already holds exactly this content; nothing was written."
        res = _ok(ws.context("b").tools.execute(
            EDITOR, {"command": "create", "path": "/n.txt", "file_text": "same\n"}))
        assert res.text == (
            "/n.txt already exists with exactly this content; nothing was written."
        )
        assert len(ws.context("x").fs.history("/n.txt").entries) == 1
