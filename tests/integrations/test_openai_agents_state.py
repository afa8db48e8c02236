"""What an Agents SDK conversation has read lives in the SDK's own state: a mapping run
context (carried by ``RunState`` strings), an ``SQLiteSession``'s database, else one run.
Real ``Runner`` runs with the SDK's ``ScriptedModel``; the resumes in a new process run in
ONE child process for the whole module (several scenarios), the stored bytes asserted."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "agents", reason="openai-agents is not installed: pip install -e '.[openai-agents]'"
)

from agents import Agent, RunConfig, Runner, SQLiteSession
from agents.testing import ScriptedModel, assistant_message, function_call

from fsseam import Workspace
from fsseam.integrations.openai_agents import fsseam_tools, session_context
from fsseam.integrations.openai_agents_state import STATE_KEY, SessionObservations
from fsseam.observations import ObservationEntry
from fsseam.paths import reserved
from fsseam.versions import Version

from .helpers import NOT_OBSERVED, seed, stored

NO_TRACING = RunConfig(tracing_disabled=True)
CONFIG = "/config.toml"
EDITING = ["openai", "edit"]
"""The default tools and edit, which these conversations use."""


def read(call_id: str, path: str = CONFIG) -> Any:
    return function_call("read", {"file_path": path}, call_id=call_id)


def edit(call_id: str, old: str = "retries = 1", new: str = "retries = 3") -> Any:
    return function_call("edit", {"file_path": CONFIG, "old_string": old, "new_string": new},
                         call_id=call_id)


def patch(call_id: str, old: str = "retries = 1", new: str = "retries = 3") -> dict[str, Any]:
    operation = {"type": "update_file", "path": "config.toml", "diff": f"@@\n-{old}\n+{new}\n"}
    return {"type": "apply_patch_call", "call_id": call_id, "operation": operation}


def turn(tools: list[Any], *steps: Any, **run: Any) -> list[Any]:
    """One ``Runner.run`` of the scripted steps (then "Done."): the tool outputs."""
    model = ScriptedModel([*steps, [assistant_message("Done.")]])
    agent = Agent(name="editor", model=model, tools=tools)
    result = asyncio.run(Runner.run(agent, "Edit the config.", run_config=NO_TRACING, **run))
    return [i.raw_item["output"] for i in result.new_items if i.type == "tool_call_output_item"]


EDITED = "Edited /config.toml: replaced 1 occurrence at line 1.\n     1\tretries = 3"


@pytest.fixture
def ws() -> Workspace:
    workspace = Workspace("memory://agents-state", storage_options={"global_store": False})
    seed(workspace)
    return workspace


# -- conversations of one reused tool list ---------------------------------------------------


def test_two_conversations_of_one_tool_list_do_not_share_reads(ws: Workspace) -> None:
    tools = fsseam_tools(ws, names=EDITING)
    first: dict[str, Any] = {}
    assert turn(tools, [read("r")], context=first)[0] == "     1\tretries = 1"
    # Another conversation (another context), and a run with no context: never read it.
    assert turn(tools, [edit("e")], context={}) == [NOT_OBSERVED]
    assert turn(tools, [edit("e")]) == [NOT_OBSERVED]
    assert stored(ws) == b"retries = 1\n"
    # The first conversation's next turn (the same context) still has its read.
    assert turn(tools, [edit("e")], context=first) == [EDITED]
    assert stored(ws) == b"retries = 3\n"
    # (and the answer of its edit, which ran as its tool call: fsseam.seam.calls)
    assert {k for k in first[STATE_KEY]["entries"] if not reserved(k)} == {"config.toml"}


def test_a_run_without_context_keeps_its_reads_for_that_run_only(ws: Workspace) -> None:
    tools = fsseam_tools(ws, names=EDITING)
    assert turn(tools, [read("r")], [patch("p")])[1].startswith("Success.")
    assert turn(tools, [edit("e", "retries = 3", "retries = 4")]) == [NOT_OBSERVED]


def test_a_fixed_owner_is_one_owner_for_every_run(ws: Workspace) -> None:
    tools = fsseam_tools(ws, names=EDITING, owner="a")
    turn(tools, [read("r")], context={})
    assert turn(tools, [edit("e")], context={}) == [EDITED]


def test_a_foreign_state_is_refused_and_kept(ws: Workspace) -> None:
    context: dict[str, Any] = {STATE_KEY: {"format": 99, "entries": {}}}
    out = turn(fsseam_tools(ws, names=EDITING), [read("r")], [edit("e")], context=context)
    assert out[0] == out[1] == (
        "Error [FS_BACKEND]: what this conversation has read cannot be used: "
        "context['fsseam'] is not fsseam's (format=99). Nothing was changed, and it was not "
        "reset; ask the user to restore or remove it (then read the files again).")
    assert context == {STATE_KEY: {"format": 99, "entries": {}}}
    assert stored(ws) == b"retries = 1\n"


def test_the_oldest_reads_of_a_conversation_expire(ws: Workspace) -> None:
    for name in ("a", "b", "c"):
        seed(ws, f"/{name}.txt", "x\n")
    context: dict[str, Any] = {}
    tools = fsseam_tools(ws, names=EDITING, max_observations=2)
    turn(tools, [read("1", "/a.txt")], [read("2", "/b.txt")], [read("3", CONFIG)], context=context)
    assert set(context[STATE_KEY]["entries"]) == {"b.txt", "config.toml"}
    out = turn(tools, [function_call("edit", {"file_path": "/a.txt", "old_string": "x",
                                              "new_string": "y"}, call_id="e")], [edit("e2")],
               context=context)
    assert out[0].startswith("Error [FS_NOT_OBSERVED]: /a.txt has not been read yet.")
    assert out[1] == EDITED


def test_a_session_in_memory_keeps_its_reads_until_it_is_cleared(ws: Workspace) -> None:
    tools = fsseam_tools(ws, names=EDITING)
    session, other = SQLiteSession("chat"), SQLiteSession("chat")  # two databases
    turn(tools, [read("r")], session=session, context=session_context(session))
    assert turn(tools, [edit("e")], session=other, context=session_context(other)) == [
        NOT_OBSERVED]
    asyncio.run(session.clear_session())
    assert turn(tools, [edit("e")], session=session, context=session_context(session)) == [
        NOT_OBSERVED]
    assert stored(ws) == b"retries = 1\n"


# -- resumed in a new process ----------------------------------------------------------------

CHILD = r'''
import asyncio, json, sys
from agents import Agent, RunConfig, Runner, RunState, SQLiteSession
from agents.testing import ScriptedModel, assistant_message, function_call
from fsseam import Workspace
from fsseam.integrations.openai_agents import fsseam_tools, session_context

NO_TRACING = RunConfig(tracing_disabled=True)
EDITING = ["openai", "edit"]
spec = json.loads(sys.argv[1])


def outputs(result):
    return [i.raw_item["output"] for i in result.new_items if i.type == "tool_call_output_item"]


async def approve(root, text):
    tools = fsseam_tools(Workspace(root), names=EDITING,
                         needs_approval=["edit", "apply_patch"])
    agent = Agent(name="editor", model=ScriptedModel([[assistant_message("Done.")]]),
                  tools=tools)
    state = await RunState.from_string(agent, text)
    for item in state.get_interruptions():
        state.approve(item)
    return outputs(await Runner.run(agent, state, run_config=NO_TRACING))


async def chat(root, db, session_id):
    edit = function_call("edit", {"file_path": "/config.toml", "old_string": "retries = 1",
                                  "new_string": "retries = 3"}, call_id="e")
    agent = Agent(name="editor", model=ScriptedModel([[edit], [assistant_message("Done.")]]),
                  tools=fsseam_tools(Workspace(root), names=EDITING))
    session = SQLiteSession(session_id, db)
    result = await Runner.run(agent, "Now set it to 3.", session=session,
                              context=session_context(session), run_config=NO_TRACING)
    return outputs(result)


async def main():
    out = {}
    for name, job in spec.items():
        if job["kind"] == "approve":
            out[name] = await approve(job["root"], job["state"])
        else:
            out[name] = await chat(job["root"], job["db"], job["session"])
    print(json.dumps(out))


asyncio.run(main())
'''


def _interrupted(root: Path, waits_for: str, *steps: Any) -> str:
    """A run that read the file, then asked to change it and stopped for approval: its
    ``RunState`` string."""
    tools = fsseam_tools(Workspace(str(root)), names=EDITING,
                         needs_approval=["edit", "apply_patch"])
    agent = Agent(name="editor", model=ScriptedModel([*steps]), tools=tools)
    result = asyncio.run(Runner.run(agent, "Edit the config.", context={},
                                    run_config=NO_TRACING))
    assert [i.tool_name for i in result.interruptions] == [waits_for]
    return result.to_state().to_string()


def _chatted(root: Path, db: Path, session_id: str) -> None:
    session = SQLiteSession(session_id, db)
    out = turn(fsseam_tools(Workspace(str(root)), names=EDITING), [read("r")], session=session,
               context=session_context(session))
    assert out == ["     1\tretries = 1"]
    session.close()


def test_reads_and_approvals_survive_a_new_process(tmp_path: Path) -> None:
    roots = {n: tmp_path / n for n in ("patch", "stale", "chat", "leak")}
    for root in roots.values():
        root.mkdir()
        (root / "config.toml").write_bytes(b"retries = 1\n")
    db = tmp_path / "chat.db"
    states = {
        "patch": _interrupted(roots["patch"], "apply_patch", [read("r")], [patch("p")]),
        "stale": _interrupted(roots["stale"], "edit", [read("r")], [edit("e")]),
    }
    _chatted(roots["chat"], db, "conversation-1")
    _chatted(roots["leak"], db, "conversation-2")
    # Someone else changes one file while its run waits for approval.
    (roots["stale"] / "config.toml").write_bytes(b"retries = 2\n")
    spec = {
        "patch": {"kind": "approve", "root": str(roots["patch"]), "state": states["patch"]},
        "stale": {"kind": "approve", "root": str(roots["stale"]), "state": states["stale"]},
        "chat": {"kind": "chat", "root": str(roots["chat"]), "db": str(db),
                 "session": "conversation-1"},
        "leak": {"kind": "chat", "root": str(roots["leak"]), "db": str(db),
                 "session": "conversation-9"},
    }
    child = subprocess.run([sys.executable, "-c", CHILD, json.dumps(spec)], capture_output=True,
                           text=True, timeout=120, env=dict(os.environ), check=False)
    assert child.returncode == 0, child.stderr
    out = json.loads(child.stdout.strip().splitlines()[-1])
    # A resumed run's items begin with those before the interruption: the read.
    assert out["patch"] == ["     1\tretries = 1",
                            "Success. Updated the following files:\nM /config.toml"]
    assert (roots["patch"] / "config.toml").read_bytes() == b"retries = 3\n"
    # A local directory keeps no older versions: the refusal cannot show what changed, and
    # says why.
    assert out["stale"] == ["     1\tretries = 1", (
        "Error [FS_STALE]: /config.toml has changed since you last read it, so your edit was "
        "not applied. What changed since the version you read cannot be shown: this storage "
        "keeps no older versions, and this process no longer holds the text of that version "
        "(it was read before a restart, in another process, or too long ago). Read the file "
        "again, then retry the edit.")]
    assert (roots["stale"] / "config.toml").read_bytes() == b"retries = 2\n"
    assert out["chat"] == [EDITED]
    assert (roots["chat"] / "config.toml").read_bytes() == b"retries = 3\n"
    assert out["leak"] == [NOT_OBSERVED]
    assert (roots["leak"] / "config.toml").read_bytes() == b"retries = 1\n"


# -- the session's table ---------------------------------------------------------------------


def test_a_session_database_that_cannot_be_opened_fails_the_call(
        ws: Workspace, tmp_path: Path) -> None:
    context = session_context(SQLiteSession("chat", tmp_path / "chat.db"))
    context[STATE_KEY]["session"]["db"] = str(tmp_path / "gone" / "chat.db")
    out = turn(fsseam_tools(ws, names=EDITING), [read("r")], [edit("e")], context=context)
    assert out[0].startswith(
        f"Error [FS_BACKEND]: what this conversation has read cannot be reached in its session "
        f"database {tmp_path / 'gone' / 'chat.db'} (")
    assert out[1] == out[0]
    assert stored(ws) == b"retries = 1\n"


def test_two_writers_of_one_session_merge_key_by_key(tmp_path: Path) -> None:
    """Two processes (here two store objects on their own connections) update one session
    at once: different keys both stay; of one key the later recording wins, whichever
    write lands last."""
    SQLiteSession("chat", tmp_path / "chat.db").close()
    a, b = (SessionObservations(str(tmp_path / "chat.db"), "chat") for _ in range(2))
    old = ObservationEntry(version=Version(kind="etag", value="1"), at=1.0)
    new = ObservationEntry(at=2.0)
    start = threading.Barrier(2)

    def put(store: SessionObservations, entries: dict[str, ObservationEntry]) -> None:
        start.wait(timeout=30)
        store.put("o", entries)

    threads = [threading.Thread(target=put, args=(a, {"x": new, "y": old})),
               threading.Thread(target=put, args=(b, {"x": old, "z": new}))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [a.get("o", k) for k in ("x", "y", "z")] == [new, old, new]
    assert SessionObservations(str(tmp_path / "chat.db"), "other").get("o", "x") is None


def test_a_typed_context_keeps_them_in_its_fsseam_field(ws: Workspace) -> None:
    """A pydantic context with an ``fsseam`` dict field: the state lives there, and a
    RunState string (the model dumped) restores it as the mapping it then is."""
    from pydantic import BaseModel, Field

    class AppContext(BaseModel):
        user: str
        fsseam: dict[str, Any] = Field(default_factory=dict)

    context, other = AppContext(user="ada"), AppContext(user="bob")
    tools = fsseam_tools(ws, names=EDITING)
    turn(tools, [read("r")], context=context)
    assert turn(tools, [edit("e")], context=other) == [NOT_OBSERVED]
    assert turn(tools, [edit("e")], context=context.model_dump()) == [EDITED]
    assert set(context.fsseam["entries"]) == {"config.toml"}
