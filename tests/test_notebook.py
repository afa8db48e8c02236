"""Notebook display: ToolResult._repr_markdown_."""

from __future__ import annotations

from fsseam import Workspace


def test_markdown_of_a_read() -> None:
    ws = Workspace("memory://test-notebook-read")
    ctx = ws.context("nb")
    assert ctx.tools.execute("write", {"file_path": "/a.md", "content": "one\ntwo\n"}).ok
    res = ctx.tools.execute("read", {"file_path": "/a.md"})
    assert res._repr_markdown_() == "**read** ok\n\n```\n     1\tone\n     2\ttwo\n```"


def test_markdown_of_an_edit_has_its_diff() -> None:
    ws = Workspace("memory://test-notebook-edit")
    ctx = ws.context("nb")
    assert ctx.tools.execute("write", {"file_path": "/a.md", "content": "one\ntwo\n"}).ok
    res = ctx.tools.execute(
        "edit", {"file_path": "/a.md", "old_string": "two", "new_string": "2"}
    )
    assert res._repr_markdown_() == (
        "**edit** ok\n\n"
        "```\n"
        "Edited /a.md: replaced 1 occurrence at line 2.\n"
        "     1\tone\n"
        "     2\t2\n"
        "```\n\n"
        "```diff\n"
        "--- a/a.md\n"
        "+++ b/a.md\n"
        "@@ -1,2 +1,2 @@\n"
        " one\n"
        "-two\n"
        "+2\n"
        "```"
    )


def test_markdown_of_an_error() -> None:
    ctx = Workspace("memory://test-notebook-error").context("nb")
    res = ctx.tools.execute("read", {"file_path": "/missing.md"})
    assert res._repr_markdown_() == (
        "**read** failed: `FS_NOT_FOUND`\n\n"
        "/missing.md does not exist. Check the path (list the parent directory), "
        "or create the file."
    )


def test_markdown_fence_outgrows_backticks_in_the_text() -> None:
    ws = Workspace("memory://test-notebook-fence")
    ctx = ws.context("nb")
    assert ctx.tools.execute("write", {"file_path": "/a.md", "content": "```py\n```\n"}).ok
    res = ctx.tools.execute("read", {"file_path": "/a.md"})
    assert res._repr_markdown_() == "**read** ok\n\n````\n     1\t```py\n     2\t```\n````"
