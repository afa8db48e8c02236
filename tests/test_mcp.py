"""The MCP surface, end to end: real MCP clients talking to spawned ``fsseam mcp`` servers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP SDK is not installed: pip install -e '.[mcp]'")

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

from fsseam import TOOL_SETS, Workspace

ORIGINAL = b"alpha\r\nbeta\r\ngamma\r\n"


def _server(root: Path, owner: str, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "fsseam.cli", "mcp", str(root), "--owner", owner, *extra],
        env=dict(os.environ),  # the SDK passes only a few variables; keep this checkout's
    )


def _text(result: Any) -> str:
    assert len(result.content) == 1
    block = result.content[0]
    assert block.type == "text"
    text: str = block.text
    return text


async def _session_flow(root: Path) -> None:
    with anyio.fail_after(60):
        await _flow(root)


async def _flow(root: Path) -> None:
    # The default set, in its order, each tool exactly as the library pins its schema.
    by_name = {s["name"]: s for s in Workspace(str(root)).context("x").tools.schemas("json")}
    expected = [by_name[n] for n in TOOL_SETS["files"]]
    async with (
        stdio_client(_server(root, "agent-a")) as (read_a, write_a),
        ClientSession(read_a, write_a) as a,
    ):
        await a.initialize()

        listed = await a.list_tools()
        assert [t.name for t in listed.tools] == [s["name"] for s in expected]
        for tool, schema in zip(listed.tools, expected, strict=True):
            assert tool.description == schema["description"]
            assert tool.input_schema == schema["parameters"]

        read = await a.call_tool("read", {"file_path": "/notes.txt"})
        assert not read.is_error
        assert _text(read) == "     1\talpha\n     2\tbeta\n     3\tgamma"
        assert read.structured_content["ok"] is True
        assert "lines" not in read.structured_content["value"]

        edit = await a.call_tool(
            "edit", {"file_path": "/notes.txt", "old_string": "beta", "new_string": "BETA"}
        )
        assert not edit.is_error, _text(edit)
        assert _text(edit).startswith("Edited /notes.txt")
        assert (root / "notes.txt").read_bytes() == b"alpha\r\nBETA\r\ngamma\r\n"

        # A second client, a second server process on the same directory, another owner.
        async with (
            stdio_client(_server(root, "agent-b")) as (read_b, write_b),
            ClientSession(read_b, write_b) as b,
        ):
            await b.initialize()
            assert not (await b.call_tool("read", {"file_path": "/notes.txt"})).is_error
            other = await b.call_tool(
                "edit", {"file_path": "/notes.txt", "old_string": "gamma", "new_string": "G"}
            )
            assert not other.is_error, _text(other)
        theirs = (root / "notes.txt").read_bytes()
        assert theirs == b"alpha\r\nBETA\r\nG\r\n"

        # The first session's view is stale: an error result, not a protocol error.
        stale = await a.call_tool(
            "edit", {"file_path": "/notes.txt", "old_string": "alpha", "new_string": "A"}
        )
        assert stale.is_error
        assert _text(stale).startswith("Error [FS_STALE]")
        assert stale.structured_content["error"]["code"] == "FS_STALE"
        assert (root / "notes.txt").read_bytes() == theirs

        # A tool of another set is not listed, but a client calling it by name runs it
        # (a script written against every tool keeps working); nothing changes.
        assert "str_replace_editor" not in [t.name for t in (await a.list_tools()).tools]
        other = await a.call_tool("str_replace_editor", {"command": "view",
                                                         "path": "/notes.txt"})
        assert not other.is_error and "BETA" in _text(other)
        assert (root / "notes.txt").read_bytes() == theirs
        with pytest.raises(Exception, match=(
                r"there is no tool named 'multi_edits' in the tool set served here \(files: "
                r"read, write, edit, ls, glob, grep, delete, move, history, restore\)")):
            await a.call_tool("multi_edits", {"file_path": "/notes.txt"})

        # Model mistakes are error results too.
        bad = await a.call_tool("edit", {"file_path": "/notes.txt"})
        assert bad.is_error
        assert _text(bad).startswith("Error [FS_INVALID_ARGUMENT]")

        # After a re-read the edit lands on top of the other session's change.
        assert not (await a.call_tool("read", {"file_path": "/notes.txt"})).is_error
        again = await a.call_tool(
            "edit", {"file_path": "/notes.txt", "old_string": "alpha", "new_string": "A"}
        )
        assert not again.is_error, _text(again)
        assert (root / "notes.txt").read_bytes() == b"A\r\nBETA\r\nG\r\n"


def test_two_mcp_sessions_on_one_directory(root: Path) -> None:
    (root / "notes.txt").write_bytes(ORIGINAL)
    anyio.run(_session_flow, root)


def _rpc(proc: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.flush()


def test_server_exits_cleanly_when_stdin_closes(root: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "fsseam.cli", "mcp", str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        _rpc(
            proc,
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "test", "version": "0"},
                },
            },
        )
        assert proc.stdout is not None
        reply = json.loads(proc.stdout.readline())
        assert reply["id"] == 1
        assert reply["result"]["serverInfo"]["name"] == "fsseam"
        assert proc.stdin is not None
        proc.stdin.close()
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


async def _read_only_flow(root: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "fsseam.cli", "mcp", str(root), "--read-only"],
        env=dict(os.environ),
    )
    with anyio.fail_after(60):
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            init = await s.initialize()
            assert init.instructions is not None
            assert "read-only" in init.instructions
            listed = await s.list_tools()
            assert [t.name for t in listed.tools] == ["read", "ls", "glob", "grep", "history"]
            hints = listed.tools[0].annotations
            assert hints is not None
            assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint) == (
                True, False, True
            )
            res = await s.call_tool("read", {"file_path": "/notes.txt"})
            assert _text(res) == "     1\talpha\n     2\tbeta\n     3\tgamma"
            with pytest.raises(Exception, match="there is no tool named 'write'"):
                await s.call_tool("write", {"file_path": "/x.txt", "content": "x"})
    assert not (root / "x.txt").exists()


def test_read_only_server_lists_only_read_only_tools(root: Path) -> None:
    (root / "notes.txt").write_bytes(ORIGINAL)
    anyio.run(_read_only_flow, root)


async def _annotations_flow(root: Path) -> None:
    with anyio.fail_after(60):
        async with (
            stdio_client(_server(root, "agent", "--tools", "all")) as (read, write),
            ClientSession(read, write) as s,
        ):
            init = await s.initialize()
            assert init.instructions is not None
            assert "FS_STALE" in init.instructions
            listed = await s.list_tools()
            hints = {
                t.name: (
                    t.annotations.read_only_hint,
                    t.annotations.destructive_hint,
                    t.annotations.idempotent_hint,
                    t.annotations.open_world_hint,
                )
                for t in listed.tools
                if t.annotations is not None
            }
            assert hints == {
                "read": (True, False, True, False),
                "write": (False, True, True, False),
                "edit": (False, True, False, False),
                "str_replace_editor": (False, True, False, False),
                "ls": (True, False, True, False),
                "glob": (True, False, True, False),
                "grep": (True, False, True, False),
                "delete": (False, True, False, False),
                "move": (False, True, False, False),
                "multi_edit": (False, True, False, False),
                "apply_patch": (False, True, False, False),
                "memory": (False, True, False, False),
                "history": (True, False, True, False),
                "restore": (False, True, True, False),
            }


def test_tools_carry_annotations_and_the_server_sends_instructions(root: Path) -> None:
    anyio.run(_annotations_flow, root)


async def _openai_set_flow(root: Path) -> None:
    with anyio.fail_after(60):
        async with (
            stdio_client(_server(root, "agent", "--tools", "openai")) as (read, write),
            ClientSession(read, write) as s,
        ):
            await s.initialize()
            listed = await s.list_tools()
            assert [t.name for t in listed.tools] == [
                "apply_patch", "read", "ls", "glob", "grep"]
            assert not (await s.call_tool("read", {"file_path": "/notes.txt"})).is_error
            patch = ("*** Begin Patch\n*** Update File: /notes.txt\n@@\n-beta\n+BETA\n"
                     "*** End Patch")
            done = await s.call_tool("apply_patch", {"patch": patch})
            assert not done.is_error, _text(done)
            # write is not in the set; called by name it runs under the guard: the
            # patch's own change was observed, so it replaces the file.
            wrote = await s.call_tool("write", {"file_path": "/notes.txt", "content": "w\n"})
            assert not wrote.is_error, _text(wrote)
            with pytest.raises(Exception, match=r"in the tool set served here \(openai: "
                               r"apply_patch, read, ls, glob, grep\)"):
                await s.call_tool("wirte", {"file_path": "/notes.txt", "content": "lost\n"})
    assert (root / "notes.txt").read_bytes() == b"w\r\n"


def test_a_named_tool_set_is_what_the_server_lists_and_runs(root: Path) -> None:
    (root / "notes.txt").write_bytes(ORIGINAL)
    anyio.run(_openai_set_flow, root)
