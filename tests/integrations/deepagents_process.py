"""Deep agents on a local workspace with LangGraph's SQLite checkpointer: what the tests of
observations in a thread's state run, in the test process and (as a script) in a new one.

    python deepagents_process.py DB SCENARIOS_JSON
runs the second half of each scenario (the resumed thread) and prints one JSON line:
{scenario: [[status, content] of each new tool message]}.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Iterator
from itertools import count
from typing import Any

from deepagents import create_deep_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

from fsseam import Workspace
from fsseam.integrations.deepagents import FsseamBackend

CALLS = count(1)
APPROVE = {"decisions": [{"type": "approve"}]}


class ScriptedModel(GenericFakeChatModel):
    """LangChain's fake chat model, answering each turn with the next scripted message."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        return self


def call(tool: str, **args: Any) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": tool, "args": args,
                                              "id": f"call-{next(CALLS)}"}])


def read(path: str) -> AIMessage:
    return call("read_file", file_path=path)


def edit(path: str, old: str, new: str) -> AIMessage:
    return call("edit_file", file_path=path, old_string=old, new_string=new)


def agent(backend: FsseamBackend, turns: list[AIMessage | str], checkpointer: Any,
          interrupt: bool = False) -> Any:
    """One deep agent over ``backend``, its observations kept in the thread's state."""
    replies: Iterator[AIMessage | str] = iter([*turns, "Done."])
    return create_deep_agent(
        model=ScriptedModel(messages=replies), backend=backend,
        middleware=[backend.middleware], checkpointer=checkpointer,
        interrupt_on={"edit_file": True} if interrupt else None,
    )


def saver(db: str) -> SqliteSaver:
    return SqliteSaver(sqlite3.connect(db, check_same_thread=False))


def thread(name: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": name}}


def tool_results(messages: list[BaseMessage]) -> list[list[str]]:
    return [[str(m.status), str(m.content)] for m in messages if isinstance(m, ToolMessage)]


def backend_of(scenario: dict[str, Any]) -> FsseamBackend:
    """A new backend on the scenario's store (``url`` with ``options``)."""
    return FsseamBackend(Workspace(scenario["url"], storage_options=scenario.get("options")))


def resume(db: str, scenarios: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Each scenario's thread resumed in this process: a new Workspace, backend, agent and
    checkpointer on the same files; ``edit`` runs one more turn, ``approve`` answers the
    interrupted edit."""
    checkpointer = saver(db)
    out: dict[str, Any] = {}
    for name, s in scenarios.items():
        config, backend = thread(name), backend_of(s)
        if s["do"] == "approve":
            resumed = agent(backend, [], checkpointer, interrupt=True)
            before = len(resumed.get_state(config).values["messages"])
            result = resumed.invoke(Command(resume=APPROVE), config)
        else:
            resumed = agent(backend, [edit(s["path"], *s["edit"])], checkpointer)
            before = len(resumed.get_state(config).values["messages"])
            result = resumed.invoke({"messages": [{"role": "user", "content": "Go on."}]},
                                    config)
        out[name] = tool_results(result["messages"][before:])
    return out


if __name__ == "__main__":
    db, given = sys.argv[1:3]
    print(json.dumps(resume(db, json.loads(given))))
