"""Each framework integration on a branch workspace, with the framework's own offline
model: one run reads, a later run (a new integration object over the branch opened again
by name, what a restarted service does) edits from the read its framework state kept
(Pydantic AI's message history as JSON, the Agents SDK's run context, LangGraph's
checkpoint). Main's bytes are exact until ``ws.merge`` publishes the branch's."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from fsseam import Workspace

from .helpers import seed, stored

EDITED = "Edited /config.toml: replaced 1 occurrence at line 1.\n     1\tretries = 3"


def on_branch(root: Path) -> Workspace:
    """Branch feat of the workspace at ``root``, opened by name (as another process
    would)."""
    return Workspace(str(root), branch="feat")


def merged(root: Path) -> None:
    """Main unchanged until the review's merge, then exactly the branch's bytes."""
    ws = Workspace(str(root))
    assert stored(ws) == b"retries = 1\n"
    assert stored(on_branch(root)) == b"retries = 3\n"
    review = ws.diff("feat")
    assert [(f.path, f.change, f.owner is not None) for f in review.files] == [
        ("/config.toml", "changed", True)]
    outcome = ws.merge("feat", owner="reviewer", expect=review.token)
    assert (outcome.ok, outcome.published) == (True, ["/config.toml"]), outcome.text
    assert stored(ws) == b"retries = 3\n"
    assert (root / "config.toml").read_bytes() == b"retries = 3\n"


def test_pydantic_ai_on_a_branch_resumed_from_its_json_history(root: Path) -> None:
    pytest.importorskip("pydantic_ai", reason="pydantic-ai is not installed")
    from pydantic_ai import Agent
    from pydantic_ai.messages import (
        ModelMessage,
        ModelMessagesTypeAdapter,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from fsseam.integrations.pydantic_ai import FsseamToolset

    def model(*turns: list[Any]) -> FunctionModel:
        remaining = [*turns, [TextPart("Done.")]]

        async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            return ModelResponse(parts=remaining.pop(0))

        return FunctionModel(respond)

    seed(Workspace(str(root)))
    read = [ToolCallPart("read", {"file_path": "/config.toml"}, tool_call_id="r")]
    first = asyncio.run(Agent(model(read), toolsets=[FsseamToolset(on_branch(root))]).run(
        "Read the config."))
    saved = ModelMessagesTypeAdapter.dump_json(first.all_messages())

    edit = [ToolCallPart("edit", {"file_path": "/config.toml", "old_string": "retries = 1",
                                  "new_string": "retries = 3"}, tool_call_id="e")]
    second = asyncio.run(Agent(model(edit), toolsets=[FsseamToolset(on_branch(root))]).run(
        "Edit it.", message_history=ModelMessagesTypeAdapter.validate_json(saved)))
    (done,) = [p for m in second.new_messages() for p in m.parts
               if isinstance(p, ToolReturnPart)]
    assert (done.outcome, done.content) == ("success", EDITED)
    merged(root)


def test_openai_agents_on_a_branch_keep_their_reads_in_the_run_context(root: Path) -> None:
    pytest.importorskip("agents", reason="openai-agents is not installed")
    from agents import Agent, RunConfig, Runner
    from agents.testing import ScriptedModel, assistant_message, function_call

    from fsseam.integrations.openai_agents import fsseam_tools

    def turn(ws: Workspace, step: Any, context: dict[str, Any]) -> list[Any]:
        model = ScriptedModel([[step], [assistant_message("Done.")]])
        agent = Agent(name="editor", model=model, tools=fsseam_tools(ws, names=["read", "edit"]))
        result = asyncio.run(Runner.run(agent, "Edit the config.", context=context,
                                        run_config=RunConfig(tracing_disabled=True)))
        return [i.raw_item["output"] for i in result.new_items
                if i.type == "tool_call_output_item"]

    seed(Workspace(str(root)))
    conversation: dict[str, Any] = {}
    assert turn(on_branch(root), function_call("read", {"file_path": "/config.toml"},
                                               call_id="r"), conversation) == [
        "     1\tretries = 1"]
    edit = function_call("edit", {"file_path": "/config.toml", "old_string": "retries = 1",
                                  "new_string": "retries = 3"}, call_id="e")
    assert turn(on_branch(root), edit, conversation) == [EDITED]
    merged(root)


def test_deepagents_on_a_branch_resumed_from_its_checkpoint(root: Path) -> None:
    pytest.importorskip("deepagents", reason="deepagents is not installed")
    from langgraph.checkpoint.memory import InMemorySaver

    from fsseam.integrations.deepagents import FsseamBackend

    from . import deepagents_process as proc

    seed(Workspace(str(root)))
    checkpointer = InMemorySaver()

    def go(ws: Workspace, step: Any) -> list[list[str]]:
        agent = proc.agent(FsseamBackend(ws), [step], checkpointer)
        before = len(agent.get_state(proc.thread("T")).values.get("messages", []))
        result = agent.invoke({"messages": [{"role": "user", "content": "Go."}]},
                              proc.thread("T"))
        return proc.tool_results(result["messages"][before:])

    assert go(on_branch(root), proc.read("/config.toml"))[0][0] == "success"
    edit = proc.edit("/config.toml", "retries = 1", "retries = 3")
    assert go(on_branch(root), edit) == [
        ["success", "Successfully replaced 1 instance(s) of the string in '/config.toml'"]]
    merged(root)
