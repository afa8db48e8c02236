"""End to end: the agent tools on a gs:// workspace, two owners racing on one file."""

from __future__ import annotations

from typing import Any

from fsseam import ErrorCode, Workspace


def test_tools_on_gcs(gcs_bucket: str, gcs_options: dict[str, Any]) -> None:
    ws = Workspace(f"gs://{gcs_bucket}/proj", storage_options=dict(gcs_options))
    a = ws.context(owner="a")
    b = ws.context(owner="b")

    res = a.tools.execute("write", {"file_path": "/notes.md", "content": "one\ntwo\n"})
    assert res.ok, res.text
    res = b.tools.execute("read", {"file_path": "/notes.md"})
    assert res.ok, res.text
    assert "one" in res.text and "two" in res.text

    res = b.tools.execute(
        "edit", {"file_path": "/notes.md", "old_string": "two", "new_string": "TWO"}
    )
    assert res.ok, res.text
    # a's observation (its own write) is now stale: the edit must not clobber b's change.
    res = a.tools.execute(
        "edit", {"file_path": "/notes.md", "old_string": "one", "new_string": "ONE"}
    )
    assert not res.ok
    assert res.error is not None and res.error.code is ErrorCode.FS_STALE
    assert ws.backend.read("notes.md").data == b"one\nTWO\n"

    assert a.tools.execute("read", {"file_path": "/notes.md"}).ok
    res = a.tools.execute(
        "edit", {"file_path": "/notes.md", "old_string": "one", "new_string": "ONE"}
    )
    assert res.ok, res.text
    assert ws.backend.read("notes.md").data == b"ONE\nTWO\n"

    # a plain write over a file b never read is refused (not observed), bytes untouched
    res = b.tools.execute("write", {"file_path": "/other.md", "content": "x"})
    assert res.ok, res.text
    res = a.tools.execute("write", {"file_path": "/other.md", "content": "y"})
    assert not res.ok
    assert res.error is not None and res.error.code is ErrorCode.FS_NOT_OBSERVED
    assert ws.backend.read("other.md").data == b"x"

    res = a.tools.execute("str_replace_editor", {"command": "view", "path": "/"})
    assert res.ok, res.text
    assert "notes.md" in res.text and "other.md" in res.text

    res = a.tools.execute("read", {"file_path": "/missing.md"})
    assert not res.ok
    assert res.error is not None and res.error.code is ErrorCode.FS_NOT_FOUND
