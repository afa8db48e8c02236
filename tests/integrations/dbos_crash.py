"""One DBOS workflow of fsseam tool calls, in a process that SIGKILLs itself at a chosen
point on its first run (tests/integrations/test_dbos_crash.py).

    python tests/integrations/dbos_crash.py JOB_JSON

JOB: ``url``, ``storage_options``, ``db`` (the SQLite system database), ``marker`` (a file:
present means this is not the first run, so nothing is killed), ``form`` (``plain``:
:class:`DurableTools` in a ``@DBOS.workflow()``; ``agent``: a Pydantic AI ``DBOSAgent``
driven by a ``FunctionModel``), ``kill``: ``call:TOOL`` (inside the step, right after the
call of TOOL returned: the change landed, its answer only in this process) or
``write:N`` (right after the N-th change the store made, before fsseam recorded
anything). The first run starts the workflow under a fixed id; a later run finds it pending
(``DBOS.launch()`` recovers it) and waits for it. Prints the workflow's output as JSON.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from fsseam import Workspace
from fsseam.backends.base import Backend, Wrapper
from fsseam.backends.registry import open_backend
from fsseam.paths import reserved

WORKFLOW = "fsseam-crash-1"

PLAN: list[tuple[str, dict[str, Any]]] = [
    ("read", {"file_path": "/notes.txt"}),
    ("str_replace_editor", {"command": "insert", "path": "/notes.txt", "insert_line": 1,
                            "insert_text": "inserted\n"}),
    ("read", {"file_path": "/log.txt"}),
    ("edit", {"file_path": "/log.txt", "old_string": "one\n", "new_string": "one\ntwo\n"}),
    ("edit", {"file_path": "/log.txt", "old_string": "two\n", "new_string": "two\nthree\n"}),
    ("read", {"file_path": "/old.txt"}),
    ("move", {"source_path": "/old.txt", "destination_path": "/new.txt"}),
    ("read", {"file_path": "/gone.txt"}),
    ("delete", {"file_path": "/gone.txt"}),
]
"""The calls, in order; several change a file in a way a second run would not repeat
harmlessly (an insert, an edit appending a line, a move, a delete)."""

SEED = {"notes.txt": b"a\nb\n", "log.txt": b"one\n", "old.txt": b"move me\n",
        "gone.txt": b"delete me\n"}
AFTER = {"notes.txt": b"a\ninserted\nb\n", "log.txt": b"one\ntwo\nthree\n",
         "new.txt": b"move me\n"}
"""The store before and after the workflow, exactly once."""


def first_run(job: dict[str, Any]) -> bool:
    return not Path(job["marker"]).exists()


def die(job: dict[str, Any]) -> None:
    Path(job["marker"]).write_text("killed")
    os.kill(os.getpid(), signal.SIGKILL)


class KillOnWrite(Wrapper):
    """Dies right after the N-th change of a file (write, delete, copy) the store made."""

    def __init__(self, inner: Backend, job: dict[str, Any], after: int) -> None:
        super().__init__(inner)
        self.job = job
        self.after = after
        self.count = 0

    def _changed(self, key: str) -> None:
        if reserved(key):
            return
        self.count += 1
        if self.count == self.after and first_run(self.job):
            die(self.job)

    def write(self, key: str, data: bytes, *args: Any, **kwargs: Any) -> Any:
        out = self.inner.write(key, data, *args, **kwargs)
        self._changed(key)
        return out

    def delete(self, key: str, *args: Any, **kwargs: Any) -> Any:
        out = self.inner.delete(key, *args, **kwargs)
        self._changed(key)
        return out

    def copy(self, src: str, dst: str, *args: Any, **kwargs: Any) -> Any:
        out = self.inner.copy(src, dst, *args, **kwargs)
        self._changed(dst)
        return out


def workspace(job: dict[str, Any]) -> Workspace:
    backend = open_backend(job["url"], job["storage_options"])
    kind, _, n = job["kill"].partition(":")
    if kind == "write":
        backend = KillOnWrite(backend, job, int(n))
    return Workspace(job["url"], backend=backend)


def plain(job: dict[str, Any], ws: Workspace) -> Any:
    from dbos import DBOS

    from fsseam.integrations.dbos import DurableTools

    kind, _, target = job["kill"].partition(":")

    class Killing(DurableTools):
        def run(self, name: str, args: dict[str, Any], seen: Any,
                call_id: str | None = None) -> dict[str, Any]:
            out = super().run(name, args, seen, call_id)
            if kind == "call" and name == target and first_run(job):
                die(job)
            return out

    tools = Killing(ws, owner="worker")

    @DBOS.workflow(name="fsseam_crash_plain")
    def work() -> list[dict[str, Any]]:
        seen: dict[str, Any] = {}
        out = []
        for name, args in PLAN:
            result = tools.call(name, args, seen)
            out.append({"tool": name, "ok": result.ok, "text": result.text})
        return out

    return work


def agent(job: dict[str, Any], ws: Workspace) -> Any:
    """A DBOSAgent whose model makes the calls of :data:`PLAN`, one a turn, then stops."""
    from pydantic_ai import Agent
    from pydantic_ai.durable_exec.dbos import DBOSAgent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from fsseam.integrations.pydantic_ai import FsseamToolset
    from fsseam.integrations.pydantic_ai_dbos import DBOSFsseamToolset

    kind, _, target = job["kill"].partition(":")

    def model(messages: list[Any], info: AgentInfo) -> ModelResponse:
        done = sum(1 for m in messages for p in m.parts if p.part_kind in (
            "tool-return", "retry-prompt"))
        if done == len(PLAN):
            return ModelResponse(parts=[TextPart("done")])
        name, args = PLAN[done]
        return ModelResponse(parts=[ToolCallPart(name, args, tool_call_id=f"call-{done}")])

    class Killing(DBOSFsseamToolset):
        async def run(self, name: str, args: dict[str, Any], ctx: Any) -> dict[str, Any]:
            out = await super().run(name, args, ctx)
            if kind == "call" and name == target and first_run(job):
                die(job)
            return out

    names = sorted({name for name, _ in PLAN})
    toolset = Killing(FsseamToolset(ws, names=names), owner="worker")
    return DBOSAgent(Agent(FunctionModel(model), name="fixer", toolsets=[toolset]))


def summary(messages: list[Any]) -> list[dict[str, Any]]:
    """Each tool call's answer in a run's messages: its tool, whether it was refused, text."""
    out = []
    for message in messages:
        for part in message.parts:
            if part.part_kind == "tool-return":
                out.append({"tool": part.tool_name, "ok": part.outcome != "failed",
                            "text": str(part.content)})
            elif part.part_kind == "retry-prompt":
                out.append({"tool": part.tool_name, "ok": False, "text": str(part.content)})
    return out


def main(argv: Iterable[str]) -> None:
    job = json.loads(next(iter(argv)))
    warnings.simplefilter("ignore")
    from dbos import DBOS, SetWorkflowID

    ws = workspace(job)
    work = plain(job, ws) if job["form"] == "plain" else None
    fixer = agent(job, ws) if job["form"] == "agent" else None
    DBOS(config={"name": "fsseam-crash", "system_database_url": f"sqlite:///{job['db']}",
                 "log_level": "WARNING"})
    DBOS.launch()
    try:
        if DBOS.get_workflow_status(WORKFLOW) is None:
            with SetWorkflowID(WORKFLOW):
                handle = DBOS.start_workflow(work) if work is not None else None
                result = fixer.run_sync("go") if handle is None else None
        else:
            handle = DBOS.retrieve_workflow(WORKFLOW)
        if handle is not None:
            result = handle.get_result(polling_interval_sec=0.02)
        if fixer is not None:
            result = summary(result.all_messages())
        status = DBOS.get_workflow_status(WORKFLOW)
        print(json.dumps({"result": result, "status": status.status if status else None,
                          "recovery_attempts": status.recovery_attempts if status else None}),
              flush=True)
    except BaseException:
        DBOS.destroy()
        raise
    # The workflow's end is in the database: nothing is left for DBOS's shutdown to save,
    # and its wait for background threads would cost every launch most of a second.
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
