"""Notebook display: ToolResult._repr_markdown_."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

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


NOTEBOOK = Path(__file__).resolve().parent.parent / "docs" / "notebook.ipynb"


def _outputs(cell: Any) -> str:
    parts = []
    for out in cell.outputs:
        if out.output_type == "stream":
            parts.append(out.text)
        elif "text/markdown" in out.get("data", {}):
            parts.append(out.data["text/markdown"])
        elif "text/plain" in out.get("data", {}):
            parts.append(out.data["text/plain"])
    return "".join(parts)


def test_the_docs_notebook_runs_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/notebook.ipynb, executed by a real kernel: fsspec writes, the agent edits, the
    diff displays, an outside write makes the next edit stale and shows what changed, and
    the retry needs no second read."""
    monkeypatch.setenv("JUPYTER_PLATFORM_DIRS", "1")  # jupyter_core's migration warning
    nbformat = pytest.importorskip("nbformat", reason="nbformat is not installed")
    nbclient = pytest.importorskip("nbclient", reason="nbclient is not installed")
    pytest.importorskip("ipykernel", reason="ipykernel is not installed")

    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), (
        "the notebook is stored without outputs"
    )
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    for cell in code:
        assert not [o for o in cell.outputs if o.output_type == "error"], cell.source

    assert _outputs(code[1]) == (
        "**read** ok\n\n```\n     1\tcity,temp_c\n     2\tOslo,3\n     3\tLima,19\n```"
    )
    assert _outputs(code[2]).endswith(
        "```diff\n--- a/cities.csv\n+++ b/cities.csv\n@@ -1,3 +1,3 @@\n city,temp_c\n"
        "-Oslo,3\n+Oslo,4\n Lima,19\n```"
    )
    assert _outputs(code[4]) == "'city,temp_c\\nOslo,4\\nLima,19\\n'"
    assert _outputs(code[5]) == (
        "Error [FS_STALE]: /cities.csv has changed since you last read it, so your edit was "
        "not applied. What changed, from the version you read to the current one:\n"
        "@@ -1,3 +1,3 @@\n city,temp_c\n Oslo,4\n-Lima,19\n+Lima,21\n"
        "Your old_string no longer occurs in it. You have now seen the current version: "
        "retry against it without reading it again.\n"
    )
    assert _outputs(code[7]) == "'city,temp_c\\nOslo,4\\nLima,20\\n'"
