"""Observations kept in state the client holds are bound to where they were recorded.

Per framework (the Agents SDK's run context and ``RunState`` string, Pydantic AI's message
history, a deepagents thread's checkpointed state): an entry written by hand, one copied
from another conversation or thread, and a genuine one retargeted to a newer version are
ignored, so the edit they would let through is FS_NOT_OBSERVED and the file is unchanged.
With the workspace's ``observation_key``: an unsigned entry (only the public digest) or an
altered one is ignored, and a genuine signed one still works through the framework's own
serialization. Also: two runs of one Agents SDK conversation (a copied run context) never
share a call in progress. Offline, with each framework's test model."""

from __future__ import annotations

import asyncio
import copy
import hashlib
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from fsseam import Workspace
from fsseam.observations import ObservationEntry
from fsseam.observations.sealing import Binding, sealed
from fsseam.versions import Version

from ..test_observation_calls import HoldFirstRead
from .helpers import NOT_OBSERVED, seed, stored

KEY = b"an application's secret, 32 bytes"
CHANGED = "retries = 1\nmore = 1\n"
"""Another writer's version: the edits below still apply to it (unread)."""


def workspace(name: str, **kwargs: Any) -> Workspace:
    ws = Workspace(f"memory://fsseam-trust-{name}", storage_options={"global_store": False},
                   **kwargs)
    seed(ws)
    return ws


def current(ws: Workspace) -> Version:
    version = ws.backend.read("config.toml").version
    assert version is not None
    return version


def change(ws: Workspace) -> None:
    """Another writer reads the file and changes it (nobody under test read it since)."""
    person = ws.context("person")
    assert person.tools.execute("read", {"file_path": "/config.toml"}).ok
    assert person.tools.execute("write", {"file_path": "/config.toml", "content": CHANGED}).ok


def hand_written(ws: Workspace) -> dict[str, Any]:
    """An entry for the file's current version, written by someone who never read it."""
    return ObservationEntry(version=current(ws), at=time.time()).model_dump(mode="json")


def retargeted(raw: dict[str, Any], ws: Workspace) -> dict[str, Any]:
    """A genuine entry (seal kept) claiming the file's current version."""
    return {**raw, "version": current(ws).model_dump(mode="json"), "at": time.time()}


def unsigned(ws: Workspace, owner: str, thread: str) -> dict[str, Any]:
    """What anyone can make without the key: the right binding, sealed with the public
    digest only."""
    return sealed(Binding(owner, ws.url, thread), "config.toml", ObservationEntry(
        version=current(ws), at=time.time()))


# -- the Agents SDK ---------------------------------------------------------------------------

agents = pytest.importorskip(
    "agents", reason="openai-agents is not installed: pip install -e '.[openai-agents]'")

from agents import Agent, RunConfig, Runner, RunState  # noqa: E402
from agents.testing import ScriptedModel, assistant_message, function_call  # noqa: E402

from fsseam.integrations.openai_agents import fsseam_tools  # noqa: E402
from fsseam.integrations.openai_agents_state import STATE_KEY  # noqa: E402

NO_TRACING = RunConfig(tracing_disabled=True)
EDITING = ["openai", "edit"]
EDITED = "Edited /config.toml: replaced 1 occurrence at line 1.\n     1\tretries = 3"


def sdk_read(call_id: str = "r") -> Any:
    return function_call("read", {"file_path": "/config.toml"}, call_id=call_id)


def sdk_edit(call_id: str = "e") -> Any:
    return function_call("edit", {"file_path": "/config.toml", "old_string": "retries = 1",
                                  "new_string": "retries = 3"}, call_id=call_id)


def turn(tools: list[Any], *steps: Any, **run: Any) -> list[Any]:
    model = ScriptedModel([*steps, [assistant_message("Done.")]])
    agent = Agent(name="editor", model=model, tools=tools)
    result = asyncio.run(Runner.run(agent, "Edit the config.", run_config=NO_TRACING, **run))
    return [i.raw_item["output"] for i in result.new_items if i.type == "tool_call_output_item"]


def sdk_entries(context: dict[str, Any]) -> dict[str, Any]:
    entries: dict[str, Any] = context[STATE_KEY]["entries"]
    return entries


def started(tools: list[Any]) -> dict[str, Any]:
    """A conversation's context whose fsseam state exists (it listed the root)."""
    context: dict[str, Any] = {}
    turn(tools, [function_call("ls", {"path": "/"}, call_id="l")], context=context)
    assert STATE_KEY in context
    return context


@pytest.mark.parametrize("forged", ["hand-written", "copied", "retargeted"])
def test_agents_sdk_context_entries_from_elsewhere_are_ignored(forged: str) -> None:
    ws = workspace(f"sdk-{forged}")
    tools = fsseam_tools(ws, names=EDITING)
    context = started(tools)
    if forged == "hand-written":
        sdk_entries(context)["config.toml"] = hand_written(ws)
    elif forged == "copied":
        other: dict[str, Any] = {}
        assert turn(tools, [sdk_read()], context=other) == ["     1\tretries = 1"]
        sdk_entries(context).update(copy.deepcopy(sdk_entries(other)))
    else:
        assert turn(tools, [sdk_read()], context=context) == ["     1\tretries = 1"]
        change(ws)
        entries = sdk_entries(context)
        entries["config.toml"] = retargeted(entries["config.toml"], ws)
    before = stored(ws)
    assert turn(tools, [sdk_edit()], context=context) == [NOT_OBSERVED]
    assert stored(ws) == before
    # A read makes it the conversation's own again.
    assert turn(tools, [sdk_read()], [sdk_edit()], context=context)[-1].startswith(
        "Edited /config.toml: replaced 1 occurrence at line 1.")


def _interrupted(ws: Workspace) -> str:
    """A run that read the file, asked to edit it and stopped for approval: its
    ``RunState`` string."""
    tools = fsseam_tools(ws, names=EDITING, needs_approval=["edit"])
    agent = Agent(name="editor", model=ScriptedModel([[sdk_read()], [sdk_edit()]]),
                  tools=tools)
    result = asyncio.run(Runner.run(agent, "Edit the config.", context={},
                                    run_config=NO_TRACING))
    assert [i.tool_name for i in result.interruptions] == ["edit"]
    return result.to_state().to_string()


def _approved(ws: Workspace, text: str) -> list[Any]:
    tools = fsseam_tools(ws, names=EDITING, needs_approval=["edit"])
    agent = Agent(name="editor", model=ScriptedModel([[assistant_message("Done.")]]),
                  tools=tools)

    async def resume() -> list[Any]:
        state = await RunState.from_string(agent, text)
        for item in state.get_interruptions():
            state.approve(item)
        result = await Runner.run(agent, state, run_config=NO_TRACING)
        return [i.raw_item["output"] for i in result.new_items
                if i.type == "tool_call_output_item"]

    return asyncio.run(resume())


@pytest.mark.parametrize("key", [None, KEY], ids=["digest", "signed"])
def test_agents_sdk_run_state_string(key: bytes | None) -> None:
    """Through the SDK's own ``RunState`` string: a genuine entry resumes the approved edit;
    the same string with its entry retargeted to another writer's version does not."""
    ws = workspace(f"sdk-state-{key is not None}", observation_key=key)
    text = _interrupted(ws)
    assert ("hmac-sha256:" in text) is (key is not None)
    assert _approved(ws, text)[-1] == EDITED
    assert stored(ws) == b"retries = 3\n"

    ws = workspace(f"sdk-state-retarget-{key is not None}", observation_key=key)
    text = _interrupted(ws)
    read_version = current(ws).value
    change(ws)
    forged = text.replace(read_version, current(ws).value)
    assert forged != text
    assert _approved(ws, forged)[-1] == NOT_OBSERVED
    assert stored(ws) == CHANGED.encode()


@pytest.mark.parametrize("forged", ["unsigned", "altered", "other key"])
def test_agents_sdk_with_a_key_refuses_unsigned_and_altered_entries(forged: str) -> None:
    ws = workspace(f"sdk-key-{forged}", observation_key=KEY)
    tools = fsseam_tools(ws, names=EDITING)
    context = started(tools)
    owner = context[STATE_KEY]["owner"]
    if forged == "unsigned":
        sdk_entries(context)["config.toml"] = unsigned(ws, owner, owner)
    elif forged == "altered":
        assert turn(tools, [sdk_read()], context=context) == ["     1\tretries = 1"]
        change(ws)
        entries = sdk_entries(context)
        entries["config.toml"] = retargeted(entries["config.toml"], ws)
    else:  # signed genuinely, under another workspace's key
        assert turn(tools, [sdk_read()], context=context) == ["     1\tretries = 1"]
        tools = fsseam_tools(Workspace(ws.url, backend=ws.backend,
                                       observation_key=b"another key"), names=EDITING)
    before = stored(ws)
    assert turn(tools, [sdk_edit()], context=context) == [NOT_OBSERVED]
    assert stored(ws) == before


@pytest.mark.parametrize("forged", ["copied", "retargeted"])
def test_agents_sdk_session_rows_from_elsewhere_are_ignored(forged: str, tmp_path: Path
                                                           ) -> None:
    """A conversation kept in an ``SQLiteSession``: a row of fsseam's table copied from
    another session, or retargeted, is ignored."""
    import json
    import sqlite3

    from agents import SQLiteSession

    from fsseam.integrations.openai_agents import session_context

    ws = workspace(f"sdk-session-{forged}")
    tools = fsseam_tools(ws, names=EDITING)
    db = tmp_path / "chat.db"
    one, two = SQLiteSession("one", db), SQLiteSession("two", db)
    assert turn(tools, [sdk_read()], session=one, context=session_context(one)) == [
        "     1\tretries = 1"]
    with sqlite3.connect(db) as conn:
        (row,) = conn.execute("SELECT ENTRY, AT FROM fsseam_observations WHERE SESSION_ID = "
                              "'one'").fetchall()
        if forged == "copied":
            conn.execute("INSERT INTO fsseam_observations VALUES ('two', 'config.toml', ?, ?)",
                         row)
            session = two
        else:
            change(ws)
            entry = json.dumps(retargeted(json.loads(row[0]), ws))
            conn.execute("UPDATE fsseam_observations SET ENTRY = ? WHERE SESSION_ID = 'one'",
                         (entry,))
            session = one
    before = stored(ws)
    assert turn(tools, [sdk_edit()], session=session,
                context=session_context(session)) == [NOT_OBSERVED]
    assert stored(ws) == before
    one.close()
    two.close()


def test_agents_sdk_a_copied_run_context_is_another_run() -> None:
    """``copy.deepcopy`` of a run context: two runs of one conversation name. Run A reads
    and is held inside that call; run B, which never read the file, may not edit it."""
    hold = HoldFirstRead()
    ws = workspace("sdk-deepcopy", plugins=[hold])
    tools = fsseam_tools(ws, names=EDITING)
    context = started(tools)
    copied = copy.deepcopy(context)
    assert copied[STATE_KEY]["owner"] == context[STATE_KEY]["owner"]
    answers: dict[str, Any] = {}
    run_a = threading.Thread(target=lambda: answers.setdefault(
        "a", turn(tools, [sdk_read()], context=context)))
    run_a.start()
    try:
        assert hold.inside.wait(60), "run A never read the file"
        answers["b"] = turn(tools, [sdk_edit()], context=copied)
    finally:
        hold.release.set()
        run_a.join(60)
    assert answers["b"] == [NOT_OBSERVED]
    assert answers["a"] == ["     1\tretries = 1"]
    assert stored(ws) == b"retries = 1\n"
    # Run A's read is in run A's context: its edit goes through.
    assert turn(tools, [sdk_edit()], context=context) == [EDITED]


# -- Pydantic AI ------------------------------------------------------------------------------

pytest.importorskip(
    "pydantic_ai", reason="pydantic-ai is not installed: pip install -e '.[pydantic-ai]'")

from pydantic_ai import Agent as PydanticAgent  # noqa: E402
from pydantic_ai.messages import (  # noqa: E402
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402

from fsseam.integrations.pydantic_ai import FsseamToolset  # noqa: E402
from fsseam.integrations.pydantic_ai_history import HISTORY_KEY  # noqa: E402


def chat(toolset: FsseamToolset, *calls: tuple[str, dict[str, Any]],
         history: list[ModelMessage] | None = None) -> Any:
    remaining = [[ToolCallPart(name, {"file_path": "/config.toml", **args},
                               tool_call_id=f"{name}-{n}")] for n, (name, args) in
                 enumerate(calls)]

    async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=remaining.pop(0) if remaining else [TextPart("Done.")])

    agent = PydanticAgent(FunctionModel(respond), toolsets=[toolset])
    return asyncio.run(agent.run("Go on.", message_history=history))


P_READ = ("read", {})
P_EDIT = ("edit", {"old_string": "retries = 1", "new_string": "retries = 3"})


def as_json(messages: list[ModelMessage]) -> list[ModelMessage]:
    return ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(messages))


def carried(messages: list[ModelMessage]) -> dict[str, Any]:
    """The metadata entries of the first tool result that carries any."""
    for message in messages:
        for part in message.parts:
            if isinstance(part, ToolReturnPart) and part.metadata:
                entries: dict[str, Any] = part.metadata[HISTORY_KEY]["entries"]
                return entries
    raise AssertionError("no tool result carries fsseam's entries")


def last_answer(result: Any) -> tuple[str, str]:
    (part,) = [p for p in result.new_messages()[-2].parts if isinstance(p, ToolReturnPart)]
    return part.outcome, str(part.content)


@pytest.mark.parametrize("forged", ["hand-written", "copied", "retargeted"])
def test_pydantic_ai_history_entries_from_elsewhere_are_ignored(forged: str) -> None:
    ws = workspace(f"pai-{forged}")
    toolset = FsseamToolset(ws)
    if forged == "copied":
        # Conversation one read the file; its result's entries are pasted into the result
        # of conversation two's read of another file.
        seed(ws, "/other.toml")
        one = chat(toolset, P_READ).all_messages()
        two = chat(toolset, ("read", {"file_path": "/other.toml"})).all_messages()
        assert one[0].conversation_id != two[0].conversation_id
        carried(two).clear()
        carried(two).update(copy.deepcopy(carried(one)))
        history = two
    else:
        history = chat(toolset, P_READ).all_messages()
        if forged == "hand-written":
            carried(history)["config.toml"] = hand_written(ws)
        else:
            change(ws)
            carried(history)["config.toml"] = retargeted(carried(history)["config.toml"], ws)
    before = stored(ws)
    refused = chat(toolset, P_EDIT, history=as_json(history))
    assert last_answer(refused) == ("failed", NOT_OBSERVED)
    assert stored(ws) == before


@pytest.mark.parametrize("forged", ["genuine", "unsigned", "altered"])
def test_pydantic_ai_with_a_key(forged: str) -> None:
    ws = workspace(f"pai-key-{forged}", observation_key=KEY)
    toolset = FsseamToolset(ws)
    history = as_json(chat(toolset, P_READ).all_messages())
    assert next(iter(carried(history).values()))["seal"].startswith("hmac-sha256:")
    if forged == "genuine":
        assert last_answer(chat(toolset, P_EDIT, history=history)) == ("success", EDITED)
        assert stored(ws) == b"retries = 3\n"
        return
    if forged == "unsigned":
        conversation = history[0].conversation_id or ""
        carried(history)["config.toml"] = unsigned(ws, "conversation", conversation)
        before = stored(ws)
    else:
        change(ws)
        before = stored(ws)
        carried(history)["config.toml"] = retargeted(carried(history)["config.toml"], ws)
    assert last_answer(chat(toolset, P_EDIT, history=history)) == ("failed", NOT_OBSERVED)
    assert stored(ws) == before


# -- deepagents -------------------------------------------------------------------------------

pytest.importorskip(
    "deepagents", reason="deepagents is not installed: pip install -e '.[deepagents]'")

from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402

from fsseam.integrations.deepagents import FsseamBackend  # noqa: E402
from fsseam.integrations.deepagents_state import OBSERVATIONS_KEY  # noqa: E402

from . import deepagents_process as proc  # noqa: E402

DA_EDITED = "Successfully replaced 1 instance(s) of the string in '/config.toml'"


def go(backend: FsseamBackend, checkpointer: Any, thread: str, *turns: Any) -> list[list[str]]:
    agent = proc.agent(backend, list(turns), checkpointer)
    result = agent.invoke({"messages": [{"role": "user", "content": "Go."}]},
                          proc.thread(thread))
    return proc.tool_results(result["messages"])


def channel(backend: FsseamBackend, checkpointer: Any, thread: str) -> dict[str, Any]:
    values = proc.agent(backend, [], checkpointer).get_state(proc.thread(thread)).values
    scoped: dict[str, Any] = values.get(OBSERVATIONS_KEY, {}).get(backend.threads.scope, {})
    return scoped


def put_channel(backend: FsseamBackend, checkpointer: Any, thread: str,
                entries: dict[str, Any]) -> None:
    proc.agent(backend, [], checkpointer).update_state(
        proc.thread(thread), {OBSERVATIONS_KEY: {backend.threads.scope: entries}})


def da_workspace(tmp_path: Path, **kwargs: Any) -> Workspace:
    ws = Workspace(str(tmp_path), **kwargs)
    seed(ws)
    return ws


def da_read() -> Any:
    return proc.read("/config.toml")


def da_edit() -> Any:
    return proc.edit("/config.toml", "retries = 1", "retries = 3")


@pytest.mark.parametrize("forged", ["hand-written", "copied", "retargeted"])
def test_deepagents_checkpoint_entries_from_elsewhere_are_ignored(
        forged: str, tmp_path: Path) -> None:
    ws = da_workspace(tmp_path)
    backend, checkpointer = FsseamBackend(ws), InMemorySaver()
    assert go(backend, checkpointer, "A", da_read())[-1][0] == "success"
    if forged == "hand-written":
        thread = "H"
        go(backend, checkpointer, thread)
        put_channel(backend, checkpointer, thread, {"config.toml": hand_written(ws)})
    elif forged == "copied":
        thread = "B"
        go(backend, checkpointer, thread)
        put_channel(backend, checkpointer, thread, channel(backend, checkpointer, "A"))
    else:
        thread = "A"
        change(ws)
        put_channel(backend, checkpointer, thread, {"config.toml": retargeted(
            channel(backend, checkpointer, "A")["config.toml"], ws)})
    before = stored(ws)
    assert go(backend, checkpointer, thread, da_edit())[-1] == ["error", NOT_OBSERVED]
    assert stored(ws) == before


@pytest.mark.parametrize("forged", ["genuine", "unsigned", "altered"])
def test_deepagents_with_a_key(forged: str, tmp_path: Path) -> None:
    ws = da_workspace(tmp_path, observation_key=KEY)
    backend, checkpointer = FsseamBackend(ws), InMemorySaver()
    assert go(backend, checkpointer, "K", da_read())[-1][0] == "success"
    assert channel(backend, checkpointer, "K")["config.toml"]["seal"].startswith(
        "hmac-sha256:")
    if forged == "genuine":
        assert go(backend, checkpointer, "K", da_edit())[-1] == ["success", DA_EDITED]
        assert stored(ws) == b"retries = 3\n"
        return
    if forged == "unsigned":
        entry = unsigned(ws, backend.threads.prefix, "K")
    else:
        change(ws)
        entry = retargeted(channel(backend, checkpointer, "K")["config.toml"], ws)
    put_channel(backend, checkpointer, "K", {"config.toml": entry})
    before = stored(ws)
    assert go(backend, checkpointer, "K", da_edit())[-1] == ["error", NOT_OBSERVED]
    assert stored(ws) == before


def test_an_observation_key_must_be_bytes() -> None:
    with pytest.raises(TypeError, match="observation_key must be non-empty bytes"):
        Workspace("memory://fsseam-trust-key", observation_key="secret")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="observation_key must be non-empty bytes"):
        Workspace("memory://fsseam-trust-key", observation_key=b"")


def test_a_key_is_never_shown() -> None:
    ws = Workspace("memory://fsseam-trust-shown", storage_options={"global_store": False},
                   observation_key=KEY)
    binding = Binding("o", ws.url, "t", KEY)
    spec = ws.spec(snapshot=True)
    assert KEY.decode() not in repr(binding) and KEY.decode() not in repr(spec)
    assert hashlib.sha256(KEY).hexdigest() not in repr(binding)
    # It travels with the workspace it signs for (a pickled workspace keeps checking).
    assert Workspace.from_spec(spec, shared=False).observation_key == KEY
    mounted = Workspace.mount({"/": "memory://fsseam-trust-mounted"}, observation_key=KEY)
    assert mounted.observation_key == KEY


def test_deepagents_two_runs_of_one_thread_at_once_keep_their_own_reads(tmp_path: Path
                                                                       ) -> None:
    """Two invocations of one thread id at once (each from the state it was given): run A
    reads and is held inside that call; run B, whose state never read the file, may not
    edit it."""
    hold = HoldFirstRead()
    ws = da_workspace(tmp_path, plugins=[hold])
    backend = FsseamBackend(ws)
    answers: dict[str, Any] = {}

    def run(name: str, *turns: Any) -> None:
        agent = proc.agent(backend, list(turns), None)
        result = agent.invoke({"messages": [{"role": "user", "content": "Go."}]},
                              proc.thread("T"))
        answers[name] = proc.tool_results(result["messages"])

    run_a = threading.Thread(target=run, args=("a", da_read()))
    run_a.start()
    try:
        assert hold.inside.wait(60), "run A never read the file"
        run("b", da_edit())
    finally:
        hold.release.set()
        run_a.join(60)
    assert answers["b"] == [["error", NOT_OBSERVED]]
    assert answers["a"][-1][0] == "success"
    assert stored(ws) == b"retries = 1\n"
