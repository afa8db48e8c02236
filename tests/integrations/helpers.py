"""What the framework tests share: the docs pages' examples run as test modules, the
workspaces an integration runs on, and a plugin that makes two edits race."""

from __future__ import annotations

import re
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fsseam import EditIntent, Workspace, hookimpl

DOCS = Path(__file__).resolve().parents[2] / "docs" / "integrations"

def stale(diff: str, what: str = "edit", target: str | None = "no longer occurs in it",
          path: str = "/config.toml", modify: str = "edit_file") -> str:
    """The refusal of a change made against an older version: what changed since, and
    whether the edit's old_string is still there."""
    found = f"Your old_string {target}. " if target is not None else ""
    # A refused edit's whole diff counts as a read; a whole-file write's does not.
    advice = (
        "Your write replaces the whole file, so sending it again would throw this change "
        f"away. Read the file again and keep the change in what you send, or use {modify} "
        "to change only your part."
    ) if what == "write" else (
        "Retry the edit as it is; this refusal counts as your read of the current version."
    ) if target == "still occurs exactly once in it" else (
        "This refusal counts as your read of the current version: fit your edit to the "
        "change shown and retry it, without reading the file again."
    )
    return (
        f"Error [FS_STALE]: {path} has changed since you last read it, so your {what} was "
        "not applied. What changed, from the version you read to the current one:\n"
        f"{diff}\n{found}{advice}"
    )


def retries(before: int, after: int) -> str:
    """The diff of /config.toml's one line from ``retries = before`` to ``after``."""
    return f"@@ -1 +1 @@\n-retries = {before}\n+retries = {after}"


NOT_OBSERVED = (
    "Error [FS_NOT_OBSERVED]: /config.toml has not been read yet. Read it first, then retry "
    "the edit."
)


def docs_example(page: str) -> str:
    """The one ```python block of ``docs/integrations/PAGE``: a complete test module."""
    blocks = re.findall(r"```python\n(.*?)```", (DOCS / page).read_text(), re.S)
    assert len(blocks) == 1, f"{page} should hold exactly one python block (its example)"
    return str(blocks[0])


def run_docs_example(pytester: pytest.Pytester, page: str, module: str, passed: int) -> None:
    """Run the page's example as the user would (``python -m pytest MODULE.py``), with
    fsseam's pytest plugin and none of our conftest."""
    pytester.makepyfile(**{module: docs_example(page)})
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q", "-W", "error",
                                           timeout=600)
    result.assert_outcomes(passed=passed)


class EditsMeet:
    """A plugin that holds every edit of ``path`` after its read (its edit intent) until
    ``n`` of them have read: their writes then race, and the storage's compare-and-swap
    decides. Works where the framework runs the calls at the same time."""

    def __init__(self, path: str = "/config.toml", n: int = 2, timeout: float = 60) -> None:
        self.path = path
        self.barrier = threading.Barrier(n, timeout=timeout)

    @hookimpl
    def fs_edit_intent(self, event: EditIntent) -> None:
        if event.path == self.path:
            self.barrier.wait()


def make_workspace(kind: str, request: pytest.FixtureRequest, tmp_path: Path,
                   **kwargs: Any) -> Workspace:
    """A fresh workspace of one kind: memory, local, s3 (moto server) or gcs
    (fake-gcs-server)."""
    if kind == "memory":
        return Workspace(f"memory://fsseam-{uuid.uuid4().hex[:12]}",
                         storage_options={"global_store": False}, **kwargs)
    if kind == "local":
        root = tmp_path / "ws"
        root.mkdir()
        return Workspace(str(root), **kwargs)
    bucket = request.getfixturevalue(f"fsseam_{kind}_bucket")
    ws: Workspace = bucket.workspace(**kwargs)
    return ws


def seed(ws: Workspace, path: str = "/config.toml", content: str = "retries = 1\n") -> None:
    """Put a file in place as another writer (not observed by any agent under test)."""
    assert ws.context("seed").tools.execute("write", {"file_path": path,
                                                      "content": content}).ok


def stored(ws: Workspace, path: str = "/config.toml") -> bytes:
    """The file's bytes, read by a context of its own."""
    stream = ws.backend.open_read(path.lstrip("/"), 1 << 20)
    try:
        return b"".join(stream.chunks())
    finally:
        stream.close()


def waiting(event: threading.Event, timeout: float = 60) -> Callable[[], None]:
    def wait() -> None:
        assert event.wait(timeout), "the other agent never got there"

    return wait
