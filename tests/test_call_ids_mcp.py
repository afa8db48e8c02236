"""Call ids on the MCP surface and the CLI: the id each call runs as (the JSON-RPC request
id scoped to its session, or the client's ``_meta["fsseam/call_id"]``; ``fsseam call
--call-id``), and what a call sent again with the same id does (exactly once) or with
another id (another writer's change: FS_STALE). Real MCP clients and servers (the SDK's
in-process client on ``build_server``), real files, real ``fsseam`` processes."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP SDK is not installed: pip install -e '.[mcp]'")

import anyio

from fsseam import Workspace
from fsseam.mcp import CALL_ID_META, ToolServer, build_server

from .integrations.call_ids import APPEND, APPENDED, NOTES, CallIds


def _client(server: Any) -> Any:
    try:
        from mcp.client.client import Client
    except ImportError:  # pragma: no cover - mcp 1.x has no in-process Client
        pytest.skip("the in-process MCP client needs mcp >= 2")
    return Client(build_server(server))


def _text(result: Any) -> str:
    text: str = result.content[0].text
    return text


def _workspace(root: Path, recorder: CallIds) -> Workspace:
    (root / "notes.txt").write_bytes(NOTES)
    return Workspace(str(root), plugins=[recorder], load_entry_points=False)


# -- which id a call runs as -------------------------------------------------------------------


async def _default_ids(ws: Workspace) -> None:
    server = ToolServer(ws)
    with anyio.fail_after(30):
        for _ in range(2):  # two sessions: each numbers its requests from 1
            async with _client(server) as client:
                assert not (await client.call_tool("read", {"file_path": "/notes.txt"})
                            ).is_error
                wrote = await client.call_tool("write", {"file_path": "/new.txt",
                                                         "content": "x\n"})
                assert not wrote.is_error, _text(wrote)
                wrote = await client.call_tool(
                    "edit", {"file_path": "/new.txt", "old_string": "x", "new_string": "y"})
                assert not wrote.is_error, _text(wrote)
                await client.call_tool("delete", {"file_path": "/new.txt"})


def test_a_call_runs_as_its_request_id_scoped_to_its_session(root: Path) -> None:
    recorder = CallIds()
    anyio.run(_default_ids, _workspace(root, recorder))
    assert [(p, t) for p, _, t in recorder.seen] == [
        ("/new.txt", "write"), ("/new.txt", "edit"), ("/new.txt", "delete")] * 2
    ids = [i for _, i, _ in recorder.seen]
    parsed = [re.fullmatch(r"mcp:([0-9a-f]{16}):(\d+)", str(i)) for i in ids]
    assert all(parsed), ids
    sessions = [m.group(1) for m in parsed if m]
    requests = [int(m.group(2)) for m in parsed if m]
    # One nonce per session, another for the next session (whose request ids restart), and
    # within a session the JSON-RPC ids of the calls, one after another.
    assert sessions[0] == sessions[1] == sessions[2] != sessions[3] == sessions[4] == sessions[5]
    assert requests[0] < requests[1] < requests[2]
    assert requests[3:] == requests[:3]
    assert len(set(ids)) == 6


async def _given_ids(ws: Workspace) -> None:
    with anyio.fail_after(30):
        async with _client(ToolServer(ws)) as client:
            done = await client.call_tool("write", {"file_path": "/a.txt", "content": "a\n"},
                                          meta={CALL_ID_META: "job-7/step-3"})
            assert not done.is_error, _text(done)
            done = await client.call_tool("write", {"file_path": "/b.txt", "content": "b\n"},
                                          meta={CALL_ID_META: 42})
            assert not done.is_error, _text(done)
            for bad in ("", 1.5, ["x"], True):
                with pytest.raises(Exception, match=re.escape(CALL_ID_META)):
                    await client.call_tool("write", {"file_path": "/c.txt", "content": "c\n"},
                                           meta={CALL_ID_META: bad})


def test_the_clients_own_id_in_meta_wins_and_a_bad_one_is_refused(root: Path) -> None:
    recorder = CallIds()
    anyio.run(_given_ids, _workspace(root, recorder))
    assert recorder.seen == [("/a.txt", "job-7/step-3", "write"), ("/b.txt", "42", "write")]
    assert not (root / "c.txt").exists()


# -- what a call sent again does -------------------------------------------------------------


async def _replays(ws: Workspace, root: Path) -> None:
    with anyio.fail_after(60):
        async with _client(ToolServer(ws)) as first, _client(ToolServer(ws, "other")) as other:
            for client in (first, other):
                assert not (await client.call_tool("read", {"file_path": "/notes.txt"})
                            ).is_error
            once = await first.call_tool("edit", APPEND, meta={CALL_ID_META: "step-1"})
            assert not once.is_error, _text(once)
            landed = root.joinpath("notes.txt").read_bytes()
            assert landed == APPENDED
            # Another writer's same change, made against the version before it: refused.
            theirs = await other.call_tool("edit", APPEND, meta={CALL_ID_META: "step-9"})
            assert theirs.is_error and _text(theirs).startswith("Error [FS_STALE]"), \
                _text(theirs)
            assert root.joinpath("notes.txt").read_bytes() == landed
            # The answer was lost: the client sends the call again, with its id.
            again = await first.call_tool("edit", APPEND, meta={CALL_ID_META: "step-1"})
            assert (again.is_error, _text(again)) == (once.is_error, _text(once))
            assert root.joinpath("notes.txt").read_bytes() == landed
        # The server restarted (a new server on the workspace, its first session the same
        # owner): the client's id still names the call that landed.
        async with _client(ToolServer(ws)) as restarted:
            again = await restarted.call_tool("edit", APPEND, meta={CALL_ID_META: "step-1"})
            assert (again.is_error, _text(again)) == (once.is_error, _text(once))
            assert root.joinpath("notes.txt").read_bytes() == landed
            # The id of that call, given to another call: refused, nothing changed.
            reused = await restarted.call_tool(
                "write", {"file_path": "/notes.txt", "content": "x\n"},
                meta={CALL_ID_META: "step-1"})
            assert reused.is_error
            assert _text(reused).startswith("Error [FS_INVALID_ARGUMENT]: call id 'step-1' "
                                            "belongs to another call"), _text(reused)
            assert root.joinpath("notes.txt").read_bytes() == landed


def test_a_call_sent_again_with_its_id_changes_nothing_twice(root: Path) -> None:
    anyio.run(_replays, _workspace(root, CallIds()), root)


# -- the CLI -----------------------------------------------------------------------------------


def _fsseam_call(root: Path, tool: str, args: dict[str, Any], *extra: str
                 ) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fsseam.cli", "call", str(root), tool, json.dumps(args), *extra],
        capture_output=True, text=True, encoding="utf-8", timeout=120)


def test_cli_call_id(root: Path, tmp_path: Path) -> None:
    (root / "notes.txt").write_bytes(NOTES)
    mine, theirs = ("--ledger", str(tmp_path / "a.json")), ("--ledger", str(tmp_path / "b.json"))
    for ledger in (mine, theirs):
        assert _fsseam_call(root, "read", {"file_path": "/notes.txt"}, *ledger).returncode == 0

    once = _fsseam_call(root, "edit", APPEND, *mine, "--call-id", "nightly/17")
    assert once.returncode == 0, once.stdout + once.stderr
    landed = root.joinpath("notes.txt").read_bytes()
    assert landed == APPENDED
    # Another owner's same change, against the version it read before: another writer's.
    other = _fsseam_call(root, "edit", APPEND, *theirs, "--call-id", "nightly/18")
    assert other.returncode == 1
    assert other.stdout.startswith("Error [FS_STALE]"), other.stdout
    assert root.joinpath("notes.txt").read_bytes() == landed
    # The script died before it saw the answer and runs the call again, with its id.
    again = _fsseam_call(root, "edit", APPEND, *mine, "--call-id", "nightly/17")
    assert (again.returncode, again.stdout) == (once.returncode, once.stdout), again.stderr
    assert root.joinpath("notes.txt").read_bytes() == landed


def test_cli_call_id_without_a_ledger(root: Path) -> None:
    """No observations travel between the processes: the call record answers the replay."""
    once = _fsseam_call(root, "write", {"file_path": "/log.md", "content": "one\n"},
                        "--call-id", "cron/1")
    assert once.returncode == 0, once.stdout + once.stderr
    assert (root / "log.md").read_bytes() == b"one\n"
    # Run again, the call answers as its first run (a new call would find the file there
    # and say it holds this content already).
    again = _fsseam_call(root, "write", {"file_path": "/log.md", "content": "one\n"},
                         "--call-id", "cron/1")
    assert (again.returncode, again.stdout) == (once.returncode, once.stdout), again.stderr
    assert "already holds" not in again.stdout
    assert (root / "log.md").read_bytes() == b"one\n"


def test_cli_an_empty_call_id_is_a_usage_error(root: Path) -> None:
    (root / "notes.txt").write_bytes(NOTES)
    out = _fsseam_call(root, "write", {"file_path": "/x.txt", "content": "x"}, "--call-id", " ")
    assert out.returncode == 2
    assert "a call id is a non-empty string" in out.stderr
    assert not (root / "x.txt").exists()
