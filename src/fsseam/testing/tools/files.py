"""Tool conformance, one file: races, observations, line endings, the editor."""

from __future__ import annotations

from ...errors import ErrorCode
from ...versions import Overwrite
from ...workspace import Workspace
from .base import Settings


class FileToolsConformance(Settings):
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
