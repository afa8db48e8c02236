"""Pydantic AI's tool-call ids reach fsseam: ``FsseamToolset`` runs each call as
``RunContext.tool_call_id``, and under the ``FsseamWorkspace`` capability each change a tool
makes through ``ctx.workspace`` runs as its call (a second change as ``ID#2``). A call run
again with its id changes nothing twice; another writer's same change is FS_STALE. Real
agent runs with ``FunctionModel`` on a local directory."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai", reason="pydantic-ai is not installed")

from pydantic_ai import Agent, RunContext
from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.workspaces import WorkspaceError

from fsseam import Workspace
from fsseam.integrations.pydantic_ai import FsseamToolset
from fsseam.integrations.pydantic_ai_workspace import FsseamWorkspace

from .call_ids import APPEND, APPENDED, NOTES, CallIds


def _workspace(tmp_path: Path, recorder: CallIds) -> Workspace:
    root = tmp_path / "root"
    root.mkdir()
    (root / "notes.txt").write_bytes(NOTES)
    return Workspace(str(root), plugins=[recorder], load_entry_points=False)


def _run(agent_of: Any, *turns: list[Any]) -> list[tuple[str, str, Any]]:
    """One agent run answering with ``turns``: each tool result as (call id, outcome,
    text)."""
    remaining = [*turns, [TextPart("Done.")]]

    async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=remaining.pop(0))

    result = asyncio.run(agent_of(FunctionModel(respond)).run("Work on the files."))
    return [(p.tool_call_id, p.outcome, p.content) for m in result.all_messages()
            for p in m.parts if isinstance(p, ToolReturnPart)]


def _call(tool: str, call_id: str, **args: Any) -> list[ToolCallPart]:
    return [ToolCallPart(tool, args, tool_call_id=call_id)]


# -- FsseamToolset ---------------------------------------------------------------------------


def _toolset_agent(ws: Workspace, owner: str) -> Any:
    toolset = FsseamToolset(ws, owner=owner)
    return lambda model: Agent(model, toolsets=[toolset])


def test_a_toolset_call_runs_as_its_tool_call_id(tmp_path: Path) -> None:
    recorder = CallIds()
    ws = _workspace(tmp_path, recorder)
    out = _run(_toolset_agent(ws, "agent"),
               _call("read", "call-r", file_path="/notes.txt"),
               _call("edit", "call-e", **APPEND),
               _call("write", "call-w", file_path="/new.txt", content="x\n"),
               _call("delete", "call-d", file_path="/new.txt"))
    assert [(i, o) for i, o, _ in out] == [("call-r", "success"), ("call-e", "success"),
                                           ("call-w", "success"), ("call-d", "success")]
    assert recorder.seen == [("/notes.txt", "call-e", "edit"), ("/new.txt", "call-w", "write"),
                             ("/new.txt", "call-d", "delete")]


def test_a_toolset_call_replayed_with_its_id_changes_nothing_twice(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, CallIds())
    notes = tmp_path / "root" / "notes.txt"
    agent, other = _toolset_agent(ws, "agent"), _toolset_agent(ws, "other")
    _run(other, _call("read", "o-1", file_path="/notes.txt"))
    first = _run(agent, _call("read", "a-1", file_path="/notes.txt"),
                 _call("edit", "a-2", **APPEND))
    assert notes.read_bytes() == APPENDED
    # Another writer's same change, against the version it read before: refused.
    theirs = _run(other, _call("edit", "o-2", **APPEND))
    assert theirs[0][1] == "failed" and str(theirs[0][2]).startswith("Error [FS_STALE]"), theirs
    assert notes.read_bytes() == APPENDED
    # A durable run replays the step: the same message, the same tool call id.
    again = _run(agent, _call("edit", "a-2", **APPEND))
    assert again == first[1:]
    assert notes.read_bytes() == APPENDED


# -- FsseamWorkspace (ctx.workspace) ---------------------------------------------------------


async def append_line(ctx: RunContext[None], path: str, line: str) -> str:
    """Append a line to a text file."""
    try:
        text = await ctx.workspace.read_text(path)
        await ctx.workspace.write_text(path, text + line + "\n")
    except (WorkspaceError, OSError) as e:
        raise ToolFailed(str(e)) from e
    return f"appended to {path}"


async def read_file(ctx: RunContext[None], path: str) -> str:
    """Read a text file."""
    text: str = await ctx.workspace.read_text(path)
    return text


async def write_file(ctx: RunContext[None], path: str, content: str) -> str:
    """Write a whole file."""
    try:
        await ctx.workspace.write_text(path, content)
    except (WorkspaceError, OSError) as e:
        raise ToolFailed(str(e)) from e
    return f"wrote {path}"


async def append_both(ctx: RunContext[None], first: str, second: str) -> str:
    """Append a line to each of two files: two changes in one call."""
    for path in (first, second):
        data = await ctx.workspace.read_bytes(path) if await ctx.workspace.exists(path) else b""
        await ctx.workspace.write_bytes(path, data + b"more\n")
    return "appended to both"


def _workspace_agent(ws: Workspace, owner: str) -> Any:
    capability = FsseamWorkspace(ws, owner=owner)
    tools = [append_line, read_file, write_file, append_both]
    return lambda model: Agent(model, tools=tools, capabilities=[capability])


def test_a_change_through_ctx_workspace_runs_as_its_tool_call(tmp_path: Path) -> None:
    recorder = CallIds()
    ws = _workspace(tmp_path, recorder)
    out = _run(_workspace_agent(ws, "agent"),
               _call("append_line", "call-1", path="/notes.txt", line="delta"),
               _call("append_both", "call-2", first="/a.txt", second="/b.txt"))
    assert [(i, o) for i, o, _ in out] == [("call-1", "success"), ("call-2", "success")]
    assert recorder.seen == [("/notes.txt", "call-1", "write"), ("/a.txt", "call-2", "write"),
                             ("/b.txt", "call-2#2", "write")]


def test_a_ctx_workspace_change_replayed_with_its_id_changes_nothing_twice(
        tmp_path: Path) -> None:
    ws = _workspace(tmp_path, CallIds())
    notes = tmp_path / "root" / "notes.txt"
    agent, other = _workspace_agent(ws, "agent"), _workspace_agent(ws, "other")
    assert _run(other, _call("read_file", "o-1", path="/notes.txt"))[0][1] == "success"
    first = _run(agent, _call("append_line", "a-1", path="/notes.txt", line="delta"))
    assert first[0][1] == "success"
    assert notes.read_bytes() == APPENDED
    # Another writer's same bytes, written over the version it read before: refused.
    theirs = _run(other, _call("write_file", "o-2", path="/notes.txt",
                               content=APPENDED.decode()))
    assert theirs[0][1] == "failed" and "FS_STALE" in str(theirs[0][2]), theirs
    assert notes.read_bytes() == APPENDED
    # A durable run replays the step: the tool reads and writes again, as the same call.
    again = _run(agent, _call("append_line", "a-1", path="/notes.txt", line="delta"))
    assert again == first
    assert notes.read_bytes() == APPENDED


def test_a_call_of_two_changes_replayed_makes_each_once(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, CallIds())
    root = tmp_path / "root"
    agent = _workspace_agent(ws, "agent")
    both = _call("append_both", "b-1", first="/a.txt", second="/b.txt")
    first = _run(agent, both)
    assert first[0][1] == "success", first
    assert (root / "a.txt").read_bytes() == (root / "b.txt").read_bytes() == b"more\n"
    # Replayed: the first change as b-1, the second as b-1#2, each already made.
    assert _run(agent, both) == first
    assert (root / "a.txt").read_bytes() == (root / "b.txt").read_bytes() == b"more\n"
    # A new call (another id) appends again.
    assert _run(agent, _call("append_both", "b-2", first="/a.txt", second="/b.txt")
                )[0][1] == "success"
    assert (root / "a.txt").read_bytes() == (root / "b.txt").read_bytes() == b"more\nmore\n"


def test_an_id_reused_for_another_file_is_refused(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, CallIds())
    root = tmp_path / "root"
    agent = _workspace_agent(ws, "agent")
    assert _run(agent, _call("append_line", "r-1", path="/notes.txt", line="delta")
                )[0][1] == "success"
    (root / "other.txt").write_bytes(b"x\n")
    reused = _run(agent, _call("append_line", "r-1", path="/other.txt", line="y"))
    assert reused[0][1] == "failed", reused
    assert "call id 'r-1' belongs to another call" in str(reused[0][2]), reused
    assert (root / "other.txt").read_bytes() == b"x\n"
    assert (root / "notes.txt").read_bytes() == APPENDED
