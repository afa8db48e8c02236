"""Listings, walks and stats go through the gate: a plugin can hide paths from all of them."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from fsseam import ErrorCode, FsError, ListEvent, StatEvent, Workspace, hookimpl


class HideEnv:
    def __init__(self) -> None:
        self.operations: list[tuple[str, str, int]] = []

    @hookimpl
    def fs_list(self, event: ListEvent) -> None:
        self.operations.append((event.operation, event.path, len(event.entries)))
        event.entries = [e for e in event.entries if not e.name.endswith(".env")]

    @hookimpl
    def fs_stat(self, event: StatEvent) -> None:
        if event.path.endswith(".env"):
            raise FsError(ErrorCode.FS_NOT_FOUND, f"{event.path} does not exist.")


@pytest.fixture(params=["memory", "local"])
def ws(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Workspace, HideEnv]:
    plugin = HideEnv()
    url = f"memory://hooks-{uuid.uuid4().hex}" if request.param == "memory" else str(tmp_path)
    ws = Workspace(url, plugins=[plugin])
    ctx = ws.context("setup")
    for path in ("/a.txt", "/.env", "/d/b.txt", "/d/prod.env", "/d/e/c.txt"):
        assert ctx.tools.execute("write", {"file_path": path, "content": "x"}).ok, path
    return ws, plugin


def test_a_plugin_hides_paths_from_listings(ws: tuple[Workspace, HideEnv]) -> None:
    workspace, plugin = ws
    ctx = workspace.context("a")
    listing = ctx.fs.list("/", depth=2)
    assert [e.path for e in listing.entries] == ["/a.txt", "/d", "/d/b.txt", "/d/e"]
    assert ("list", "/", 3) in plugin.operations  # .env, a.txt, d: one hidden
    res = ctx.tools.execute("str_replace_editor", {"command": "view", "path": "/d"})
    assert res.ok, res.text
    assert "prod.env" not in res.text and "/d/b.txt" in res.text


def test_a_plugin_hides_paths_from_walks(ws: tuple[Workspace, HideEnv]) -> None:
    workspace, plugin = ws
    fs = workspace.context("a").fs
    assert [e.path for e in fs.walk("/")] == ["/a.txt", "/d/b.txt", "/d/e/c.txt"]
    assert plugin.operations[-1] == ("walk", "/", 5)


def test_a_plugin_vetoes_a_stat(ws: tuple[Workspace, HideEnv]) -> None:
    workspace, _ = ws
    fs = workspace.context("a").fs
    assert fs.stat("/d/b.txt").type == "file"
    with pytest.raises(FsError) as info:
        fs.stat("/d/prod.env")
    assert info.value.code is ErrorCode.FS_NOT_FOUND
