"""fsseam on a route of deepagents' CompositeBackend: the composite strips the route's prefix
before it calls fsseam, and every message the model reads still names the path it used
(``/data/config.toml``), so following the advice reaches the route's file, not the default
backend's. The real framework, driven by LangChain's fake chat model, on local disk."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "deepagents", reason="deepagents is not installed: pip install -e '.[deepagents]'"
)

from deepagents import create_deep_agent as deepagents_create_deep_agent
from deepagents.backends import CompositeBackend, StateBackend
from deepagents.backends.protocol import DeleteResult

from fsseam import ErrorCode, FsError, Workspace
from fsseam.integrations.deepagents import FsseamBackend, Route, create_deep_agent
from fsseam.paths import RESERVED_FOLDERS, reserved

from .helpers import NOT_OBSERVED, retries, seed, stale, stored
from .test_deepagents import ScriptedModel, call, run, script

ROUTED = NOT_OBSERVED.replace("/config.toml", "/data/config.toml")
FILE = "/data/config.toml"


def edit(old: str, new: str) -> Any:
    return call("edit_file", file_path=FILE, old_string=old, new_string=new)


def composite(backend: FsseamBackend) -> CompositeBackend:
    # The docs' snippet: the agent's own files in its state, the workspace on a route.
    return CompositeBackend(default=StateBackend(), routes={"/data/": backend})


def test_the_advice_of_every_refusal_leads_to_the_routes_file(tmp_path: Path) -> None:
    ws = Workspace(str(tmp_path))
    seed(ws)
    model = ScriptedModel(messages=script(
        edit("retries = 1", "retries = 2"),  # never read: refused, naming /data/config.toml
        call("read_file", file_path=FILE),  # the advice, followed
        lambda: seed(ws, content="retries = 5\n"),  # another writer, after the read
        edit("retries = 1", "retries = 2"),  # stale: the diff, naming the routed path
        edit("retries = 5", "retries = 6"),  # against the version the refusal showed
        call("read_file", file_path="/data/missing.toml"),
        call("ls", path="/data/nowhere"),
        call("edit_file", file_path="/config.toml", old_string="a", new_string="b"),
        "Done.",
    ))
    agent = create_deep_agent(model=model, backend=composite(FsseamBackend(ws, owner="a")))

    refused, read, conflict, edited, missing, nowhere, default = run(agent)

    assert (refused.status, refused.content) == ("error", ROUTED)
    assert (read.status, read.content) == ("success", "@@ lines 1-1 of 1 @@\nretries = 1")
    assert (conflict.status, conflict.content) == ("error", stale(retries(1, 5), path=FILE))
    assert (edited.status, edited.content) == (
        "success", f"Successfully replaced 1 instance(s) of the string in '{FILE}'")
    assert missing.content == (
        "Error: [FS_NOT_FOUND] /data/missing.toml does not exist. Check the path (list the "
        "parent directory), or create the file.")
    assert "/data/nowhere" in nowhere.content and nowhere.status == "error"
    # The default backend's file of the stripped name is another file, and untouched.
    assert default.status == "error" and "/data/" not in default.content
    assert stored(ws) == b"retries = 6\n"
    # Beside the file, only fsseam's own records (the edit's call record: it ran as its
    # tool call, fsseam.seam.calls).
    assert sorted(p.name for p in tmp_path.iterdir() if not reserved(p.name)) == [
        "config.toml"]
    assert {p.name for p in tmp_path.iterdir()} <= {"config.toml", *RESERVED_FOLDERS}


def test_deepagents_own_create_deep_agent_with_the_route_given(tmp_path: Path) -> None:
    ws = Workspace(str(tmp_path))
    seed(ws)
    backend = FsseamBackend(ws, owner="a", route="/data/")
    model = ScriptedModel(messages=script(
        edit("retries = 1", "retries = 2"), call("read_file", file_path=FILE),
        edit("retries = 1", "retries = 2"), "Done."))
    agent = deepagents_create_deep_agent(model=model, backend=composite(backend),
                                         middleware=[backend.middleware])

    refused, _, edited = run(agent)

    assert (refused.status, refused.content) == ("error", ROUTED)
    assert edited.status == "success"
    assert stored(ws) == b"retries = 2\n"
    assert repr(backend).endswith("owner='a', route='/data/')")


def test_a_directory_delete_names_the_routed_file_it_needs_read(tmp_path: Path) -> None:
    ws = Workspace(str(tmp_path))
    seed(ws, "/d/one.txt", "1\n")
    seed(ws, "/d/two.txt", "2\n")
    backend = FsseamBackend(ws, owner="a")
    create_deep_agent(model=ScriptedModel(messages=iter(())), backend=composite(backend))
    assert backend.route is not None and backend.route.prefix == "/data"
    routes = composite(backend)

    routes.read("/data/d/one.txt")
    assert routes.delete("/data/d") == DeleteResult(error=(
        "Error [FS_NOT_OBSERVED]: /data/d/two.txt has not been read yet. Read it first (a "
        "delete needs the version you saw), then retry the delete."))
    assert (tmp_path / "d" / "one.txt").read_bytes() == b"1\n"
    routes.read("/data/d/two.txt")
    assert routes.delete("/data/d") == DeleteResult(path="/data/d")
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_route_names_every_path_an_error_carries() -> None:
    route = Route("/data/")
    err = FsError(ErrorCode.FS_BACKEND, path="/a.txt", reason="change_outcome_unknown",
                  details={"cause": "x", "files": "/a.txt; /b/c.txt",
                           "rollback": ["/a.txt", "/b/c.txt"], "pattern": "/*.py"})
    moved = route.error(err)
    assert moved.path == "/data/a.txt"
    assert moved.details["files"] == "/data/a.txt; /data/b/c.txt"
    assert moved.details["rollback"] == ["/data/a.txt", "/data/b/c.txt"]
    assert moved.details["pattern"] == "/*.py"  # not a path: left as it is
    assert (err.path, err.details["files"]) == ("/a.txt", "/a.txt; /b/c.txt")  # a copy
    assert route.path("/") == "/data"
    assert Route("/").path("/x") == "/x"
