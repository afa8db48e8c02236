"""Pydantic AI's DBOS agents on fsseam: each fsseam tool call a DBOS step.

    from pydantic_ai import Agent
    from pydantic_ai.durable_exec.dbos import DBOSAgent
    from fsseam.integrations.pydantic_ai import FsseamToolset
    from fsseam.integrations.pydantic_ai_dbos import DBOSFsseamToolset

    tools = DBOSFsseamToolset(FsseamToolset(Workspace("s3://b/p")), owner="agent")
    agent = DBOSAgent(Agent(model, name="fixer", toolsets=[tools]))

Pydantic AI's DBOS support (``DBOSAgent``, the ``DBOSDurability`` capability) runs model
requests and MCP calls as steps, and other toolsets' calls as they are, in the workflow:
a process killed after such a call's change landed runs it again on recovery. This wrapper
runs every call of the fsseam toolset inside a workflow as a DBOS step named
``fsseam.TOOL``, with the call id ``dbos:WORKFLOW:STEP:TOOL_CALL_ID`` (the model's
tool-call id, from the recorded model response, and the step's position: both the same
when recovery runs the call again), so a call whose change landed answers as it did and
changes nothing. Outside a workflow the calls are the wrapped toolset's own.

The owner's observations travel in the run's message history: each step's tool result
carries, as metadata the model never sees (under :data:`HISTORY_KEY`), the entries its
call recorded, sealed for ``owner`` and the workspace; each step starts from the entries
the history it is given carries. Recovery replays the recorded model responses and tool
results, so the history, and with it what the agent has read, is what it was.

The wrapped toolset's names, descriptions, schemas, ``approve`` and ``retry_codes`` hold;
a malformed call is a ``ModelRetry`` before any step, a refusal a failed tool result.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

try:
    from dbos import DBOS, StepOptions
    from pydantic_ai import BinaryContent, ModelRetry, RunContext, ToolReturn
    from pydantic_ai.exceptions import ApprovalRequired, ToolFailed
    from pydantic_ai.messages import ToolReturnPart
    from pydantic_ai.toolsets import ToolsetTool, WrapperToolset
except ImportError as e:  # pragma: no cover - an extra is missing
    raise ImportError(
        f"fsseam.integrations.pydantic_ai_dbos needs dbos and pydantic-ai-slim: pip install "
        f"'fsseam[dbos,pydantic-ai]' (from a clone: pip install '.[dbos,pydantic-ai]'): {e}"
    ) from e
try:  # the failed result Pydantic AI itself builds from ToolFailed, here with metadata
    from pydantic_ai.exceptions import ToolFailedError
except ImportError:  # pragma: no cover - older releases: the entries wait for the next result
    ToolFailedError = None  # type: ignore[assignment,misc]

from ..errors import FsError
from ..observations.sealing import Binding
from ..tools.base import (
    ToolResult,
    answer,
    attempt,
    failed,
    parse_arguments,
    result_form,
    result_of,
)
from .dbos import (
    StepObservations,
    binding_for,
    merge_entries,
    step_call_id,
)
from .pydantic_ai import RESULT_KEY, FsseamToolset

__all__ = ["HISTORY_KEY", "DBOSFsseamToolset", "carried_entries"]

HISTORY_KEY = "fsseam_dbos"
"""The key of a tool result's metadata under which the step's entries travel:
``{"workspace": URL, "entries": {key: entry as JSON, with its seal}}``."""


def carried_entries(messages: Iterable[Any], workspace: str) -> dict[str, Any]:
    """The entries a history's tool results carry for ``workspace`` (sealed JSON; per key
    the later recording wins). Each one's seal is checked when a call uses it."""
    kept: dict[str, Any] = {}
    for message in messages:
        for part in getattr(message, "parts", ()):
            metadata = getattr(part, "metadata", None)
            carried = metadata.get(HISTORY_KEY) if isinstance(metadata, dict) else None
            if isinstance(carried, dict) and carried.get("workspace") == workspace:
                merge_entries(kept, carried.get("entries") or {}, limit=None)
    return kept


@dataclass
class DBOSFsseamToolset(WrapperToolset[Any]):
    """An :class:`~fsseam.integrations.pydantic_ai.FsseamToolset` whose calls inside a
    DBOS workflow are DBOS steps. ``owner``: the observation owner of those calls (their
    entries are sealed for it and the workspace). ``step``: DBOS step options (retries);
    the name defaults to ``fsseam.TOOL``."""

    owner: str = "agent"
    step: StepOptions | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.wrapped, FsseamToolset):
            raise TypeError(f"DBOSFsseamToolset wraps an FsseamToolset, not "
                            f"{type(self.wrapped).__name__}")

    @property
    def toolset(self) -> FsseamToolset:
        assert isinstance(self.wrapped, FsseamToolset)
        return self.wrapped

    @property
    def binding(self) -> Binding:
        return binding_for(self.toolset.context.workspace, self.owner)

    async def call_tool(self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any],
                        tool: ToolsetTool[Any]) -> Any:
        if DBOS.workflow_id is None or DBOS.step_id is not None:
            return await self.wrapped.call_tool(name, tool_args, ctx, tool)
        fsseam_tool = self.toolset.context.tools.get(name)
        checked = attempt(lambda: fsseam_tool.validate(parse_arguments(tool_args)),
                          action=name, vocabulary=fsseam_tool.vocabulary)
        if isinstance(checked, FsError):
            # Only a call the tool cannot even read is a retry, decided before any step.
            raise ModelRetry(answer(fsseam_tool, checked).text)
        if name in self.toolset.approve and not ctx.tool_call_approved:
            raise ApprovalRequired
        options: StepOptions = {"name": f"fsseam.{name}"}
        options.update(self.step or {})
        record = await DBOS.run_step_async(options, self.run, name, dict(tool_args), ctx)
        return self._answer(name, record, ctx, tool)

    async def run(self, name: str, args: dict[str, Any], ctx: RunContext[Any]
                   ) -> dict[str, Any]:
        """The step: the call under its call id, its observations the history's."""
        workspace = self.toolset.context.workspace
        try:
            kept = carried_entries(ctx.messages, workspace.url)
        except FsError as e:  # a damaged history: refused, never read as "nothing read"
            return {"result": result_form(failed(name, e)), "observations": {}}
        store = StepObservations(self.binding, kept)
        context = workspace.context(self.owner, observations=store)
        result = await asyncio.to_thread(context.tools.execute, name, args,
                                         call_id=step_call_id(ctx.tool_call_id))
        return {"result": result_form(result), "observations": store.drain()}

    def _answer(self, name: str, record: dict[str, Any], ctx: RunContext[Any],
                tool: ToolsetTool[Any]) -> Any:
        """What the wrapped toolset answers for the recorded result (in workflow code: the
        same on a first run and on a recovery)."""
        result = result_of(record["result"])
        entries = record["observations"]
        carried = {HISTORY_KEY: {"workspace": self.toolset.context.workspace.url,
                                 "entries": entries}} if entries else None
        if result.error is not None and result.error.code in self.toolset.retry_codes:
            raise ModelRetry(result.text)
        if result.ok:
            if result.images:
                return ToolReturn(_with_images(result), metadata=carried)
            return result.text if carried is None else ToolReturn(result.text, metadata=carried)
        if ToolFailedError is None:
            raise ToolFailed(result.text)
        facts = {k: v for k, v in record["result"].items() if k not in ("text", "images")}
        raise ToolFailedError(ToolReturnPart(
            tool_name=name, content=result.text, tool_call_id=ctx.tool_call_id or "",
            tool_kind=tool.tool_def.tool_kind, outcome="failed",
            metadata={**(carried or {}), RESULT_KEY: facts}))


def _with_images(result: ToolResult) -> list[Any]:
    images = [BinaryContent.narrow_type(BinaryContent(data=i.data, media_type=i.media_type))
              for i in result.images]
    return [result.text, *images]
