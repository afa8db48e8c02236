"""Notebook display: ToolResult._repr_markdown_."""

from __future__ import annotations

import base64
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


def test_markdown_of_an_image_read_shows_the_picture(tmp_path: Path) -> None:
    from .test_media import PNG

    (tmp_path / "logo.png").write_bytes(PNG)
    res = Workspace(str(tmp_path)).context("nb").tools.execute(
        "read", {"file_path": "/logo.png"})
    assert res.ok and res.images
    encoded = base64.b64encode(PNG).decode("ascii")
    assert res._repr_markdown_() == (
        f"**read** ok\n\n```\nImage /logo.png (image/png, {len(PNG)} bytes): shown below.\n"
        f"```\n\n![read](data:image/png;base64,{encoded})")


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


def _stale(ws: Workspace, before: str, after: str, old: str, new: str) -> Any:
    """An edit of /f.txt by ``nb`` refused because ``other`` changed it from ``before`` to
    ``after`` since nb's read."""
    nb, other = ws.context("nb"), ws.context("other")
    assert nb.tools.execute("write", {"file_path": "/f.txt", "content": before}).ok
    assert other.tools.execute("read", {"file_path": "/f.txt"}).ok
    assert other.tools.execute("write", {"file_path": "/f.txt", "content": after}).ok
    res = nb.tools.execute("edit", {"file_path": "/f.txt", "old_string": old, "new_string": new})
    assert res.error is not None and res.error.code.value == "FS_STALE", res.text
    return res


def test_markdown_of_a_refusal_fences_its_diff() -> None:
    """A refusal's diff is a fenced diff block between its sentences, so a notebook shows
    one changed line per line instead of one paragraph."""
    res = _stale(Workspace("memory://test-notebook-stale"), "x = 1\ny = 2\n",
                 "x = 10\ny = 2\n", "y = 2", "y = 3")
    message = res.error.message
    head, tail = message.split("\n@@ -1,2 +1,2 @@\n-x = 1\n+x = 10\n y = 2\n")
    assert res._repr_markdown_() == (
        "**edit** failed: `FS_STALE`\n\n"
        f"{head}\n\n"
        "```diff\n@@ -1,2 +1,2 @@\n-x = 1\n+x = 10\n y = 2\n```\n\n"
        f"{tail}"
    )
    assert "@@" not in head + tail and "\n" not in tail


def test_markdown_of_a_refusal_outgrows_backticks_in_its_diff() -> None:
    res = _stale(Workspace("memory://test-notebook-stale-ticks"), "```py\nx\n```\n",
                 "````py\nx\n```\n", "x", "y")
    markdown = res._repr_markdown_()
    assert "\n\n`````diff\n@@ -1,3 +1,3 @@\n-```py\n+````py\n x\n ```\n`````\n\n" in markdown


def test_markdown_of_a_refusal_without_a_diff_is_its_text() -> None:
    """Text with no hunk header stays one block, lines that look like diff lines included."""
    from fsseam.errors import ErrorCode
    from fsseam.tools.base import result_markdown

    message = "Could not apply:\n- first\n+ second"
    assert result_markdown("edit", "", None, (ErrorCode.FS_NO_MATCH, message)) == (
        "**edit** failed: `FS_NO_MATCH`\n\n" + message
    )


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
    the retry needs no second read. Then pandas next to the agent, through the person's
    guarded filesystem: the write of a frame read before the agent's edit is refused and
    keeps the agent's change, a re-read and a write land, and the agent's next edit is
    stale."""
    monkeypatch.setenv("JUPYTER_PLATFORM_DIRS", "1")  # jupyter_core's migration warning
    nbformat = pytest.importorskip("nbformat", reason="nbformat is not installed")
    nbclient = pytest.importorskip("nbclient", reason="nbclient is not installed")
    pytest.importorskip("ipykernel", reason="ipykernel is not installed")
    pytest.importorskip("pandas", reason="pandas is not installed (pip install -e '.[test]')")

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
        "Your old_string no longer occurs in it. This refusal counts as your read of the "
        "current version: fit your edit to the change shown and retry it, without reading "
        "the file again.\n"
    )
    assert _outputs(code[6]) == (
        "**edit** failed: `FS_STALE`\n\n"
        "/cities.csv has changed since you last read it, so your edit was not applied. What "
        "changed, from the version you read to the current one:\n\n"
        "```diff\n@@ -1,3 +1,3 @@\n city,temp_c\n Oslo,4\n-Lima,19\n+Lima,21\n```\n\n"
        "Your old_string no longer occurs in it. This refusal counts as your read of the "
        "current version: fit your edit to the change shown and retry it, without reading "
        "the file again."
    )
    assert _outputs(code[8]) == "'city,temp_c\\nOslo,4\\nLima,20\\n'"

    assert _outputs(code[10]) == "   city  temp_c\n0  Oslo       3\n1  Lima      19"
    assert _outputs(code[11]).endswith("```diff\n--- a/temps.csv\n+++ b/temps.csv\n"
                                       "@@ -1,3 +1,3 @@\n city,temp_c\n Oslo,3\n-Lima,19\n"
                                       "+Lima,20\n```")
    assert _outputs(code[12]) == (
        "FS_STALE /temps.csv\n@@ -1,3 +1,3 @@\n city,temp_c\n Oslo,3\n-Lima,19\n+Lima,20\n"
        "'city,temp_c\\nOslo,3\\nLima,20\\n'"
    )
    assert _outputs(code[13]) == "'city,temp_c\\nOslo,4\\nLima,20\\n'"
    assert _outputs(code[14]).startswith(
        "**edit** failed: `FS_STALE`\n\n/temps.csv has changed since you last read it"
    )
    assert "```diff\n@@ -1,3 +1,3 @@\n city,temp_c\n-Oslo,3\n+Oslo,4\n Lima,20\n```" in (
        _outputs(code[14]))
