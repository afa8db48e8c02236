"""Pydantic AI: what a conversation has read lives in its message history. Real agent runs
with Pydantic AI's FunctionModel; histories go through Pydantic AI's own JSON
(``ModelMessagesTypeAdapter``); one new process (pydantic_ai_resume.py) resumes several
conversations, as a restarted service would."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "pydantic_ai", reason="pydantic-ai is not installed: pip install -e '.[pydantic-ai]'"
)

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

from fsseam import ReadEvent, Workspace, hookimpl
from fsseam.integrations.pydantic_ai import FsseamToolset
from fsseam.integrations.pydantic_ai_history import HISTORY_KEY
from fsseam.observations import MemoryObservations

from .helpers import NOT_OBSERVED, retries, seed, stale, stored

DONE = [TextPart("Done.")]


def call(tool: str, call_id: str, **args: Any) -> dict[str, Any]:
    return {"tool": tool, "id": call_id, "args": {"file_path": "/config.toml", **args}}


READ = [call("read", "read")]


def edit(old: str, new: str, call_id: str = "edit") -> list[dict[str, Any]]:
    return [call("edit", call_id, old_string=old, new_string=new)]


def scripted(*turns: list[dict[str, Any]]) -> FunctionModel:
    remaining = [[ToolCallPart(c["tool"], c["args"], tool_call_id=c["id"]) for c in t]
                 for t in turns]

    async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=remaining.pop(0) if remaining else DONE)

    return FunctionModel(respond)


def chat(toolset: Any, *turns: list[dict[str, Any]], **kwargs: Any) -> Any:
    agent = Agent(scripted(*turns), toolsets=[toolset], output_type=[str, DeferredToolRequests])
    return asyncio.run(agent.run(kwargs.pop("prompt", "Go on."), **kwargs))


def outcomes(result: Any) -> list[tuple[str, str, str]]:
    return [(p.tool_call_id, p.outcome, str(p.content)) for m in result.new_messages()
            for p in m.parts if isinstance(p, ToolReturnPart)]


def as_json(messages: list[ModelMessage]) -> list[ModelMessage]:
    """Through Pydantic AI's JSON, as a service stores a conversation."""
    return ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(messages))


def change(ws: Workspace, content: str, path: str = "/config.toml") -> None:
    """An outside change: someone else reads the file and writes it."""
    person = ws.context("person")
    person.tools.execute("read", {"file_path": path})
    assert person.tools.execute("write", {"file_path": path, "content": content}).ok


def edited(new: str) -> str:
    return f"Edited /config.toml: replaced 1 occurrence at line 1.\n     1\t{new}"


class Readers:
    """Records which owner read which path."""

    def __init__(self) -> None:
        self.owners: list[str] = []

    @hookimpl
    def fs_read(self, event: ReadEvent) -> None:
        self.owners.append(event.owner)


@pytest.fixture
def ws() -> Workspace:
    ws = Workspace("memory://pydantic-ai-history", storage_options={"global_store": False})
    seed(ws)
    return ws


# -- in this process ---------------------------------------------------------------------------


def test_a_multi_turn_chat_keeps_its_reads_with_a_fresh_owner_per_run(ws: Workspace) -> None:
    toolset = FsseamToolset(ws, per_run=True)
    first = chat(toolset, READ)
    (read,) = first.new_messages()[2].parts
    # The read's version rides along as metadata; the model is shown fsseam's text only.
    assert isinstance(read, ToolReturnPart) and read.content == "     1\tretries = 1"
    assert set(read.metadata[HISTORY_KEY]["entries"]) == {"config.toml"}
    second = chat(toolset, edit("retries = 1", "retries = 2"),
                  message_history=as_json(first.all_messages()))
    assert outcomes(second) == [("edit", "success", edited("retries = 2"))]
    # A run given no history has read nothing, whatever the agent did before.
    alone = chat(toolset, edit("retries = 2", "retries = 3"))
    assert outcomes(alone) == [("edit", "failed", NOT_OBSERVED)]
    assert stored(ws) == b"retries = 2\n"


def test_two_conversations_of_one_agent_never_share_their_reads() -> None:
    readers = Readers()
    ws = Workspace("memory://pydantic-ai-two", storage_options={"global_store": False},
                   plugins=[readers])
    seed(ws)
    toolset = FsseamToolset(ws)
    one = chat(toolset, READ)
    other = chat(toolset, edit("retries = 1", "retries = 9"))
    assert outcomes(other) == [("edit", "failed", NOT_OBSERVED)]
    again = chat(toolset, edit("retries = 1", "retries = 2"),
                 message_history=one.all_messages())
    assert outcomes(again) == [("edit", "success", edited("retries = 2"))]
    owner = f"conversation/{one.all_messages()[0].conversation_id}"
    assert readers.owners == [owner]
    # Between runs the history holds the reads; the workspace keeps none of them.
    assert ws.policy is not None and ws.policy.store_for(owner).get(owner, "config.toml") is None
    assert one.all_messages()[0].conversation_id != other.all_messages()[0].conversation_id
    assert stored(ws) == b"retries = 2\n"


def test_the_calls_of_one_response_carry_every_read_they_made(ws: Workspace) -> None:
    """Pydantic AI runs one response's calls at once; what they record is written when the
    last ends, and the results between them carry all of it."""
    seed(ws, "/other.toml")
    both = [call("read", "one"), {**call("read", "two"), "args": {"file_path": "/other.toml"}}]
    first = chat(FsseamToolset(ws), both)
    carried = [set(p.metadata[HISTORY_KEY]["entries"]) for p in first.new_messages()[2].parts
               if p.metadata is not None]
    assert set().union(*carried) == {"config.toml", "other.toml"}
    edits = [*edit("retries = 1", "retries = 2", "e1"),
             {**edit("retries = 1", "retries = 4", "e2")[0],
              "args": {"file_path": "/other.toml", "old_string": "retries = 1",
                       "new_string": "retries = 4"}}]
    later = chat(FsseamToolset(ws), edits, message_history=as_json(first.all_messages()))
    assert [(c, o) for c, o, _ in outcomes(later)] == [("e1", "success"), ("e2", "success")]
    assert (stored(ws), stored(ws, "/other.toml")) == (b"retries = 2\n", b"retries = 4\n")


def test_two_runs_of_one_conversation_at_once_keep_their_own_reads(ws: Workspace) -> None:
    """Two runs continue one history at the same time (one conversation id): the second
    gets an owner of its own, so neither takes the other's reads."""
    toolset = FsseamToolset(ws)
    start = chat(toolset, prompt="Start.")
    history = start.all_messages()

    async def both() -> tuple[Any, Any]:
        a_has_read, b_has_edited = asyncio.Event(), asyncio.Event()

        def turns(*steps: Any) -> FunctionModel:
            remaining = list(steps)

            async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
                step = remaining.pop(0) if remaining else DONE
                parts = await step() if callable(step) else step
                return ModelResponse(parts=[ToolCallPart(c["tool"], c["args"],
                                                         tool_call_id=c["id"]) for c in parts]
                                     if parts is not DONE else parts)

            return FunctionModel(respond)

        async def a_edits() -> list[dict[str, Any]]:  # once b has tried
            a_has_read.set()
            await asyncio.wait_for(b_has_edited.wait(), 30)
            return edit("retries = 1", "retries = 2", "a")

        async def b_edits() -> list[dict[str, Any]]:  # while a runs, after its read
            await asyncio.wait_for(a_has_read.wait(), 30)
            return edit("retries = 1", "retries = 3", "b")

        async def b_done() -> list[TextPart]:
            b_has_edited.set()
            return DONE

        run_a = Agent(turns(READ, a_edits), toolsets=[toolset]).run(
            "A.", message_history=history)
        run_b = Agent(turns(b_edits, b_done), toolsets=[toolset]).run(
            "B.", message_history=history)
        return await asyncio.gather(run_a, run_b)

    a, b = asyncio.run(both())
    assert outcomes(b) == [("b", "failed", NOT_OBSERVED)]
    assert outcomes(a)[1] == ("a", "success", edited("retries = 2"))
    assert stored(ws) == b"retries = 2\n"


def test_a_history_carries_the_reads_only_as_far_as_it_goes(ws: Workspace) -> None:
    toolset = FsseamToolset(ws)
    first = chat(toolset, READ)
    # The same conversation, its tool results dropped (a summarised or truncated history).
    kept = [m for m in first.all_messages()
            if not any(isinstance(p, ToolReturnPart) for p in m.parts)]
    later = chat(toolset, edit("retries = 1", "retries = 2"), message_history=kept)
    assert outcomes(later) == [("edit", "failed", NOT_OBSERVED)]
    assert stored(ws) == b"retries = 1\n"


def test_a_stale_refusal_travels_as_the_read_it_counts_as(ws: Workspace) -> None:
    toolset = FsseamToolset(ws)
    first = chat(toolset, READ)
    change(ws, "retries = 2\n")
    refused = chat(toolset, edit("retries = 1", "retries = 5"),
                   message_history=as_json(first.all_messages()))
    assert outcomes(refused) == [("edit", "failed", stale(retries(1, 2)))]
    # The refusal showed the current version: the next turn, in a later run, edits it unread.
    retried = chat(toolset, edit("retries = 2", "retries = 5", "again"),
                   message_history=as_json(refused.all_messages()))
    assert outcomes(retried) == [("again", "success", edited("retries = 5"))]
    assert stored(ws) == b"retries = 5\n"


def test_a_corrupt_or_foreign_history_entry_is_refused(ws: Workspace) -> None:
    toolset = FsseamToolset(ws)
    messages = chat(toolset, READ).all_messages()
    (read,) = messages[2].parts
    assert isinstance(read, ToolReturnPart)
    read.metadata[HISTORY_KEY]["format"] = 99
    with pytest.raises(ValueError, match="have format 99; this fsseam reads format 1"):
        chat(toolset, edit("retries = 1", "retries = 2"), message_history=messages)
    read.metadata[HISTORY_KEY] = {"format": 1, "workspace": ws.url, "entries": {"k": "v"}}
    with pytest.raises(ValueError, match="are corrupt"):
        chat(toolset, edit("retries = 1", "retries = 2"), message_history=messages)
    assert stored(ws) == b"retries = 1\n"


def test_an_approval_applies_after_json_and_not_to_a_changed_file(
    fsseam_s3_workspace: Workspace,
) -> None:
    ws = fsseam_s3_workspace
    seed(ws)
    for outside, expected in ((None, "retries = 2\n"), ("retries = 7\n", "retries = 7\n")):
        change(ws, "retries = 1\n")
        toolset = FsseamToolset(ws, approve=["edit"])
        asked = chat(toolset, READ, edit("retries = 1", "retries = 2"))
        assert isinstance(asked.output, DeferredToolRequests)
        assert [c.tool_call_id for c in asked.output.approvals] == ["edit"]
        if outside is not None:
            change(ws, outside)
        history = as_json(asked.all_messages())
        done = chat(FsseamToolset(ws, approve=["edit"]), message_history=history, prompt=None,
                    deferred_tool_results=DeferredToolResults(approvals={"edit": True}))
        ((call_id, outcome, _),) = outcomes(done)
        assert (call_id, outcome) == ("edit", "success" if outside is None else "failed")
        assert stored(ws) == expected.encode()


def test_a_fixed_owner_keeps_its_observations_in_the_workspace(ws: Workspace) -> None:
    toolset = FsseamToolset(ws, owner="agent")
    chat(toolset, READ)
    # No history given: one owner for every run, as before.
    assert outcomes(chat(toolset, edit("retries = 1", "retries = 2")))[0][1] == "success"
    assert (toolset.owner, FsseamToolset(ws).owner) == ("agent", "conversation")


@dataclass
class Deps:
    seen: MemoryObservations


def test_observations_may_live_in_the_deps(ws: Workspace) -> None:
    toolset = FsseamToolset(ws, observations=lambda ctx: ctx.deps.seen)
    deps = Deps(MemoryObservations())
    first = chat(toolset, READ, deps=deps)
    assert [p.metadata for p in first.new_messages()[2].parts] == [None]
    assert (deps.seen.owners(), list(deps.seen.entries("agent"))) == (["agent"], ["config.toml"])
    # The same deps, no history: the read counts; other deps have read nothing.
    assert outcomes(chat(toolset, edit("retries = 1", "retries = 2"), deps=deps)) == [
        ("edit", "success", edited("retries = 2"))]
    assert outcomes(chat(toolset, edit("retries = 2", "retries = 3"),
                         deps=Deps(MemoryObservations()))) == [("edit", "failed", NOT_OBSERVED)]
    assert stored(ws) == b"retries = 2\n"
    # A named owner there: the same store, that name.
    named = FsseamToolset(ws, owner="alice", observations=lambda ctx: ctx.deps.seen)
    chat(named, READ, deps=deps)
    assert deps.seen.owners() == ["agent", "alice"]
    with pytest.raises(TypeError, match="observations= binds a context per run"):
        FsseamToolset(ws.context("c"), observations=lambda ctx: ctx.deps.seen)


# -- in a new process ---------------------------------------------------------------------------


def test_conversations_resume_in_a_new_process(tmp_path: Path) -> None:
    """One process reads and asks for approvals; a new one resumes each conversation from
    its JSON history: approvals apply, a changed file is refused, a chat keeps its reads,
    and a conversation that never read the file cannot edit it."""
    root = tmp_path / "ws"
    root.mkdir()
    ws = Workspace(str(root))
    paths = {name: f"/{name}.toml" for name in ("approve", "changed", "chat")}
    for path in paths.values():
        seed(ws, path)

    def at(name: str, turn: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{**c, "args": {**c["args"], "file_path": paths[name]}} for c in turn]

    def save(name: str, result: Any) -> str:
        file = tmp_path / f"{name}.json"
        file.write_bytes(ModelMessagesTypeAdapter.dump_json(result.all_messages()))
        return str(file)

    asking = FsseamToolset(ws, approve=["edit"])
    histories = {
        name: save(name, chat(asking, at(name, READ), at(name, edit("retries = 1", "retries = 2"))))
        for name in ("approve", "changed")
    }
    histories["chat"] = save("chat", chat(FsseamToolset(ws, per_run=True), at("chat", READ)))
    histories["other"] = save("other", chat(FsseamToolset(ws), at("approve", READ)))
    change(ws, "retries = 7\n", paths["changed"])  # while nobody runs
    scenarios = [
        {"history": histories["approve"], "turns": [], "approve": ["edit"]},
        {"history": histories["changed"], "turns": [], "approve": ["edit"]},
        {"history": histories["chat"], "per_run": True,
         "turns": [at("chat", edit("retries = 1", "retries = 3"))]},
        {"history": histories["other"],
         "turns": [at("chat", edit("retries = 3", "retries = 4", "other"))]},
        {"history": None, "turns": [at("chat", edit("retries = 3", "retries = 5", "new"))]},
    ]
    spec = tmp_path / "scenarios.json"
    spec.write_text(json.dumps([{**s, "root": str(root)} for s in scenarios]))
    script = Path(__file__).with_name("pydantic_ai_resume.py")
    out = subprocess.run([sys.executable, str(script), str(spec)], capture_output=True,
                         text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    approve, changed, chat_on, other, new = json.loads(out.stdout)
    assert approve == [["edit", "success", edited("retries = 2").replace("config", "approve")]]
    assert changed[0][:2] == ["edit", "failed"]
    assert changed[0][2].startswith("Error [FS_STALE]: /changed.toml has changed since")
    assert chat_on == [["edit", "success", edited("retries = 3").replace("config", "chat")]]
    refused = NOT_OBSERVED.replace("config", "chat")
    assert (other, new) == ([["other", "failed", refused]], [["new", "failed", refused]])
    assert [stored(ws, p) for p in paths.values()] == [
        b"retries = 2\n", b"retries = 7\n", b"retries = 3\n"]
