"""fsseam's tools as DBOS steps, in this process (SQLite system database in a temporary
directory): what a step records, the call id it runs under, and where the owner's
observations live (the workflow's state, never this process's memory). The crash test is
tests/integrations/test_dbos_crash.py."""

from __future__ import annotations

import asyncio
import json
import uuid
import warnings
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

pytest.importorskip("dbos", reason="dbos is not installed: pip install -e '.[dbos]'")
pytest.importorskip("pydantic_ai", reason="pydantic-ai is not installed: pip install -e "
                    "'.[pydantic-ai]'")

from dbos import DBOS, SetWorkflowID
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from fsseam import ErrorCode, Workspace
from fsseam.integrations.dbos import DurableTools
from fsseam.integrations.pydantic_ai import FsseamToolset
from fsseam.integrations.pydantic_ai_dbos import HISTORY_KEY, DBOSFsseamToolset
from fsseam.observations.sealing import SEAL_FIELD

T = TypeVar("T")

TOOLS: dict[str, DurableTools] = {}
"""The DurableTools each workflow run uses, by a name the test gives it."""

APPEND = {"file_path": "/a.txt", "old_string": "one\n", "new_string": "one\ntwo\n"}


@DBOS.workflow(name="fsseam_test_calls")
def calls(tools: str, plan: list[tuple[str, dict[str, Any]]], seen: dict[str, Any]
          ) -> dict[str, Any]:
    """Each call of ``plan`` through ``TOOLS[tools]``; returns the answers and ``seen``."""
    answers = []
    for name, args in plan:
        result = TOOLS[tools].call(name, args, seen)
        answers.append({"ok": result.ok, "text": result.text,
                        "code": None if result.error is None else result.error.code.value})
    return {"answers": answers, "seen": seen}


def _script(plan: list[tuple[str, dict[str, Any]]]) -> FunctionModel:
    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        done = sum(1 for m in messages for p in m.parts if p.part_kind == "tool-return")
        if done == len(plan):
            return ModelResponse(parts=[TextPart("done")])
        name, args = plan[done]
        return ModelResponse(parts=[ToolCallPart(name, args, tool_call_id=f"c{done}")])

    return FunctionModel(model)


AGENTS: dict[str, Any] = {}
"""The agents the workflows below run (made before DBOS launches)."""


@DBOS.workflow(name="fsseam_test_durability")
async def durable_run(prompt: str) -> list[str | None]:
    """A run of the agent with Pydantic AI's DBOSDurability capability, in a workflow of
    ours (as that capability asks); returns the outcome of each tool result."""
    result = await AGENTS["durability"].run(prompt)
    return [p.outcome for m in result.all_messages() for p in m.parts
            if p.part_kind == "tool-return"]


def _agent(root: Path) -> Any:
    from pydantic_ai.durable_exec.dbos import DBOSAgent

    plan = [("read", {"file_path": "/a.txt"}), ("edit", APPEND)]
    toolset = DBOSFsseamToolset(FsseamToolset(Workspace(str(root)), names="read,edit"),
                                owner="fixer")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DBOSAgent is deprecated for DBOSDurability
        return DBOSAgent(Agent(_script(plan), name="fsseam_test_agent", toolsets=[toolset]))


def _durability_agent(base: Path) -> Any:
    from pydantic_ai.durable_exec.dbos import DBOSDurability

    root = base / "durability-root"
    root.mkdir()
    (root / "a.txt").write_bytes(b"one\n")
    plan = [("read", {"file_path": "/a.txt"}), ("edit", APPEND)]
    toolset = DBOSFsseamToolset(FsseamToolset(Workspace(str(root)), names="read,edit"),
                                owner="fixer")
    agent = Agent(_script(plan), name="fsseam_test_durable", toolsets=[toolset],
                  capabilities=[DBOSDurability()])
    AGENTS["durability-root"] = root
    return agent


@pytest.fixture(scope="module")
def launched(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    base = tmp_path_factory.mktemp("dbos")
    agent_root = base / "agent-root"
    agent_root.mkdir()
    (agent_root / "a.txt").write_bytes(b"one\n")
    DBOS(config={"name": "fsseam-test", "system_database_url": f"sqlite:///{base / 'db'}",
                 "log_level": "WARNING"})
    agent = _agent(agent_root)  # before launch: DBOS registers its workflows
    AGENTS["durability"] = _durability_agent(base)
    DBOS.launch()
    try:
        yield agent, agent_root
    finally:
        DBOS.destroy(destroy_registry=True)


def _in_workflow(workflow: str, run: Callable[[], Awaitable[T]]) -> T:
    """``run()`` awaited under the workflow id ``workflow``, on a loop of its own that is
    closed after (``run_sync`` would leave one open in every thread it ran in)."""
    async def under_id() -> T:
        with SetWorkflowID(workflow):
            return await run()

    return asyncio.run(under_id())


def _run(tools: DurableTools, plan: list[tuple[str, dict[str, Any]]],
         seen: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    name = uuid.uuid4().hex
    TOOLS[name] = tools
    workflow = f"wf-{name}"
    with SetWorkflowID(workflow):
        out = calls(name, plan, {} if seen is None else seen)
    return workflow, out


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_bytes(b"one\n")
    return tmp_path


def test_each_call_is_a_step_named_for_its_tool_whose_output_is_json(
    launched: Any, root: Path,
) -> None:
    tools = DurableTools(Workspace(str(root)), owner="fixer")
    workflow, out = _run(tools, [("read", {"file_path": "/a.txt"}), ("edit", APPEND)])
    assert [a["ok"] for a in out["answers"]] == [True, True]
    steps = DBOS.list_workflow_steps(workflow)
    assert [s["function_name"] for s in steps] == ["fsseam.read", "fsseam.edit"]
    recorded = [s["output"] for s in steps]
    # JSON as it is (a portable serializer keeps it), the answer's text and facts.
    assert json.loads(json.dumps(recorded)) == recorded
    assert [r["result"]["text"] for r in recorded] == [a["text"] for a in out["answers"]]
    assert recorded[1]["result"]["ok"] is True and recorded[1]["result"]["tool"] == "edit"
    # What each call recorded travels in its output, sealed: the read's observation.
    assert set(recorded[0]["observations"]) == {"a.txt"}
    assert SEAL_FIELD in recorded[0]["observations"]["a.txt"]
    assert (root / "a.txt").read_bytes() == b"one\ntwo\n"


def test_the_call_id_is_the_workflow_and_the_step(launched: Any, root: Path) -> None:
    ws = Workspace(str(root))
    workflow, out = _run(DurableTools(ws, owner="fixer"),
                         [("read", {"file_path": "/a.txt"}), ("edit", APPEND)])
    step = DBOS.list_workflow_steps(workflow)[1]["function_id"]
    # The edit run again under the id its step ran under (as a recovery runs it): the
    # same answer, and the line is not appended twice.
    again = ws.context("fixer").tools.execute("edit", APPEND,
                                              call_id=f"dbos:{workflow}:{step}")
    assert again.ok and again.text == out["answers"][1]["text"]
    assert (root / "a.txt").read_bytes() == b"one\ntwo\n"


def test_observations_live_in_the_workflow_state_not_in_this_process(
    launched: Any, root: Path,
) -> None:
    ws = Workspace(str(root))
    _, out = _run(DurableTools(ws, owner="fixer"), [("read", {"file_path": "/a.txt"})])
    assert set(out["seen"]) == {"a.txt"}
    # The workspace's own store learnt nothing: the read is the workflow's alone.
    assert ws.policy is not None
    assert ws.policy.store.get("fixer", "a.txt") is None
    # Another workflow of the same owner, its state empty, has read nothing.
    _, other = _run(DurableTools(ws, owner="fixer"), [("edit", APPEND)])
    assert other["answers"][0]["code"] == ErrorCode.FS_NOT_OBSERVED.value
    assert (root / "a.txt").read_bytes() == b"one\n"
    # The first workflow's state, handed on, lets the edit through.
    _, handed = _run(DurableTools(ws, owner="fixer"), [("edit", APPEND)], out["seen"])
    assert handed["answers"][0]["ok"]
    assert (root / "a.txt").read_bytes() == b"one\ntwo\n"


def test_an_entry_altered_in_the_state_is_no_observation(launched: Any, root: Path) -> None:
    ws = Workspace(str(root))
    _, out = _run(DurableTools(ws, owner="fixer"), [("read", {"file_path": "/a.txt"})])
    (root / "a.txt").write_bytes(b"one\nsomeone\n")
    current = ws.backend.read("a.txt").version
    forged = {**out["seen"]["a.txt"], "version": current}  # retargeted, seal kept
    _, tampered = _run(DurableTools(ws, owner="fixer"),
                       [("edit", {**APPEND, "new_string": "one\nforged\n"})], {"a.txt": forged})
    assert tampered["answers"][0]["code"] == ErrorCode.FS_NOT_OBSERVED.value
    assert (root / "a.txt").read_bytes() == b"one\nsomeone\n"
    # Another owner's entries are not this owner's either.
    _, foreign = _run(DurableTools(ws, owner="intruder"),
                      [("edit", {**APPEND, "new_string": "one\nforged\n"})], out["seen"])
    assert foreign["answers"][0]["code"] == ErrorCode.FS_NOT_OBSERVED.value


def test_a_dbos_agent_runs_each_fsseam_call_as_a_step(launched: Any) -> None:
    agent, root = launched
    workflow = f"agent-{uuid.uuid4().hex}"
    result = _in_workflow(workflow, lambda: agent.run("append a line"))
    assert result.output == "done"
    assert (root / "a.txt").read_bytes() == b"one\ntwo\n"
    names = [s["function_name"] for s in DBOS.list_workflow_steps(workflow)]
    assert [n for n in names if n.startswith("fsseam.")] == ["fsseam.read", "fsseam.edit"]
    returns = [p for m in result.all_messages() for p in m.parts
               if p.part_kind == "tool-return"]
    assert [p.outcome for p in returns] == ["success", "success"]
    # The read's observation travels in its result, for the edit's step (and a recovery).
    read_carries = returns[0].metadata[HISTORY_KEY]
    assert read_carries["workspace"] == str(root) and set(read_carries["entries"]) == {"a.txt"}


def test_outside_a_workflow_the_wrapper_is_the_toolset(root: Path) -> None:
    plan = [("read", {"file_path": "/a.txt"}), ("edit", APPEND)]
    toolset = DBOSFsseamToolset(FsseamToolset(Workspace(str(root)), names="read,edit"))
    result = asyncio.run(Agent(_script(plan), toolsets=[toolset]).run("append a line"))
    assert result.output == "done"
    assert (root / "a.txt").read_bytes() == b"one\ntwo\n"


def test_it_wraps_only_fsseam_toolsets() -> None:
    from pydantic_ai.toolsets import FunctionToolset

    with pytest.raises(TypeError, match="wraps an FsseamToolset"):
        DBOSFsseamToolset(FunctionToolset())


def test_the_durability_capability_runs_each_fsseam_call_as_a_step(launched: Any) -> None:
    workflow = f"durable-{uuid.uuid4().hex}"
    outcomes = _in_workflow(workflow, lambda: durable_run("append a line"))
    assert outcomes == ["success", "success"]
    names = [s["function_name"] for s in DBOS.list_workflow_steps(workflow)]
    assert [n for n in names if n.startswith("fsseam.")] == ["fsseam.read", "fsseam.edit"]
    assert (AGENTS["durability-root"] / "a.txt").read_bytes() == b"one\ntwo\n"


def test_outside_a_workflow_a_call_is_a_plain_call(root: Path) -> None:
    tools = DurableTools(Workspace(str(root)), owner="fixer")
    seen: dict[str, Any] = {}
    assert tools.call("read", {"file_path": "/a.txt"}, seen).ok
    assert set(seen) == {"a.txt"}  # its observations go where a workflow's would
    assert tools.call("edit", APPEND, seen).ok
    assert (root / "a.txt").read_bytes() == b"one\ntwo\n"


def test_a_damaged_state_is_refused_never_read_as_nothing_read(root: Path) -> None:
    tools = DurableTools(Workspace(str(root)), owner="fixer")
    result = tools.call("edit", APPEND, {"a.txt": "not an entry"})
    assert result.error is not None and result.error.code == ErrorCode.FS_BACKEND
    assert "dbos:seen" in result.text
    assert (root / "a.txt").read_bytes() == b"one\n"


def test_the_state_keeps_the_later_entry_of_a_key_and_its_bound() -> None:
    from fsseam.integrations.dbos import merge_entries
    from fsseam.observations import ObservationEntry

    def entry(at: float, seen: bool) -> dict[str, Any]:
        return ObservationEntry(seen=seen, at=at).model_dump(mode="json")

    state: dict[str, Any] = {"a": entry(2.0, True)}
    merge_entries(state, {"a": entry(1.0, False), "b": entry(3.0, True)}, limit=None)
    assert state == {"a": entry(2.0, True), "b": entry(3.0, True)}
    merge_entries(state, {"a": entry(5.0, False)}, limit=None)
    assert state["a"] == entry(5.0, False)
    merge_entries(state, {"c": entry(4.0, True)}, limit=2)
    assert state == {"a": entry(5.0, False), "c": entry(4.0, True)}  # the oldest expired


def test_a_damaged_history_is_a_refusal_of_the_call(launched: Any) -> None:
    from pydantic_ai.messages import ModelRequest, ToolReturnPart

    from fsseam.integrations.pydantic_ai import RESULT_KEY

    agent, root = launched
    before = (root / "a.txt").read_bytes()
    damaged = {HISTORY_KEY: {"workspace": str(root), "entries": {"a.txt": "not an entry"}}}
    history = [
        ModelResponse(parts=[ToolCallPart("read", {"file_path": "/a.txt"}, tool_call_id="c0")]),
        ModelRequest(parts=[ToolReturnPart("read", "...", tool_call_id="c0", metadata=damaged)]),
    ]
    result = _in_workflow(f"damaged-{uuid.uuid4().hex}",
                          lambda: agent.run(message_history=history))
    edit = [p for m in result.new_messages() for p in m.parts if p.part_kind == "tool-return"]
    assert [p.outcome for p in edit] == ["failed"]
    assert edit[0].metadata[RESULT_KEY]["error"]["code"] == ErrorCode.FS_BACKEND.value
    assert (root / "a.txt").read_bytes() == before
