"""Pydantic AI's own workspace on fsseam: Pydantic AI's conformance suite for workspace
backends, and real agent runs (FunctionModel) whose file tools use ``ctx.workspace`` only,
on memory and the moto S3 server; the stored bytes are asserted after every run."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "pydantic_ai.workspaces", reason="pydantic-ai-slim 2.68+ is not installed: pip install -e "
    "'.[pydantic-ai]'"
)

from pydantic_ai import Agent, RunContext
from pydantic_ai.exceptions import ToolFailed, UserError
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.workspaces import ReadOnlyWorkspace, WorkspaceError, WorkspaceRef
from pydantic_ai.workspaces import Workspace as AgentWorkspace
from pydantic_ai.workspaces.conformance import WorkspaceBackendSuite

from fsseam import Workspace
from fsseam.integrations.pydantic_ai_workspace import (
    FsseamWorkspace,
    FsseamWorkspaceBackend,
    FsseamWorkspaceError,
)

from .helpers import make_workspace, seed, stored


class TestConformance(WorkspaceBackendSuite):
    """Pydantic AI's own rules for a backend (the command rules skip: no commands)."""

    @pytest.fixture
    def anyio_backend(self) -> str:
        return "asyncio"

    @pytest.fixture
    def backend(self) -> FsseamWorkspaceBackend:
        return FsseamWorkspaceBackend(Workspace("memory://conformance",
                                                storage_options={"global_store": False}))

    @pytest.fixture
    def has_real_posix_shell(self) -> bool:
        return False  # no shell to make symlinks or FIFOs with


# -- file tools written against Pydantic AI's workspace API ------------------------------------


async def read_file(ctx: RunContext[None], path: str) -> str:
    """Read a text file."""
    return await _refused_as_failed(ctx.workspace.read_text(path))


async def write_file(ctx: RunContext[None], path: str, content: str) -> str:
    """Write a whole file."""
    await _refused_as_failed(ctx.workspace.write_bytes(path, content.encode()))
    return f"wrote {path}"


async def edit_file(ctx: RunContext[None], path: str, old: str, new: str) -> str:
    """Replace text in a file."""
    text = await _refused_as_failed(ctx.workspace.read_text(path))
    await _refused_as_failed(ctx.workspace.write_text(path, text.replace(old, new, 1)))
    return f"edited {path}"


async def _refused_as_failed(call: Any) -> Any:
    try:
        return await call
    except (WorkspaceError, OSError) as e:
        raise ToolFailed(str(e)) from e


def agent_run(source: Workspace, *turns: list[Any], owner: str | None = "agent") -> list[Any]:
    remaining = [*turns, [TextPart("Done.")]]

    async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=remaining.pop(0))

    agent = Agent(FunctionModel(respond), tools=[read_file, write_file, edit_file],
                  capabilities=[FsseamWorkspace(source, owner=owner)])
    result = asyncio.run(agent.run("Work on the files."))
    return [(p.tool_call_id, p.outcome, p.content) for m in result.all_messages()
            for p in m.parts if isinstance(p, ToolReturnPart)]


def call(tool: str, call_id: str, **args: Any) -> list[ToolCallPart]:
    return [ToolCallPart(tool, args, tool_call_id=call_id)]


@pytest.mark.parametrize("kind", ["memory", "s3"])
def test_pydantic_ais_file_tools_run_on_the_store(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    ws = make_workspace(kind, request, tmp_path)
    seed(ws)
    out = agent_run(ws, call("read_file", "r", path="config.toml"),
                    call("edit_file", "e", path="/config.toml", old="1", new="3"),
                    call("write_file", "w", path="/notes/raw.txt", content="foo\r\nbar"))
    assert out == [("r", "success", "retries = 1\n"), ("e", "success", "edited /config.toml"),
                   ("w", "success", "wrote /notes/raw.txt")]
    assert stored(ws) == b"retries = 3\n"
    assert stored(ws, "/notes/raw.txt") == b"foo\r\nbar"  # exactly the bytes written


def test_a_write_of_a_file_never_read_or_changed_since_is_refused(
    fsseam_s3_workspace: Workspace,
) -> None:
    ws = fsseam_s3_workspace
    seed(ws)
    (unread,) = agent_run(ws, call("write_file", "w", path="/config.toml", content="x = 1\n"))
    assert unread[:2] == ("w", "failed")
    assert unread[2].startswith("Error [FS_NOT_OBSERVED]: /config.toml")
    assert stored(ws) == b"retries = 1\n"

    async def someone_edits() -> list[ToolCallPart]:
        other = ws.context("person")
        other.tools.execute("read", {"file_path": "/config.toml"})
        assert other.tools.execute("edit", {"file_path": "/config.toml",
                                            "old_string": "1", "new_string": "2"}).ok
        return call("write_file", "w", path="/config.toml", content="retries = 9\n")

    remaining: list[Any] = [call("read_file", "r", path="/config.toml"), someone_edits,
                            [TextPart("Done.")]]

    async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        turn = remaining.pop(0)
        return ModelResponse(parts=await turn() if callable(turn) else turn)

    agent = Agent(FunctionModel(respond), tools=[read_file, write_file],
                  capabilities=[FsseamWorkspace(ws, owner="agent")])
    result = asyncio.run(agent.run("Go."))
    stale = next(p for m in result.all_messages() for p in m.parts
             if isinstance(p, ToolReturnPart) and p.tool_call_id == "w")
    assert stale.outcome == "failed"
    assert stale.content.startswith("Error [FS_STALE]: /config.toml has changed since you last "
                                    "read it, so your write was not applied.")
    assert stored(ws) == b"retries = 2\n"


def test_what_the_backend_maps_and_refuses(ws_memory: Workspace) -> None:
    backend = FsseamWorkspaceBackend(ws_memory, owner="a")
    workspace = AgentWorkspace(backend)
    assert backend.ref == WorkspaceRef(provider="fsseam", id=ws_memory.url)

    async def scenario() -> None:
        await workspace.write_bytes("/d/a.bin", b"\x00\xff")
        assert await workspace.read_bytes("d/a.bin") == b"\x00\xff"
        with pytest.raises(UserError, match="does not support command execution"):
            await workspace.run(["ls"])
        with pytest.raises(FileNotFoundError):
            await workspace.read_bytes("/missing")
        with pytest.raises(IsADirectoryError):
            await workspace.read_bytes("/d")
        with pytest.raises(ValueError):
            await workspace.remove("/")
        # Another owner never read the file: its remove and its write are refused.
        other = AgentWorkspace(FsseamWorkspaceBackend(ws_memory, owner="b"))
        with pytest.raises(FsseamWorkspaceError) as refused:
            await other.remove("/d")
        assert refused.value.code == "FS_NOT_OBSERVED"
        with pytest.raises(FsseamWorkspaceError):
            await other.write_bytes("/d/a.bin", b"x")
        await workspace.make_dir("/empty/sub")
        assert [e.name for e in await workspace.list_dir("/")] == ["d", "empty"]
        await workspace.remove("/d")

    asyncio.run(scenario())
    assert [e.path for e in ws_memory.context("x").fs.walk("/")] == []


def test_a_read_only_workspace_is_pydantic_ais_read_only_workspace() -> None:
    ws = Workspace("memory://ro", storage_options={"global_store": False}, read_only=True)
    capability = FsseamWorkspace(ws)
    chosen = capability.get_workspace(_context(), ref=None)
    assert isinstance(chosen, ReadOnlyWorkspace) and chosen.read_only
    assert capability.get_workspace(_context(), ref=WorkspaceRef(provider="x", id="y")) is None


def _context() -> RunContext[None]:
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.usage import RunUsage

    return RunContext(deps=None, model=TestModel(), usage=RunUsage())


@pytest.fixture
def ws_memory() -> Workspace:
    return Workspace("memory://pa-workspace", storage_options={"global_store": False})
