"""Every framework's surface on the one tool-run path: a read-only workspace offers the
model no tool that modifies (Pydantic AI's toolset, the Agents SDK's tool list, as MCP
serves), and a stray failure reads as the registry says it, in each framework's form.
Real runs with each framework's offline model."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest

from fsseam import Workspace, WriteIntent, hookimpl

# What the integrations offer by default on a read-only workspace: the tools of their
# default that modify nothing (history lists versions; restore is left out).
READ_TOOLS = ["read", "ls", "glob", "grep", "history"]


def _memory(**kwargs: Any) -> Workspace:
    return Workspace(f"memory://surfaces-{uuid.uuid4().hex[:12]}",
                     storage_options={"global_store": False}, **kwargs)


class Refuses:
    """A plugin whose write hook fails as a broken store or a runaway recursion would."""

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    @hookimpl
    def fs_write_intent(self, event: WriteIntent) -> None:
        raise self.exc


# -- Pydantic AI -----------------------------------------------------------------------------


def _pydantic_ai_offers(toolset: Any) -> list[str]:
    """The names of the tools the model is given in one agent run."""
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    seen: list[str] = []

    async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.extend(t.name for t in info.function_tools)
        return ModelResponse(parts=[TextPart("Done.")])

    asyncio.run(Agent(FunctionModel(respond), toolsets=[toolset]).run("Look around."))
    return seen


def test_a_read_only_pydantic_ai_toolset_offers_only_read_tools() -> None:
    pytest.importorskip("pydantic_ai", reason="pydantic-ai is not installed")
    from fsseam.integrations.pydantic_ai import DEFAULT_TOOLS, FsseamToolset

    assert _pydantic_ai_offers(FsseamToolset(_memory(read_only=True))) == READ_TOOLS
    assert _pydantic_ai_offers(FsseamToolset(_memory())) == list(DEFAULT_TOOLS)
    asked = FsseamToolset(_memory(read_only=True), names=["write", "history", "read", "edit"])
    assert _pydantic_ai_offers(asked) == ["history", "read"]
    per_run = FsseamToolset(_memory(read_only=True), per_run=True)
    assert _pydantic_ai_offers(per_run) == READ_TOOLS


# -- the OpenAI Agents SDK -------------------------------------------------------------------


def _agents_offers(tools: list[Any]) -> list[str]:
    """The names of the tools the model is given in one ``Runner`` run."""
    from agents import Agent, RunConfig, Runner
    from agents.testing import ScriptedModel, assistant_message

    model = ScriptedModel([[assistant_message("Done.")]])
    agent = Agent(name="reader", model=model, tools=tools)
    asyncio.run(Runner.run(agent, "Look around.", run_config=RunConfig(tracing_disabled=True)))
    return [t.name for t in model.first_call.tools]


def test_a_read_only_agents_sdk_tool_list_offers_only_read_tools() -> None:
    pytest.importorskip("agents", reason="openai-agents is not installed")
    from fsseam.integrations.openai_agents import (
        DEFAULT_FUNCTION_TOOLS,
        fsseam_tools,
        function_tools,
    )

    read_only = _memory(read_only=True)
    assert _agents_offers(fsseam_tools(read_only)) == READ_TOOLS
    assert _agents_offers(fsseam_tools(_memory())) == list(DEFAULT_FUNCTION_TOOLS)
    ctx = read_only.context("a")
    assert [t.name for t in function_tools(ctx, ["move", "grep", "write"])] == ["grep"]


def test_the_agents_sdk_editor_answers_as_the_native_apply_patch_call() -> None:
    pytest.importorskip("agents", reason="openai-agents is not installed")
    from agents.editor import ApplyPatchOperation

    from fsseam.integrations.openai_agents import FsseamEditor

    ws = _memory(plugins=[Refuses(PermissionError(13, "denied"))])
    op = {"type": "create_file", "path": "new.txt", "diff": "+x\n"}
    native = ws.context("native").tools.handle(
        {"type": "apply_patch_call", "call_id": "c", "operation": op})
    done = FsseamEditor(ws).apply(ApplyPatchOperation(**op))  # type: ignore[arg-type]
    assert native["status"] == done.status == "failed"
    assert done.output == native["output"]
    assert "FS_PERMISSION_DENIED" in done.output and "/new.txt" in done.output


# -- deepagents ------------------------------------------------------------------------------


@pytest.mark.parametrize("exc", [PermissionError(13, "denied"), RecursionError()],
                         ids=["oserror", "recursion"])
def test_a_stray_failure_of_deepagents_reads_as_the_registry_says(exc: BaseException) -> None:
    """Before the one ladder, a RecursionError left deepagents' backend as an exception."""
    pytest.importorskip("deepagents", reason="deepagents is not installed")
    from deepagents.backends.protocol import WriteResult

    from fsseam.integrations.deepagents import FsseamBackend

    ws = _memory(plugins=[Refuses(exc)])
    direct = ws.context("direct").tools.execute(
        "write", {"file_path": "/new.txt", "content": "x\n"})
    assert not direct.ok
    assert FsseamBackend(ws).write("/new.txt", "x\n") == WriteResult(error=direct.text)
