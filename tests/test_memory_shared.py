"""memory://NAME is fsspec's own memory filesystem: what pandas or fsspec wrote is the
agent's, and the other way round; compare-and-swap holds against writers outside fsseam."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator

import fsspec
import pytest
from fsspec.implementations.memory import MemoryFileSystem

from fsseam import Conflict, CreateOnly, ErrorCode, IfMatch, Workspace

from .helpers import call, fails, ok


@pytest.fixture
def name() -> Iterator[str]:
    """A fresh name on the global store, removed afterwards (the store outlives the test)."""
    n = f"shared-{uuid.uuid4().hex}"
    yield n
    fs = MemoryFileSystem()
    if fs.exists(f"/{n}"):
        fs.rm(f"/{n}", recursive=True)


def test_agent_reads_what_fsspec_wrote_and_fsspec_reads_the_agents_edit(name: str) -> None:
    with fsspec.open(f"memory://{name}/data.csv", "wb") as f:
        f.write(b"a,b\r\n1,2\r\n")
    ws = Workspace(f"memory://{name}")
    assert ok(call(ws, "agent", "read", file_path="/data.csv")).text == (
        "     1\ta,b\n     2\t1,2"
    )
    ok(call(ws, "agent", "edit", file_path="/data.csv", old_string="1,2", new_string="3,4"))
    fs = fsspec.filesystem("memory")
    assert fs.cat_file(f"/{name}/data.csv") == b"a,b\r\n3,4\r\n"

    ok(call(ws, "agent", "write", file_path="/new/notes.md", content="hello\n"))
    with fsspec.open(f"memory://{name}/new/notes.md", "rb") as f:
        assert f.read() == b"hello\n"
    assert sorted(fs.ls(f"/{name}", detail=False)) == [f"/{name}/data.csv", f"/{name}/new"]


def test_two_workspaces_on_one_url_share_files_like_a_rerun_notebook_cell(name: str) -> None:
    first = Workspace(f"memory://{name}")
    ok(call(first, "a", "write", file_path="/notes.md", content="kept\n"))
    again = Workspace(f"memory://{name}")  # the cell that builds the workspace, run again
    assert ok(call(again, "a", "read", file_path="/notes.md")).text == "     1\tkept"


def test_an_outside_write_between_read_and_edit_is_stale(name: str) -> None:
    ws = Workspace(f"memory://{name}")
    ok(call(ws, "agent", "write", file_path="/t.txt", content="one\ntwo\n"))
    ctx = ws.context("agent")
    ok(ctx.tools.execute("read", {"file_path": "/t.txt"}))
    # Same size, written by plain fsspec: no lock taken, no mtime to go by.
    fsspec.filesystem("memory").pipe_file(f"/{name}/t.txt", b"one\nTWO\n")
    res = fails(
        ctx.tools.execute("edit", {"file_path": "/t.txt", "old_string": "one",
                                   "new_string": "1"}),
        ErrorCode.FS_STALE,
    )
    assert "\n-two\n+TWO\n" in res.text  # what the outside writer changed
    assert "Your old_string still occurs exactly once in it." in res.text
    assert fsspec.filesystem("memory").cat_file(f"/{name}/t.txt") == b"one\nTWO\n"
    # The refusal showed the whole change: the retry goes ahead without a read.
    ok(ctx.tools.execute("edit", {"file_path": "/t.txt", "old_string": "one", "new_string": "1"}))
    assert fsspec.filesystem("memory").cat_file(f"/{name}/t.txt") == b"1\nTWO\n"


def test_workspaces_on_the_global_store_share_one_lock(name: str) -> None:
    """Threads incrementing through separate workspaces on one URL lose no update."""
    url = f"memory://{name}"
    Workspace(url).backend.write("n", b"0", CreateOnly())
    errors: list[BaseException] = []

    def worker() -> None:
        backend = Workspace(url).backend
        try:
            done = 0
            while done < 50:
                blob = backend.read("n")
                try:
                    backend.write("n", str(int(blob.data) + 1).encode(), IfMatch(blob.version))
                except Conflict:
                    continue
                done += 1
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert fsspec.filesystem("memory").cat_file(f"/{name}/n") == b"200"


@pytest.mark.parametrize("options", [None, {"global_store": False}])
def test_a_fresh_memory_root_lists_as_empty(name: str, options: dict[str, bool] | None) -> None:
    ctx = Workspace(f"memory://{name}", options).context()
    res = ok(ctx.tools.execute("str_replace_editor", {"command": "view", "path": "/"}))
    assert res.text == (
        "Here's the files and directories up to 2 levels deep in /, excluding hidden items:\n"
    )
    assert ctx.fs.list("/").entries == []
    assert ctx.fs.stat("/").type == "directory"
    fails(ctx.tools.execute("read", {"file_path": "/"}), ErrorCode.FS_IS_DIRECTORY)
