"""Tool conformance, finding and managing files: ls, glob, grep, delete, move."""

from __future__ import annotations

from ...errors import ErrorCode
from ...versions import Overwrite
from ...workspace import Workspace
from .base import Settings


class FindingToolsConformance(Settings):
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
        assert "1 matching files in hidden or dependency directories" in res.text
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
