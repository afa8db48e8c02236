"""DBOS on fsseam: every tool call a durable step, the owner's observations in the
workflow's state.

A DBOS workflow runs each step at least once: a process killed after a step's change
landed and before DBOS saved the step's output runs the step again on recovery. Each call
here is a step with a call id that recovery gives it again (the workflow id and the step's
id for a plain workflow, the workflow id and the model's tool-call id for a Pydantic AI
agent), so the second run of a call whose change landed answers as the first did and
changes nothing (docs/durable.md).

Plain workflows, with :class:`DurableTools`::

    tools = DurableTools(Workspace("s3://bucket/project"), owner="fixer")

    @DBOS.workflow()
    def fix(path: str) -> str:
        seen: dict[str, Any] = {}            # the owner's observations: workflow state
        tools.call("read", {"path": path}, seen)
        return tools.call("edit", {...}, seen).text

What the owner has read travels as the steps' inputs and outputs: a step gets the
observations the workflow holds and returns the ones its call recorded, which the workflow
(not the step) merges into ``seen``. A recovered workflow replays the recorded outputs in
order and so holds exactly what it held; a relaunched process needs nothing but DBOS's
database and the store. Each entry is sealed for the owner and the workspace (signed with
the workspace's ``observation_key`` when it has one): one written by hand is ignored.

Pydantic AI agents, with :class:`DBOSFsseamToolset` around an
:class:`~fsseam.integrations.pydantic_ai.FsseamToolset`: Pydantic AI's DBOS support makes
model requests and MCP calls steps but leaves other toolsets' calls unwrapped (they would
run again on recovery); this wrapper runs each fsseam call as a step, its observations
carried in the run's message history (the tool results' metadata, which recovery replays
from the recorded steps).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, MutableMapping
from typing import Any

try:
    from dbos import DBOS, StepOptions
except ImportError as e:  # pragma: no cover - the extra is missing
    raise ImportError(
        f"fsseam.integrations.dbos needs dbos: pip install 'fsseam[dbos]' (from a clone: "
        f"pip install '.[dbos]'): {e}"
    ) from e
from pydantic import ValidationError

from ..errors import ErrorCode, FsError
from ..messages import Reason
from ..observations import ObservationEntry, newer
from ..observations.sealing import SEAL_FIELD, Binding, opened, sealed
from ..tools.base import ToolResult, result_form, result_of
from ..workspace import Workspace

__all__ = [
    "DEFAULT_MAX_OBSERVATIONS",
    "DurableTools",
    "StepObservations",
    "binding_for",
    "merge_entries",
    "step_call_id",
]

DEFAULT_MAX_OBSERVATIONS = 2_000
"""Entries a workflow's state keeps per owner; past it the oldest expire (and read as "not
read yet"). Every step receives them and DBOS records each step's new ones, so the bound
is small."""

_WHERE = "dbos:seen"
"""Names the workflow's observations (``seen``) in refusals and logs."""
_THREAD = "dbos"
"""The scope entries are sealed for, beside the owner and the workspace: DBOS state."""


def binding_for(workspace: Workspace, owner: str) -> Binding:
    """What a DBOS workflow's entries of ``owner`` are sealed for: the owner and the
    workspace (its ``observation_key`` signs them)."""
    return Binding(owner, workspace.url, _THREAD, workspace.observation_key)


def step_call_id(*parts: object) -> str | None:
    """The call id of the step running now: ``dbos:WORKFLOW:STEP`` plus ``parts`` (the
    model's tool-call id), the same on every run of the step (DBOS numbers a workflow's
    steps in the order its code starts them, and recovery runs the same code), unique
    across workflows. None outside a workflow (a plain call: nothing runs it twice)."""
    workflow, step = DBOS.workflow_id, DBOS.step_id
    if workflow is None:
        return None
    return ":".join(["dbos", workflow, str(step), *(str(p) for p in parts)])


def _foreign(detail: str) -> FsError:
    """The refusal of a state fsseam did not write: never read as "nothing read" (that
    would refuse every edit and hide damaged workflow state)."""
    return FsError(ErrorCode.FS_BACKEND, reason=Reason.agents_state_foreign,
                   details={"where": _WHERE,
                            "detail": detail[:200]})


def _parsed(raw: Any) -> ObservationEntry:
    if not isinstance(raw, Mapping):
        raise _foreign(f"entry={type(raw).__name__}")
    try:
        return ObservationEntry.model_validate({k: v for k, v in raw.items() if k != SEAL_FIELD})
    except ValidationError as e:
        raise _foreign(str(e.errors()[0]["type"])) from e


class StepObservations:
    """The owner's observations while one step runs: the workflow's entries (sealed JSON,
    each opened and its seal checked when the policy first asks for its key) and what the
    call records, kept apart for the step's output (:meth:`drain`)."""

    def __init__(self, binding: Binding, kept: Mapping[str, Any]) -> None:
        self.binding = binding
        self.kept = kept
        self._new: dict[str, ObservationEntry] = {}

    def __repr__(self) -> str:
        return f"StepObservations(kept={len(self.kept)}, new={len(self._new)})"

    def get(self, owner: str, key: str, *, fresh: bool = False) -> ObservationEntry | None:
        mine = self._new.get(key)
        raw = self.kept.get(key)
        if raw is None:
            return mine
        _parsed(raw)  # a value that is no entry at all is damage, not "not read"
        return newer(opened(self.binding, key, raw, where=f"{_WHERE}[{key!r}]"), mine)

    def put(self, owner: str, entries: Mapping[str, ObservationEntry]) -> None:
        for key, entry in entries.items():
            won = newer(self._new.get(key), entry)
            assert won is not None
            self._new[key] = won

    def drain(self) -> dict[str, dict[str, Any]]:
        """What the call recorded, sealed: the step's output carries it to the workflow."""
        out = {k: sealed(self.binding, k, e) for k, e in self._new.items()}
        self._new = {}
        return out


def merge_entries(state: MutableMapping[str, Any], new: Mapping[str, Any], *,
                  limit: int | None = DEFAULT_MAX_OBSERVATIONS) -> None:
    """Merge a step's entries into the workflow's ``state`` in place: per key the one
    recorded later wins (:func:`~fsseam.observations.newer`); past ``limit`` (None: no
    bound) the oldest expire. Runs in workflow code, so a recovered workflow merges the
    same outputs into the same state."""
    for key, raw in new.items():
        old = state.get(key)
        if old is None:
            state[key] = raw
            continue
        kept = _parsed(old)
        if newer(kept, _parsed(raw)) is not kept:
            state[key] = raw
    if limit is not None and len(state) > limit:
        for key in sorted(state, key=lambda k: float(state[k].get("at", 0.0)))[
                : len(state) - limit]:
            del state[key]


class DurableTools:
    """fsseam's tools for plain DBOS workflows: :meth:`call` inside a ``@DBOS.workflow()``
    runs the call as a DBOS step (outside one, as a plain call).

    ``source``: a Workspace or a URL (with ``storage_options``). ``owner``: the
    observation owner every call runs as; two workflows of one owner never share what
    they read (each holds its own ``seen``). ``step``: DBOS step options (retries) for
    every call; its ``name`` defaults to ``fsseam.TOOL``. ``max_observations``: entries a
    workflow's state keeps. Make it before ``DBOS.launch()``, as the workflows that use it.
    """

    def __init__(self, source: Workspace | str, *, owner: str = "agent",
                 storage_options: dict[str, Any] | None = None,
                 step: StepOptions | None = None,
                 max_observations: int = DEFAULT_MAX_OBSERVATIONS) -> None:
        if isinstance(source, str):
            source = Workspace(source, storage_options=storage_options)
        elif storage_options is not None:
            raise TypeError("storage_options belong to the Workspace; pass them when you make it")
        self.workspace = source
        self.owner = owner
        self.step: StepOptions = step or {}
        self.max_observations = max_observations
        self.binding = binding_for(source, owner)

    def __repr__(self) -> str:
        return f"DurableTools({self.workspace.url!r}, owner={self.owner!r})"

    def call(self, name: str, args: Mapping[str, Any] | None, seen: MutableMapping[str, Any]
             ) -> ToolResult:
        """Run one call of the tool ``name`` as a step; ``seen``: the owner's observations
        in the workflow's state (a dict the workflow holds, ``{}`` at first), updated with
        what the call recorded."""
        if DBOS.workflow_id is None:  # no workflow: a plain call, nothing runs it again
            out = self.run(name, dict(args or {}), seen)
        else:
            out = DBOS.run_step(self._options(name), self.run, name, dict(args or {}),
                                dict(seen))
        merge_entries(seen, out["observations"], limit=self.max_observations)
        return result_of(out["result"])

    async def call_async(self, name: str, args: Mapping[str, Any] | None,
                         seen: MutableMapping[str, Any]) -> ToolResult:
        """:meth:`call` in an async workflow (the call runs in a worker thread)."""
        if DBOS.workflow_id is None:
            out = await self._run_async(name, dict(args or {}), seen)
        else:
            out = await DBOS.run_step_async(self._options(name), self._run_async, name,
                                            dict(args or {}), dict(seen))
        merge_entries(seen, out["observations"], limit=self.max_observations)
        return result_of(out["result"])

    def run(self, name: str, args: dict[str, Any], seen: Mapping[str, Any],
            call_id: str | None = None) -> dict[str, Any]:
        """The step itself: the call under its call id (default :func:`step_call_id`), on
        a context whose observations are ``seen``; returns ``{"result": ...,
        "observations": ...}`` (JSON)."""
        store = StepObservations(self.binding, seen)
        context = self.workspace.context(self.owner, observations=store)
        result = context.tools.execute(name, args, call_id=call_id or step_call_id())
        return {"result": result_form(result), "observations": store.drain()}

    async def _run_async(self, name: str, args: dict[str, Any], seen: Mapping[str, Any]
                         ) -> dict[str, Any]:
        return await asyncio.to_thread(self.run, name, args, seen, step_call_id())

    def _options(self, name: str) -> StepOptions:
        options: StepOptions = {"name": f"fsseam.{name}"}
        options.update(self.step)
        return options

