"""deepagents' tool-call ids reach fsseam: the backend's middleware runs each tool call as
LangChain's ``tool_call_id``, and every change the call makes through the backend carries
it. A call run again with its id changes nothing twice; another thread's same change is
FS_STALE. Real deep agents (LangChain's fake chat model) on a local directory, with a
LangGraph checkpointer."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("deepagents", reason="deepagents is not installed")

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from fsseam import Workspace
from fsseam.integrations.deepagents import FsseamBackend, create_deep_agent

from .call_ids import APPEND, APPENDED, NOTES, CallIds


class ScriptedModel(GenericFakeChatModel):
    """LangChain's fake chat model, answering each turn with the next scripted message."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        return self


def _call(tool: str, call_id: str, **args: Any) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": tool, "args": args, "id": call_id}])


def _edit(call_id: str) -> AIMessage:
    return _call("edit_file", call_id, file_path="/notes.txt",
                 old_string=APPEND["old_string"], new_string=APPEND["new_string"])


def _read(call_id: str) -> AIMessage:
    return _call("read_file", call_id, file_path="/notes.txt")


def _run(backend: FsseamBackend, checkpointer: Any, thread: str, *turns: AIMessage
         ) -> list[tuple[str, str, str]]:
    """One invocation of ``thread``: its new tool messages as (call id, status, text)."""
    replies: Iterator[AIMessage | str] = iter([*turns, "Done."])
    agent = create_deep_agent(model=ScriptedModel(messages=replies), backend=backend,
                              checkpointer=checkpointer)
    result = agent.invoke({"messages": [{"role": "user", "content": "Go."}]},
                          {"configurable": {"thread_id": thread}})
    messages = result["messages"]
    # The thread's whole history: this invocation's part starts after its own prompt.
    start = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage))
    return [(str(m.tool_call_id), str(m.status), str(m.content)) for m in messages[start:]
            if isinstance(m, ToolMessage)]


def _workspace(tmp_path: Path, recorder: CallIds) -> Workspace:
    root = tmp_path / "root"
    root.mkdir()
    (root / "notes.txt").write_bytes(NOTES)
    return Workspace(str(root), plugins=[recorder], load_entry_points=False)


def test_a_backend_change_runs_as_its_tool_call_id(tmp_path: Path) -> None:
    recorder = CallIds()
    backend = FsseamBackend(_workspace(tmp_path, recorder))
    out = _run(backend, InMemorySaver(), "t", _read("lc-r"), _edit("lc-e"),
               _call("write_file", "lc-w", file_path="/new.txt", content="x\n"))
    assert [(i, s) for i, s, _ in out] == [("lc-r", "success"), ("lc-e", "success"),
                                           ("lc-w", "success")]
    assert recorder.seen == [("/notes.txt", "lc-e", "edit"), ("/new.txt", "lc-w", "write")]
    # Outside a graph run the backend's calls have no id.
    backend.write("/plain.txt", "p\n")
    assert recorder.seen[-1] == ("/plain.txt", None, "write")


def test_a_backend_change_replayed_with_its_id_changes_nothing_twice(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, CallIds())
    notes = tmp_path / "root" / "notes.txt"
    backend, checkpointer = FsseamBackend(ws), InMemorySaver()
    _run(backend, checkpointer, "other", _read("o-1"))
    first = _run(backend, checkpointer, "mine", _read("m-1"), _edit("m-2"))
    assert first[1][1] == "success", first
    assert notes.read_bytes() == APPENDED
    # Another thread's same change, against the version it read before: refused.
    refused = _run(backend, checkpointer, "other", _edit("o-2"))
    assert refused[0][1] == "error" and "FS_STALE" in refused[0][2], refused
    assert notes.read_bytes() == APPENDED
    # The step is run again (a durable run replaying it): the same tool call id.
    again = _run(backend, checkpointer, "mine", _edit("m-2"))
    assert again == first[1:]
    assert notes.read_bytes() == APPENDED


def test_an_id_reused_for_another_change_is_refused(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, CallIds())
    notes = tmp_path / "root" / "notes.txt"
    backend, checkpointer = FsseamBackend(ws), InMemorySaver()
    first = _run(backend, checkpointer, "mine", _read("m-1"), _edit("m-2"))
    assert first[1][1] == "success", first
    other = _call("edit_file", "m-2", file_path="/notes.txt", old_string="alpha",
                  new_string="ALPHA")
    refused = _run(backend, checkpointer, "mine", other)
    assert refused[0][1] == "error", refused
    assert refused[0][2].startswith("Error [FS_INVALID_ARGUMENT]: call id 'm-2' belongs to "
                                    "another call"), refused
    assert notes.read_bytes() == APPENDED
