"""Branches through fsseam's other surfaces: ``fsseam mcp URL --branch NAME`` (a real MCP
client and server process), the guarded fsspec filesystem's ``branch=`` (directly and as
the chained ``fsseam::`` URL, with pandas), and a branch context pickled to another
process. Each time: main's bytes are exact until ``ws.merge``, which publishes the
branch's."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path
from typing import Any

import fsspec
import pytest

from fsseam import Context, ErrorCode, FsError, GuardRefused, Workspace
from fsseam.filesystem import GuardedFileSystem
from fsseam.messages import Reason

ORIGINAL = b"alpha\nbeta\ngamma\n"
CSV = b"city,temp_c\nOslo,3\nLima,19\n"


def main_files(ws: Workspace) -> dict[str, bytes]:
    """Main's files and their bytes, read from the store itself (the reserved folder
    left out)."""
    backend = ws.backend
    return {e.key: backend.read(e.key).data for e in backend.walk("")
            if e.kind == "file" and not e.key.startswith(".fsseam")}


# -- MCP -------------------------------------------------------------------------------------


async def _mcp_flow(root: Path) -> None:
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "fsseam.cli", "mcp", str(root), "--branch", "feat", "--owner", "agent"],
        env=dict(os.environ),
    )
    with anyio.fail_after(60):
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            assert not (await s.call_tool("read", {"file_path": "/notes.txt"})).is_error
            edit = await s.call_tool("edit", {"file_path": "/notes.txt",
                                              "old_string": "beta", "new_string": "BETA"})
            assert not edit.is_error, edit.content
            made = await s.call_tool("write", {"file_path": "/new.txt", "content": "n\n"})
            assert not made.is_error, made.content
            assert (root / "notes.txt").read_bytes() == ORIGINAL
            assert not (root / "new.txt").exists()
            listed = await s.call_tool("ls", {"path": "/"})
            assert listed.content[0].text == "/new.txt  (2 bytes)\n/notes.txt  (17 bytes)"  # type: ignore[union-attr]
            hidden = await s.call_tool("ls", {"path": "/.fsseam-branches/refs"})
            assert hidden.is_error
            assert hidden.structured_content is not None
            assert hidden.structured_content["error"]["code"] == "FS_PERMISSION_DENIED"
            hidden = await s.call_tool("read", {"file_path": "/.fsseam-branches/refs/feat.json"})
            assert hidden.is_error
            assert hidden.structured_content is not None
            assert hidden.structured_content["error"]["code"] == "FS_PERMISSION_DENIED"
            # A person changes the file on main meanwhile: the agent's branch still reads
            # main's current bytes under its own change only where it changed them.
            (root / "notes.txt").write_bytes(ORIGINAL + b"delta\n")
            again = await s.call_tool("read", {"file_path": "/notes.txt"})
            assert "BETA" in again.content[0].text  # type: ignore[union-attr]
            assert "delta" not in again.content[0].text  # type: ignore[union-attr]


def test_an_mcp_server_on_a_branch_leaves_main_untouched_until_the_merge(root: Path) -> None:
    pytest.importorskip("mcp", reason="the MCP SDK is not installed: pip install -e '.[mcp]'")
    import anyio

    (root / "notes.txt").write_bytes(ORIGINAL)
    anyio.run(_mcp_flow, root)
    ws = Workspace(str(root))
    assert main_files(ws) == {"notes.txt": ORIGINAL + b"delta\n"}
    (info,) = ws.branches()
    assert (info.name, info.owners, info.files) == ("feat", ["agent"], 2)
    review = ws.diff("feat")
    assert [(f.path, f.change, f.main_changed) for f in review.files] == [
        ("/new.txt", "added", False), ("/notes.txt", "changed", True)]
    outcome = ws.merge("feat", owner="person", expect=review.token)
    assert outcome.ok, outcome.text
    assert (outcome.published, outcome.merged) == (["/new.txt", "/notes.txt"], ["/notes.txt"])
    assert main_files(ws) == {"notes.txt": b"alpha\nBETA\ngamma\ndelta\n", "new.txt": b"n\n"}


def test_mcp_refuses_a_bad_branch_name_before_serving(root: Path) -> None:
    res = subprocess.run([sys.executable, "-m", "fsseam.cli", "mcp", str(root), "--branch",
                          "a/b"], capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and res.stdout == ""
    assert "'a/b' is not a branch name" in res.stderr
    assert list(root.iterdir()) == []


# -- the guarded filesystem ------------------------------------------------------------------


def _memory() -> Workspace:
    return Workspace(f"memory://fs-branch-{uuid.uuid4().hex[:12]}",
                     storage_options={"global_store": False})


def test_the_filesystem_of_a_main_context_opens_the_branch_it_is_given() -> None:
    ws = _memory()
    assert ws.context("seed").tools.execute(
        "write", {"file_path": "/notes.txt", "content": ORIGINAL.decode()}).ok
    fs = GuardedFileSystem(context=ws.context("person"), branch="feat",
                           skip_instance_cache=True)
    assert fs.context.workspace.branch_name == "feat"
    assert fs.context.owner == "person"
    assert fs.cat_file("/notes.txt") == ORIGINAL
    with fs.open("/notes.txt", "wb") as f:
        f.write(b"alpha\n")
    fs.pipe_file("/more/new.bin", b"\x00\x01")
    assert main_files(ws) == {"notes.txt": ORIGINAL}
    assert fs.find("/") == ["/more/new.bin", "/notes.txt"]
    assert fs.cat_file("/notes.txt") == b"alpha\n"

    # The guard on the branch: another owner's write of what it read before the change.
    other = ws.branch("feat").context("other").filesystem()
    assert other.context.workspace.branch_name == "feat"
    assert other.cat_file("/notes.txt") == b"alpha\n"
    with fs.open("/notes.txt", "wb") as f:
        f.write(b"alpha\nbeta\n")
    with pytest.raises(GuardRefused) as refused, other.open("/notes.txt", "wb") as f:
        f.write(b"lost update\n")
    assert refused.value.code is ErrorCode.FS_STALE
    assert fs.cat_file("/notes.txt") == b"alpha\nbeta\n"
    with pytest.raises(GuardRefused) as hidden:
        fs.cat_file("/.fsseam-branches/refs/feat.json")
    assert hidden.value.code is ErrorCode.FS_PERMISSION_DENIED

    # A context on the branch already is kept; no branch of a branch.
    on = ws.branch("feat").context("x")
    assert GuardedFileSystem(context=on, branch="feat", skip_instance_cache=True).context is on
    with pytest.raises(Exception, match="branch") as nested:
        GuardedFileSystem(context=on, branch="other", skip_instance_cache=True)
    assert getattr(nested.value, "code", None) is ErrorCode.FS_INVALID_ARGUMENT

    outcome = ws.merge("feat", owner="person")
    assert outcome.ok, outcome.text
    assert main_files(ws) == {"notes.txt": b"alpha\nbeta\n", "more/new.bin": b"\x00\x01"}


def test_pandas_through_the_chained_url_writes_only_to_the_branch() -> None:
    pd = pytest.importorskip("pandas", reason="pandas is not installed")
    proj = f"chain-branch-{uuid.uuid4().hex[:10]}"
    main_ws = Workspace(f"memory://{proj}")
    assert main_ws.context("seed").tools.execute(
        "write", {"file_path": "/data.csv", "content": CSV.decode()}).ok
    url = f"fsseam::memory://{proj}/data.csv"
    on_branch = {"fsseam": {"owner": "person", "branch": "feat"}}

    frame = pd.read_csv(url, storage_options=on_branch)
    frame.loc[1, "temp_c"] = 20
    frame.to_csv(url, index=False, storage_options=on_branch)
    pd.DataFrame({"a": [1]}).to_csv(f"fsseam::memory://{proj}/new.csv", index=False,
                                    storage_options=on_branch)
    assert main_files(main_ws) == {"data.csv": CSV}
    assert fsspec.filesystem("memory").cat_file(f"/{proj}/data.csv") == CSV
    back = pd.read_csv(url, storage_options=on_branch)
    assert back.to_dict("list") == {"city": ["Oslo", "Lima"], "temp_c": [3, 20]}
    # Main's owner through the same URL without branch= sees main.
    on_main = pd.read_csv(url, storage_options={"fsseam": {"owner": "person"}})
    assert on_main.to_dict("list") == {"city": ["Oslo", "Lima"], "temp_c": [3, 19]}
    # The same option through fsspec.open, the guard holding on the branch.
    with pytest.raises(GuardRefused) as refused, fsspec.open(
            url, "wb", fsseam={"owner": "stranger", "branch": "feat"}) as f:
        f.write(b"x\n")
    assert refused.value.code is ErrorCode.FS_NOT_OBSERVED

    review = main_ws.diff("feat")
    assert [(f.path, f.change) for f in review.files] == [("/data.csv", "changed"),
                                                          ("/new.csv", "added")]
    assert main_ws.merge("feat", owner="person", expect=review.token).ok
    assert main_files(main_ws) == {"data.csv": b"city,temp_c\nOslo,3\nLima,20\n",
                                   "new.csv": b"a\n1\n"}


# -- a branch context in another process -----------------------------------------------------

CHILD = textwrap.dedent("""
    import pickle, sys
    ctx = pickle.loads(sys.stdin.buffer.read())
    ws = ctx.workspace
    r = ctx.tools.execute("edit", {"file_path": "/notes.txt", "old_string": "gamma",
                                   "new_string": "GAMMA"})
    print(repr((ws.branch_name, ctx.owner, r.ok, r.text)))
""")


def test_a_pickled_branch_context_reopens_the_same_branch(root: Path, tmp_path: Path) -> None:
    """The context's spec carries the branch: unpickled in another process, its edit (of
    the file it read here, the observation kept in a ledger file) lands on the branch."""
    (root / "notes.txt").write_bytes(ORIGINAL)
    ws = Workspace(str(root), observations=str(tmp_path / "ledger.json"))
    branch = ws.branch("feat")
    ctx = branch.context("agent")
    assert ctx.tools.execute("edit", {"file_path": "/notes.txt", "old_string": "beta",
                                      "new_string": "BETA"}).text.startswith("Error [")
    assert ctx.tools.execute("read", {"file_path": "/notes.txt"}).ok
    assert ctx.tools.execute("edit", {"file_path": "/notes.txt", "old_string": "beta",
                                      "new_string": "BETA"}).ok
    assert ctx.spec().workspace.arguments()["branch"] == "feat"
    again = pickle.loads(pickle.dumps(ctx))
    assert isinstance(again, Context)
    assert (again.workspace.branch_name, again.owner) == ("feat", "agent")
    assert again.fs.backend.read("notes.txt").data == b"alpha\nBETA\ngamma\n"

    child = subprocess.run([sys.executable, "-c", CHILD], input=pickle.dumps(ctx),
                           capture_output=True, timeout=120)
    assert child.returncode == 0, child.stderr.decode()
    said: Any = eval(child.stdout.decode())  # a repr of plain values, made just above
    assert said[:3] == ("feat", "agent", True), said
    assert (root / "notes.txt").read_bytes() == ORIGINAL
    assert branch.backend.read("notes.txt").data == b"alpha\nBETA\nGAMMA\n"
    assert ws.merge("feat", owner="person").ok
    assert (root / "notes.txt").read_bytes() == b"alpha\nBETA\nGAMMA\n"
    # What the owner read on the branch is kept apart from its reads on main.
    owners = json.loads((tmp_path / "ledger.json").read_text())["owners"]
    assert owners["agent@branch:feat"] and "agent" not in owners


# -- read-only -------------------------------------------------------------------------------


def test_a_read_only_workspace_on_a_branch_writes_nothing(root: Path) -> None:
    """``fsseam mcp URL --branch NAME --read-only`` (a reviewer reading an agent's branch):
    opening it makes no branch and finishes no merge (read-only credentials could not);
    a branch that does not exist is reported, one that does reads its changes."""
    (root / "notes.txt").write_bytes(ORIGINAL)
    with pytest.raises(FsError) as missing:
        Workspace(str(root), read_only=True, branch="feat")
    assert (missing.value.code, missing.value.reason) == (ErrorCode.FS_NOT_FOUND,
                                                          Reason.branch_missing)
    assert sorted(p.name for p in root.iterdir()) == ["notes.txt"]
    refused = subprocess.run([sys.executable, "-m", "fsseam.cli", "call", str(root), "read",
                              '{"file_path": "/notes.txt"}', "--branch", "feat",
                              "--read-only"], capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "there is no branch 'feat'" in refused.stderr
    assert sorted(p.name for p in root.iterdir()) == ["notes.txt"]

    agent = Workspace(str(root)).branch("feat").context("agent")
    assert agent.tools.execute("write", {"file_path": "/new.txt", "content": "n\n"}).ok
    made = sorted(str(p.relative_to(root)) for p in root.rglob("*"))
    viewer = Workspace(str(root), read_only=True, branch="feat").context("viewer")
    assert viewer.tools.execute("read", {"file_path": "/new.txt"}).text == "     1\tn"
    write = viewer.tools.execute("write", {"file_path": "/other.txt", "content": "o\n"})
    assert write.text.startswith("Error [FS_READ_ONLY]")
    assert sorted(str(p.relative_to(root)) for p in root.rglob("*")) == made
