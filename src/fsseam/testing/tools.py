"""End-to-end tool conformance: the agent tools behave the same on every backend.

:class:`ToolsConformance` is the suite, in three parts: one file at a time (races,
observations, line endings, the editor), finding and managing files (ls, glob, grep, delete,
move), and many changes at once (multi_edit, patches, agents racing on patches, the memory
tool).
"""

from __future__ import annotations

import threading

from ..errors import ErrorCode
from ..events import EditIntent
from ..gate import hookimpl
from ..tools.base import ToolResult
from ..versions import Overwrite
from ..workspace import Workspace

__all__ = ["ToolsConformance", "ToolsConformanceSettings"]


class ToolsConformanceSettings:
    """The knobs a backend's subclass may turn (see :class:`~fsseam.testing.ToolsConformance`)."""

    mount_points: tuple[str, ...] = ()
    """Directories the workspace's root shows before any test writes (the other mount
    points of a mounted workspace, empty stores): views of ``/`` are read without them."""

    def _without_mount_points(self, text: str) -> str:
        hidden = {f"/{m}/" for m in self.mount_points}
        return "\n".join(line for line in text.split("\n") if line not in hidden)


class FileToolsConformance(ToolsConformanceSettings):
    """One file at a time (see :class:`~fsseam.testing.ToolsConformance`)."""

    def test_two_agents_race_on_one_file(self, workspace: Workspace) -> None:
        ws = workspace
        a = ws.context(owner="a")
        b = ws.context(owner="b")
        res = a.tools.execute("write", {"file_path": "/notes.md", "content": "one\ntwo\n"})
        assert res.ok, res.text
        res = b.tools.execute("read", {"file_path": "/notes.md"})
        assert res.ok, res.text
        assert res.text == "     1\tone\n     2\ttwo"
        res = b.tools.execute(
            "edit", {"file_path": "/notes.md", "old_string": "two", "new_string": "TWO"}
        )
        assert res.ok, res.text
        # a last observed its own write: b's edit made it stale; the storage refuses.
        res = a.tools.execute(
            "edit", {"file_path": "/notes.md", "old_string": "one", "new_string": "ONE"}
        )
        assert res.error is not None and res.error.code is ErrorCode.FS_STALE, res.text
        assert ws.backend.read("notes.md").data == b"one\nTWO\n"
        assert a.tools.execute("read", {"file_path": "/notes.md"}).ok
        res = a.tools.execute(
            "edit", {"file_path": "/notes.md", "old_string": "one", "new_string": "ONE"}
        )
        assert res.ok, res.text
        assert ws.backend.read("notes.md").data == b"ONE\nTWO\n"

    def test_write_needs_an_observation_of_an_existing_file(self, workspace: Workspace) -> None:
        ws = workspace
        a = ws.context(owner="a")
        b = ws.context(owner="b")
        assert b.tools.execute("write", {"file_path": "/other.md", "content": "x"}).ok
        res = a.tools.execute("write", {"file_path": "/other.md", "content": "y"})
        assert res.error is not None and res.error.code is ErrorCode.FS_NOT_OBSERVED, res.text
        assert ws.backend.read("other.md").data == b"x"
        res = a.tools.execute("read", {"file_path": "/missing.md"})
        assert res.error is not None and res.error.code is ErrorCode.FS_NOT_FOUND
        assert a.tools.execute("write", {"file_path": "/missing.md", "content": "new"}).ok

    def test_edits_keep_crlf_bom_and_tabs(self, workspace: Workspace) -> None:
        ws = workspace
        ws.backend.write("w.txt", b"\xef\xbb\xbf\tone\r\n\ttwo\r\n", Overwrite())
        ctx = ws.context(owner="a")
        assert ctx.tools.execute("read", {"file_path": "/w.txt"}).ok
        res = ctx.tools.execute(
            "edit", {"file_path": "/w.txt", "old_string": "\ttwo", "new_string": "\t2\n\t3"}
        )
        assert res.ok, res.text
        assert ws.backend.read("w.txt").data == b"\xef\xbb\xbf\tone\r\n\t2\r\n\t3\r\n"

    def test_editor_views_and_recreates(self, workspace: Workspace) -> None:
        ws = workspace
        ctx = ws.context(owner="a")
        ed = "str_replace_editor"
        assert ctx.tools.execute(ed, {"command": "create", "path": "/d/a.txt",
                                      "file_text": "a\n"}).ok
        res = ctx.tools.execute(ed, {"command": "view", "path": "/"})
        assert res.ok, res.text
        assert self._without_mount_points(res.text).endswith("/d/\n/d/a.txt")
        ws.backend.delete("d/a.txt")
        res = ctx.tools.execute(ed, {"command": "view", "path": "/d/a.txt"})
        assert res.error is not None and res.error.code is ErrorCode.FS_NOT_FOUND
        assert ctx.tools.execute(ed, {"command": "create", "path": "/d/a.txt",
                                      "file_text": "b\n"}).ok
        assert ws.backend.read("d/a.txt").data == b"b\n"


class FindingToolsConformance(ToolsConformanceSettings):
    """Finding and managing files (see :class:`~fsseam.testing.ToolsConformance`)."""

    # -- finding and managing files ---------------------------------------------------
    def _tree(self, ws: Workspace) -> None:
        for key, data in {
            "README.md": b"# demo\n",
            "src/app.py": b"import os\n\ndef main():\n    return os.getcwd()\n",
            "src/lib/util.py": b"def helper():\n    return 42\n",
            "src/lib/data.bin": b"\x00\x01def\x02",
            "notes/guide.md": b"def is not code here\n",
            ".hidden/secret.py": b"def hidden():\n    pass\n",
        }.items():
            ws.backend.write(key, data, Overwrite())

    def test_ls_lists_one_level(self, workspace: Workspace) -> None:
        self._tree(workspace)
        ctx = workspace.context(owner="a")
        res = ctx.tools.execute("ls", {"path": "/src"})
        assert res.ok, res.text
        assert res.text == "/src/app.py  (46 bytes)\n/src/lib/"
        res = ctx.tools.execute("ls", {"path": "/src/app.py"})
        assert res.error is not None and res.error.code is ErrorCode.FS_INVALID_ARGUMENT
        res = ctx.tools.execute("ls", {"path": "/nope"})
        assert res.error is not None and res.error.code is ErrorCode.FS_NOT_FOUND

    def test_glob_finds_files_in_path_order(self, workspace: Workspace) -> None:
        self._tree(workspace)
        ctx = workspace.context(owner="a")
        res = ctx.tools.execute("glob", {"pattern": "**/*.py"})
        assert res.ok, res.text
        assert res.text.splitlines()[:2] == ["/src/app.py", "/src/lib/util.py"]
        assert res.text.endswith("(1 hidden or dependency directories and matching hidden "
                                 "files were left out, not searched; name them in the "
                                 "pattern to include them.)"), res.text
        res = ctx.tools.execute("glob", {"pattern": ".hidden/*.py"})
        assert res.text == "/.hidden/secret.py"
        res = ctx.tools.execute("glob", {"pattern": "*.py", "path": "/src/lib"})
        assert res.text == "/src/lib/util.py"
        res = ctx.tools.execute("glob", {"pattern": "**/*.rs"})
        assert res.ok and res.text.startswith("No files match **/*.rs in /.")

    def test_grep_modes_and_observation(self, workspace: Workspace) -> None:
        self._tree(workspace)
        ctx = workspace.context(owner="a")
        res = ctx.tools.execute("grep", {"pattern": r"def \w+\(", "glob": "**/*.py"})
        assert res.ok, res.text
        assert res.text.splitlines()[:2] == ["/src/app.py", "/src/lib/util.py"]
        # files_with_matches never authorizes a change
        res = ctx.tools.execute("edit", {"file_path": "/src/app.py", "old_string": "main",
                                         "new_string": "run"})
        assert res.error is not None and res.error.code is ErrorCode.FS_NOT_OBSERVED
        res = ctx.tools.execute("grep", {"pattern": "def", "path": "/src",
                                         "output_mode": "count"})
        assert res.text.startswith("/src/app.py: 1\n/src/lib/util.py: 1\n\nTotal: 2")
        assert "(Not searched: 1 binary.)" in res.text
        res = ctx.tools.execute("grep", {"pattern": "return", "path": "/src",
                                         "output_mode": "content", "context_lines": 1})
        assert res.text.splitlines()[:4] == [
            "/src/app.py", "    3-\tdef main():", "     4\t    return os.getcwd()",
            "/src/lib/util.py",
        ]
        # content mode showed app.py's lines at the version searched: an edit may follow
        res = ctx.tools.execute("edit", {"file_path": "/src/app.py", "old_string": "main",
                                         "new_string": "run"})
        assert res.ok, res.text
        res = ctx.tools.execute("grep", {"pattern": "(unclosed"})
        assert res.error is not None and res.error.code is ErrorCode.FS_INVALID_ARGUMENT
        assert "Escape special characters" in res.text

    def test_delete_is_guarded_by_the_observed_version(self, workspace: Workspace) -> None:
        ws = workspace
        a, b = ws.context(owner="a"), ws.context(owner="b")
        ws.backend.write("del.txt", b"one\n", Overwrite())
        res = a.tools.execute("delete", {"file_path": "/del.txt"})
        assert res.error is not None and res.error.code is ErrorCode.FS_NOT_OBSERVED
        assert a.tools.execute("read", {"file_path": "/del.txt"}).ok
        assert b.tools.execute("read", {"file_path": "/del.txt"}).ok
        assert b.tools.execute("edit", {"file_path": "/del.txt", "old_string": "one",
                                        "new_string": "two"}).ok
        res = a.tools.execute("delete", {"file_path": "/del.txt"})
        assert res.error is not None and res.error.code is ErrorCode.FS_STALE, res.text
        assert "@@ -1 +1 @@\n-one\n+two\n" in res.text, res.text
        assert ws.backend.read("del.txt").data == b"two\n"
        # the diff is no read for a delete: retried as sent it would drop b's change
        res = a.tools.execute("delete", {"file_path": "/del.txt"})
        assert res.error is not None and res.error.code is ErrorCode.FS_STALE, res.text
        assert ws.backend.read("del.txt").data == b"two\n"
        assert a.tools.execute("read", {"file_path": "/del.txt"}).ok
        res = a.tools.execute("delete", {"file_path": "/del.txt"})
        assert res.ok and res.text == "Deleted /del.txt."
        res = a.tools.execute("read", {"file_path": "/del.txt"})
        assert res.error is not None and res.error.code is ErrorCode.FS_NOT_FOUND
        # b's edit target is gone: b hears it, nothing is recreated
        res = b.tools.execute("edit", {"file_path": "/del.txt", "old_string": "two",
                                       "new_string": "three"})
        assert res.error is not None and res.error.code is ErrorCode.FS_NOT_FOUND

    def test_move_is_guarded_at_both_ends(self, workspace: Workspace) -> None:
        ws = workspace
        a, b = ws.context(owner="a"), ws.context(owner="b")
        ws.backend.write("m/src.txt", b"\xef\xbb\xbfsource\r\n", Overwrite())
        ws.backend.write("m/taken.txt", b"taken\n", Overwrite())
        assert a.tools.execute("read", {"file_path": "/m/src.txt"}).ok
        res = a.tools.execute("move", {"source_path": "/m/src.txt",
                                       "destination_path": "/m/taken.txt"})
        assert res.error is not None and res.error.code is ErrorCode.FS_ALREADY_EXISTS
        assert ws.backend.read("m/src.txt").data == b"\xef\xbb\xbfsource\r\n"
        assert ws.backend.read("m/taken.txt").data == b"taken\n"
        assert b.tools.execute("read", {"file_path": "/m/src.txt"}).ok
        assert b.tools.execute("edit", {"file_path": "/m/src.txt", "old_string": "source",
                                        "new_string": "edited"}).ok
        res = a.tools.execute("move", {"source_path": "/m/src.txt",
                                       "destination_path": "/n/dst.txt"})
        assert res.error is not None and res.error.code is ErrorCode.FS_STALE, res.text
        assert ws.backend.read("m/src.txt").data == b"\xef\xbb\xbfedited\r\n"
        res = a.tools.execute("read", {"file_path": "/n/dst.txt"})
        assert res.error is not None and res.error.code is ErrorCode.FS_NOT_FOUND
        assert a.tools.execute("read", {"file_path": "/m/src.txt"}).ok
        res = a.tools.execute("move", {"source_path": "/m/src.txt",
                                       "destination_path": "/n/dst.txt"})
        assert res.ok and res.text == "Moved /m/src.txt to /n/dst.txt.", res.text
        assert ws.backend.read("n/dst.txt").data == b"\xef\xbb\xbfedited\r\n"
        res = a.tools.execute("read", {"file_path": "/m/src.txt"})
        assert res.error is not None and res.error.code is ErrorCode.FS_NOT_FOUND
        # the mover observed the destination at its new version: it may edit it at once
        res = a.tools.execute("edit", {"file_path": "/n/dst.txt", "old_string": "edited",
                                       "new_string": "moved"})
        assert res.ok, res.text
        assert ws.backend.read("n/dst.txt").data == b"\xef\xbb\xbfmoved\r\n"


class ChangeToolsConformance(ToolsConformanceSettings):
    """Many changes at once (see :class:`~fsseam.testing.ToolsConformance`)."""

    # -- changing many things at once ----------------------------------------------------
    def test_multi_edit_is_sequenced_and_all_or_nothing(self, workspace: Workspace) -> None:
        ws = workspace
        ws.backend.write("me.txt", b"\xef\xbb\xbfalpha\r\n\tbeta\r\ngamma\r\n", Overwrite())
        ctx = ws.context(owner="a")
        assert ctx.tools.execute("read", {"file_path": "/me.txt"}).ok
        # the second edit matches only the result of the first; the third fails
        res = ctx.tools.execute("multi_edit", {"file_path": "/me.txt", "edits": [
            {"old_string": "alpha", "new_string": "ALPHA"},
            {"old_string": "ALPHA\n\tbeta", "new_string": "ALPHA\n\tBETA"},
            {"old_string": "delta", "new_string": "DELTA"},
        ]})
        assert res.error is not None and res.error.code is ErrorCode.FS_NO_MATCH, res.text
        assert "edit 3 of 3 failed" in res.text
        assert ws.backend.read("me.txt").data == b"\xef\xbb\xbfalpha\r\n\tbeta\r\ngamma\r\n"
        res = ctx.tools.execute("multi_edit", {"file_path": "/me.txt", "edits": [
            {"old_string": "alpha", "new_string": "ALPHA"},
            {"old_string": "ALPHA\n\tbeta", "new_string": "ALPHA\n\tBETA\nnew"},
            {"old_string": "a", "new_string": "A", "replace_all": True},
        ]})
        assert res.ok, res.text
        assert ws.backend.read("me.txt").data == (
            b"\xef\xbb\xbfALPHA\r\n\tBETA\r\nnew\r\ngAmmA\r\n"
        )
        # its own write is observed: the next multi_edit needs no read
        res = ctx.tools.execute("multi_edit", {"file_path": "/me.txt", "edits": [
            {"old_string": "new", "new_string": "NEW"}]})
        assert res.ok, res.text

    def test_patch_keeps_crlf_bom_tabs_and_every_other_byte(self, workspace: Workspace) -> None:
        ws = workspace
        original = b"\xef\xbb\xbfdef f():\r\n\treturn 1\r\n\r\ndef g():\r\n\treturn 2\r\n"
        ws.backend.write("crlf.py", original, Overwrite())
        ctx = ws.context(owner="a")
        assert ctx.tools.execute("read", {"file_path": "/crlf.py"}).ok
        patch = (
            "*** Begin Patch\n*** Update File: crlf.py\n@@ def g():\n-\treturn 2\n"
            "+\treturn 3\n+\t# done\n*** End Patch\n"
        )
        res = ctx.tools.execute("apply_patch", {"patch": patch})
        assert res.ok, res.text
        assert res.text == "Success. Updated the following files:\nM /crlf.py"
        assert ws.backend.read("crlf.py").data == (
            b"\xef\xbb\xbfdef f():\r\n\treturn 1\r\n\r\ndef g():\r\n\treturn 3\r\n\t# done\r\n"
        )

    def test_two_file_patch_whose_second_hunk_fails_changes_nothing(
        self, workspace: Workspace
    ) -> None:
        ws = workspace
        ws.backend.write("p/one.txt", b"one\nuno\n", Overwrite())
        ws.backend.write("p/two.txt", b"two\r\ndos\r\n", Overwrite())
        ctx = ws.context(owner="a")
        for path in ("/p/one.txt", "/p/two.txt"):
            assert ctx.tools.execute("read", {"file_path": path}).ok
        patch = (
            "*** Begin Patch\n*** Update File: p/one.txt\n@@\n-one\n+ONE\n"
            "*** Update File: p/two.txt\n@@\n-two\n+TWO\n@@\n-tres\n+TRES\n*** End Patch"
        )
        res = ctx.tools.execute("apply_patch", {"patch": patch})
        assert res.error is not None and res.error.code is ErrorCode.FS_NO_MATCH, res.text
        assert "hunk 2 of /p/two.txt" in res.text and "Nothing was applied" in res.text
        assert ws.backend.read("p/one.txt").data == b"one\nuno\n"
        assert ws.backend.read("p/two.txt").data == b"two\r\ndos\r\n"

    def test_add_delete_and_move_in_one_patch(self, workspace: Workspace) -> None:
        ws = workspace
        ws.backend.write("q/old.txt", b"keep\nchange me\n", Overwrite())
        ws.backend.write("q/gone.txt", b"bye\n", Overwrite())
        ws.backend.write("q/taken.txt", b"taken\n", Overwrite())
        ctx = ws.context(owner="a")
        for path in ("/q/old.txt", "/q/gone.txt"):
            assert ctx.tools.execute("read", {"file_path": path}).ok
        patch = (
            "*** Begin Patch\n*** Add File: q/new/made.txt\n+made\n+\tit\n"
            "*** Delete File: q/gone.txt\n"
            "*** Update File: q/old.txt\n*** Move to: q/moved.txt\n@@\n keep\n-change me\n"
            "+changed\n*** End Patch"
        )
        # an Add over an existing file refuses the whole patch
        res = ctx.tools.execute("apply_patch", {"patch": patch.replace("new/made", "taken")})
        assert res.error is not None and res.error.code is ErrorCode.FS_ALREADY_EXISTS, res.text
        assert ws.backend.read("q/gone.txt").data == b"bye\n"
        assert ws.backend.read("q/old.txt").data == b"keep\nchange me\n"
        res = ctx.tools.execute("apply_patch", {"patch": patch})
        assert res.ok, res.text
        assert res.text.splitlines()[1:] == [
            "A /q/new/made.txt", "D /q/gone.txt", "M /q/moved.txt (moved from /q/old.txt)",
        ]
        assert ws.backend.read("q/new/made.txt").data == b"made\n\tit\n"
        assert ws.backend.read("q/moved.txt").data == b"keep\nchanged\n"
        for gone in ("/q/gone.txt", "/q/old.txt"):
            res = ctx.tools.execute("read", {"file_path": gone})
            assert res.error is not None and res.error.code is ErrorCode.FS_NOT_FOUND
        # every file the patch wrote is observed: edits follow without a read
        assert ctx.tools.execute("edit", {"file_path": "/q/moved.txt", "old_string": "keep",
                                          "new_string": "kept"}).ok
        assert ctx.tools.execute("edit", {"file_path": "/q/new/made.txt",
                                          "old_string": "made", "new_string": "MADE"}).ok

    def test_patch_over_a_file_someone_else_changed(self, workspace: Workspace) -> None:
        ws = workspace
        ws.backend.write("r/a.txt", b"a\n", Overwrite())
        ws.backend.write("r/b.txt", b"b\n", Overwrite())
        a, b = ws.context(owner="a"), ws.context(owner="b")
        for path in ("/r/a.txt", "/r/b.txt"):
            assert a.tools.execute("read", {"file_path": path}).ok
        assert b.tools.execute("read", {"file_path": "/r/b.txt"}).ok
        assert b.tools.execute("edit", {"file_path": "/r/b.txt", "old_string": "b",
                                        "new_string": "B"}).ok
        patch = (
            "*** Begin Patch\n*** Add File: r/c.txt\n+c\n*** Update File: r/a.txt\n@@\n-a\n+A\n"
            "*** Update File: r/b.txt\n@@\n-B\n+b2\n*** End Patch"
        )
        res = a.tools.execute("apply_patch", {"patch": patch})
        assert res.error is not None and res.error.code is ErrorCode.FS_STALE, res.text
        # the refusal shows what changed, as an edit's does
        assert res.text.startswith("Error [FS_STALE]: /r/b.txt ") and (
            "\n@@ -1 +1 @@\n-b\n+B\n" in res.text
        ), res.text
        assert ws.backend.read("r/a.txt").data == b"a\n"
        assert ws.backend.read("r/b.txt").data == b"B\n"
        res = a.tools.execute("read", {"file_path": "/r/c.txt"})
        assert res.error is not None and res.error.code is ErrorCode.FS_NOT_FOUND
        # a file never read is not observed
        res = b.tools.execute("apply_patch", {"patch": patch.replace("-B\n+b2", "-B\n+b3")})
        assert res.error is not None and res.error.code is ErrorCode.FS_NOT_OBSERVED, res.text
        # the diff was shown whole: a's retry needs no read
        res = a.tools.execute("apply_patch", {"patch": patch})
        assert res.ok, res.text
        assert ws.backend.read("r/b.txt").data == b"b2\n"
        assert ws.backend.read("r/c.txt").data == b"c\n"

    def test_two_agents_race_on_overlapping_patches(self, workspace: Workspace) -> None:
        """Both validate against the same versions before either commits; exactly one
        wins, and the loser's files (shared or not) are as they were."""
        ws = workspace
        for name in ("s/shared1.txt", "s/shared2.txt", "s/a_only.txt", "s/b_only.txt"):
            ws.backend.write(name, b"base\n", Overwrite())
        agents = {o: ws.context(owner=o) for o in ("a", "b")}
        for ctx in agents.values():
            for path in ("/s/shared1.txt", "/s/shared2.txt", "/s/a_only.txt", "/s/b_only.txt"):
                assert ctx.tools.execute("read", {"file_path": path}).ok
        gate = _Rendezvous(parties=2, path="/s/shared2.txt")
        ws.gate.register(gate)

        def patch(owner: str) -> str:
            return (
                f"*** Begin Patch\n*** Update File: s/{owner}_only.txt\n@@\n-base\n+{owner}\n"
                f"*** Update File: s/shared1.txt\n@@\n-base\n+{owner}\n"
                f"*** Update File: s/shared2.txt\n@@\n-base\n+{owner}\n*** End Patch"
            )

        results: dict[str, ToolResult] = {}

        def run(owner: str) -> None:
            results[owner] = agents[owner].tools.execute("apply_patch", {"patch": patch(owner)})

        threads = [threading.Thread(target=run, args=(o,)) for o in agents]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        ws.gate.pm.unregister(gate)
        assert gate.met, "both agents should have validated before either committed"
        winners = [o for o, r in results.items() if r.ok]
        assert len(winners) == 1, {o: r.text for o, r in results.items()}
        winner = winners[0]
        loser = "b" if winner == "a" else "a"
        lost = results[loser].error
        assert lost is not None and lost.code is ErrorCode.FS_STALE, results[loser].text
        data = {n: ws.backend.read(f"s/{n}.txt").data for n in
                ("shared1", "shared2", "a_only", "b_only")}
        assert data == {"shared1": winner.encode() + b"\n", "shared2": winner.encode() + b"\n",
                        f"{winner}_only": winner.encode() + b"\n", f"{loser}_only": b"base\n"}

    def test_memory_tool_paths_and_guards(self, workspace: Workspace) -> None:
        ws = workspace
        a, b = ws.context(owner="a"), ws.context(owner="b")
        m = "memory"
        res = a.tools.execute(m, {"command": "view", "path": "/memories"})
        assert res.ok, res.text
        for bad in ({"command": "view", "path": "/notes.md"},
                    {"command": "create", "path": "/memories/../x.md", "file_text": "x"},
                    {"command": "rename", "old_path": "/memories/a.md", "new_path": "/a.md"}):
            res = a.tools.execute(m, bad)
            assert res.error is not None and res.error.code is ErrorCode.FS_OUTSIDE_ROOT, bad
        res = a.tools.execute(m, {"command": "create", "path": "/memories/prefs.md",
                                  "file_text": "- likes tea\n"})
        assert res.ok and res.text == "File created successfully at: /memories/prefs.md"
        res = a.tools.execute(m, {"command": "insert", "path": "/memories/prefs.md",
                                  "insert_line": 1, "insert_text": "- dislikes noise"})
        assert res.ok, res.text
        assert ws.backend.read("memories/prefs.md").data == b"- likes tea\n- dislikes noise\n"
        res = a.tools.execute(m, {"command": "view", "path": "/memories"})
        assert res.text.splitlines()[1:] == ["-\t/memories", "29B\t/memories/prefs.md"]
        # someone else changes the file: a's str_replace, rename and delete are refused
        # (each after a change of b's of its own: the refused str_replace's diff counts as
        # a's view of the file, as an exact-match replace cannot drop what it showed)
        assert b.tools.execute(m, {"command": "view", "path": "/memories/prefs.md"}).ok
        drinks = ["tea", "coffee", "cocoa", "tea", "coffee"]
        for i, cmd in enumerate((
            {"command": "str_replace", "path": "/memories/prefs.md", "old_str": "noise",
             "new_str": "din"},
            {"command": "rename", "old_path": "/memories/prefs.md",
             "new_path": "/memories/p.md"},
            {"command": "delete", "path": "/memories/prefs.md"},
        )):
            assert b.tools.execute(m, {"command": "str_replace", "path": "/memories/prefs.md",
                                       "old_str": drinks[i], "new_str": drinks[i + 1]}).ok
            res = a.tools.execute(m, cmd)
            assert res.error is not None and res.error.code is ErrorCode.FS_STALE, res.text
        after_b = b"- likes tea\n- dislikes noise\n"
        assert ws.backend.read("memories/prefs.md").data == after_b
        res = a.tools.execute(m, {"command": "view", "path": "/memories/p.md"})
        assert res.error is not None and res.error.code is ErrorCode.FS_NOT_FOUND
        # after a fresh view, a may rename and delete
        assert a.tools.execute(m, {"command": "view", "path": "/memories/prefs.md"}).ok
        res = a.tools.execute(m, {"command": "rename", "old_path": "/memories/prefs.md",
                                  "new_path": "/memories/people/p.md"})
        assert res.ok and res.text == (
            "Successfully renamed /memories/prefs.md to /memories/people/p.md"
        ), res.text
        assert ws.backend.read("memories/people/p.md").data == after_b
        res = a.tools.execute(m, {"command": "delete", "path": "/memories/people"})
        assert res.ok and res.text == "Successfully deleted /memories/people", res.text
        res = a.tools.execute(m, {"command": "view", "path": "/memories"})
        assert res.ok and res.text.splitlines()[1:] == ["-\t/memories"], res.text


class _Rendezvous:
    """A plugin that holds each change at its intent for ``path`` until ``parties`` changes
    have got there: every one of them has then validated, none has committed."""

    def __init__(self, parties: int, path: str) -> None:
        self.path = path
        self.barrier = threading.Barrier(parties, timeout=60)
        self.met = False

    @hookimpl
    def fs_edit_intent(self, event: EditIntent) -> None:
        if event.path == self.path:
            self.barrier.wait()
            self.met = True


class ToolsConformance(FileToolsConformance, FindingToolsConformance, ChangeToolsConformance):
    """Mixin: subclass with a ``workspace`` fixture (a Workspace over an empty root)."""
