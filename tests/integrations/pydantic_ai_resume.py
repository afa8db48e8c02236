"""The new process of tests/integrations/test_pydantic_ai_history.py: resumes conversations
from their JSON message histories, as a restarted service would.

``python pydantic_ai_resume.py SCENARIOS.json`` reads a list of scenarios (``root``: the
workspace, ``history``: a JSON history file or null, ``turns``: the scripted model's
turns as lists of tool calls, ``approve``: tool call ids to approve (edits need approval
then), ``per_run``) and
prints, per scenario, the tool results of the resumed run: [tool_call_id, outcome,
content].
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from fsseam import Workspace
from fsseam.integrations.pydantic_ai import FsseamToolset


def scripted(turns: list[list[dict[str, Any]]]) -> FunctionModel:
    remaining = [[ToolCallPart(c["tool"], c["args"], tool_call_id=c["id"]) for c in t]
                 for t in turns]

    async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=remaining.pop(0) if remaining else [TextPart("Done.")])

    return FunctionModel(respond)


def resume(scenario: dict[str, Any]) -> list[list[str]]:
    approved = scenario.get("approve") or []
    toolset = FsseamToolset(Workspace(scenario["root"]), per_run=scenario.get("per_run", False),
                            approve=["edit"] if approved else [])
    agent = Agent(scripted(scenario["turns"]), toolsets=[toolset],
                  output_type=[str, DeferredToolRequests])
    history = None
    if scenario["history"] is not None:
        history = ModelMessagesTypeAdapter.validate_json(Path(scenario["history"]).read_bytes())
    results = DeferredToolResults(approvals=dict.fromkeys(approved, True)) if approved else None
    result = asyncio.run(agent.run(None if approved else "Go on.", message_history=history,
                                   deferred_tool_results=results))
    return [[p.tool_call_id, p.outcome, str(p.content)] for m in result.new_messages()
            for p in m.parts if isinstance(p, ToolReturnPart)]


if __name__ == "__main__":
    scenarios = json.loads(Path(sys.argv[1]).read_text())
    print(json.dumps([resume(s) for s in scenarios]))
