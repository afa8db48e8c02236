"""The Agents SDK's tool-call ids reach fsseam: a function tool's call runs as
``ToolContext.tool_call_id``; the hosted ``ApplyPatchTool`` hands its editor none. A call
run again with its id changes nothing twice; another writer's same change is FS_STALE.
Real runs with the SDK's ``ScriptedModel`` on a local directory."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "agents", reason="openai-agents is not installed: pip install -e '.[openai-agents]'"
)

from agents import Agent, RunConfig, Runner
from agents.testing import ScriptedModel, assistant_message, function_call

from fsseam import Workspace
from fsseam.integrations.openai_agents import fsseam_tools

from .call_ids import APPEND, APPENDED, NOTES, CallIds

NO_TRACING = RunConfig(tracing_disabled=True)


def _workspace(tmp_path: Path, recorder: CallIds) -> Workspace:
    root = tmp_path / "root"
    root.mkdir()
    (root / "notes.txt").write_bytes(NOTES)
    return Workspace(str(root), plugins=[recorder], load_entry_points=False)


def _call(name: str, call_id: str, **args: Any) -> Any:
    return function_call(name, args, call_id=call_id)


def _run(tools: list[Any], *turns: Any) -> list[tuple[str, str]]:
    """One run answering with ``turns``: each tool output as (call id, text)."""
    model = ScriptedModel([*turns, [assistant_message("Done.")]])
    agent = Agent(name="editor", model=model, tools=tools)
    result = asyncio.run(Runner.run(agent, "Edit the notes.", run_config=NO_TRACING))
    model.assert_complete()
    outputs = [item.raw_item for item in result.new_items if item.type == "tool_call_output_item"]
    return [(str(o["call_id"]), str(o["output"])) for o in outputs]


def test_a_function_tool_call_runs_as_its_tool_call_id(tmp_path: Path) -> None:
    recorder = CallIds()
    tools = fsseam_tools(_workspace(tmp_path, recorder), owner="agent", hosted=False)
    patch = ("*** Begin Patch\n*** Add File: /p.txt\n+p\n*** End Patch")
    out = _run(tools, [_call("read", "fc-r", file_path="/notes.txt")],
               [_call("edit", "fc-e", **APPEND)], [_call("apply_patch", "fc-p", patch=patch)])
    assert [i for i, _ in out] == ["fc-r", "fc-e", "fc-p"]
    assert recorder.seen == [("/notes.txt", "fc-e", "edit"), ("/p.txt", "fc-p", "apply_patch")]


def test_the_hosted_apply_patch_tool_hands_its_editor_no_call_id(tmp_path: Path) -> None:
    recorder = CallIds()
    tools = fsseam_tools(_workspace(tmp_path, recorder), owner="agent", names="openai",
                         hosted=True)
    op = {"type": "apply_patch_call", "call_id": "ap-1",
          "operation": {"type": "create_file", "path": "p.txt", "diff": "+p\n"}}
    out = _run(tools, [op])
    assert out[0][0] == "ap-1" and out[0][1].startswith("Success."), out
    # ApplyPatchOperation carries the run's context only: the change has no id (documented;
    # the function tool, hosted=False, has one).
    assert recorder.seen == [("/p.txt", None, "apply_patch")]


def test_a_function_tool_call_replayed_with_its_id_changes_nothing_twice(
        tmp_path: Path) -> None:
    ws = _workspace(tmp_path, CallIds())
    notes = tmp_path / "root" / "notes.txt"
    mine = fsseam_tools(ws, owner="agent", hosted=False)
    theirs = fsseam_tools(ws, owner="other", hosted=False)
    _run(theirs, [_call("read", "o-1", file_path="/notes.txt")])
    first = _run(mine, [_call("read", "a-1", file_path="/notes.txt")],
                 [_call("edit", "a-2", **APPEND)])
    assert notes.read_bytes() == APPENDED
    # Another writer's same change, against the version it read before: refused.
    refused = _run(theirs, [_call("edit", "o-2", **APPEND)])
    assert refused[0][1].startswith("Error [FS_STALE]"), refused
    assert notes.read_bytes() == APPENDED
    # A durable run (the SDK on Temporal) retries the step: the same call id.
    again = _run(mine, [_call("edit", "a-2", **APPEND)])
    assert again == first[1:], json.dumps(again)
    assert notes.read_bytes() == APPENDED
