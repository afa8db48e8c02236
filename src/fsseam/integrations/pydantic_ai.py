"""Pydantic AI on fsseam: a toolset of fsseam's tools, on one observation owner.

    from pydantic_ai import Agent
    from fsseam import Workspace
    from fsseam.integrations.pydantic_ai import FsseamToolset

    agent = Agent(model, toolsets=[FsseamToolset(Workspace("s3://b/p"), owner="agent")])

Each tool keeps fsseam's name, description and JSON schema (the arguments are validated by
fsseam, with its texts). A successful call returns fsseam's text. A refused one raises what
Pydantic AI expects of a tool:

- ``ModelRetry`` (a retry prompt, counted against the tool's retries) when the call itself
  was wrong and the same tool with other arguments fixes it: a path, an ``old_string`` that
  matches nothing or several places, an argument out of range (:data:`RETRY_CODES`);
- ``ToolFailed`` (a failed result the model adapts to, not counted as a retry) for
  everything else: a file that changed since it was read (FS_STALE) or was never read
  (FS_NOT_OBSERVED), where the next call must be a read, and what no call fixes (a
  read-only workspace, a binary file, a storage failure).

Both carry fsseam's text, ``Error [CODE]: ...`` with the next step.

Owners: by default each conversation (Pydantic AI's ``conversation_id``, kept in the
message history) is its own owner, ``conversation/ID``, and what it has read lives in its
message history (:mod:`fsseam.integrations.pydantic_ai_history`): every tool result
carries, as metadata the model never sees, the observations its call recorded, and each
run rebuilds them from the history it is given. A history saved as JSON and resumed in
another process keeps its reads; two conversations of one agent never share them.
``per_run=True`` gives every run its own owner (``OWNER/RUN_ID``), still seeded from the
history. ``observations=`` keeps them in a store of the caller's instead (one held in the
run's deps), under ``owner`` (default ``agent``) in that store. ``owner="name"`` (without
``per_run``) is one fixed owner whose observations live in the Workspace's store, as
before. ``approve=`` names tools whose calls stop the run for a human's approval
(Pydantic AI's deferred tools).
"""

from __future__ import annotations

import asyncio
import copy
import uuid
from collections.abc import Callable, Iterable
from typing import Any

try:
    from pydantic_ai import ModelRetry, RunContext, ToolDefinition, ToolReturn
    from pydantic_ai.exceptions import ApprovalRequired, ToolFailed
    from pydantic_ai.messages import ToolReturnPart
    from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
    from pydantic_core import SchemaValidator, core_schema
except ImportError as e:  # pragma: no cover - the extra is missing
    raise ImportError(
        f"fsseam.integrations.pydantic_ai needs pydantic-ai-slim: "
        f"pip install 'fsseam[pydantic-ai]' (from a clone: pip install '.[pydantic-ai]'): {e}"
    ) from e
try:  # the failed result Pydantic AI itself builds from ToolFailed, here with metadata
    from pydantic_ai.exceptions import ToolFailedError
except ImportError:  # pragma: no cover - older releases: the next result carries them
    ToolFailedError = None  # type: ignore[assignment,misc]

from ..errors import ErrorCode
from ..observations import ObservationStore
from ..workspace import Context, Workspace
from ._common import context_of
from .pydantic_ai_history import (
    AsOwner,
    HistoryObservations,
    claim,
    entries_from,
    metadata_of,
    release,
)

__all__ = ["DEFAULT_TOOLS", "RETRY_CODES", "FsseamToolset"]

DEFAULT_TOOLS = ("read", "write", "edit", "multi_edit", "apply_patch", "ls", "glob", "grep",
                 "delete", "move")
"""The tools a toolset holds by default: fsseam's file tools, without the Anthropic shapes
``str_replace_editor`` and ``memory`` (ask for them by name)."""

RETRY_CODES = frozenset({
    ErrorCode.FS_INVALID_ARGUMENT,
    ErrorCode.FS_NOT_FOUND,
    ErrorCode.FS_IS_DIRECTORY,
    ErrorCode.FS_ALREADY_EXISTS,
    ErrorCode.FS_NO_MATCH,
    ErrorCode.FS_MULTIPLE_MATCHES,
    ErrorCode.FS_OUTSIDE_ROOT,
})
"""Codes raised as ``ModelRetry``: other arguments to the same tool fix the call. Every
other code is ``ToolFailed``."""

_ANY_OBJECT = SchemaValidator(core_schema.dict_schema(core_schema.str_schema(),
                                                      core_schema.any_schema()))
"""Arguments pass as a JSON object: fsseam validates them, in its own words."""


class FsseamToolset(AbstractToolset[Any]):
    """fsseam's tools (``names``, default :data:`DEFAULT_TOOLS`) of one context.

    ``source``: a ``Workspace`` (a context per conversation, or of ``owner``, is made on
    it), a ``Context`` (used as it is, one owner) or a URL (with ``storage_options``).
    ``owner``: None (default) makes each conversation its own owner, its observations kept
    in its message history; a name is one fixed owner whose observations live in the
    Workspace's store. ``per_run``: an owner of its own for every run (``OWNER/RUN_ID``,
    seeded from the history; needs a Workspace or URL). ``approve``: names of tools whose
    calls need a human's approval (the run stops with ``DeferredToolRequests``).
    ``observations``: where a conversation's observations live instead of its history: a
    function of the run context returning a store (e.g. ``lambda ctx: ctx.deps.seen``); the
    entries are kept there under ``owner`` (default ``agent``).
    ``max_retries``: per tool, default the agent's. ``retry_codes``: which codes are retry
    prompts (:data:`RETRY_CODES`). On a read-only workspace the toolset holds only those
    of ``names`` that modify nothing.
    """

    def __init__(
        self,
        source: Workspace | Context | str,
        *,
        owner: str | None = None,
        storage_options: dict[str, Any] | None = None,
        names: Iterable[str] | None = None,
        id: str | None = None,
        max_retries: int | None = None,
        retry_codes: Iterable[ErrorCode] = RETRY_CODES,
        per_run: bool = False,
        approve: Iterable[str] = (),
        observations: Callable[[RunContext[Any]], ObservationStore] | None = None,
    ) -> None:
        if per_run and isinstance(source, Context):
            raise TypeError("per_run makes a context per run: pass the Workspace, not a Context")
        if observations is not None and isinstance(source, Context):
            raise TypeError("observations= binds a context per run: pass the Workspace")
        self.context: Context = context_of(source, owner or _CONVERSATION, storage_options)
        self._names = tuple(DEFAULT_TOOLS if names is None else names)
        # The definitions once (an unknown name is UnknownToolError now, not at a call):
        # fsseam's schemas are stable, byte for byte, across calls. A read-only workspace
        # offers only the tools that modify nothing.
        self._defs = {
            name: ToolDefinition(
                name=name,
                description=self.context.tools.get(name).description,
                parameters_json_schema=self.context.tools.get(name).parameters(),
            )
            for name in self.context.tools.offered(self._names)
        }
        self._id = id
        self._base = owner
        self.max_retries = max_retries
        self.retry_codes = frozenset(retry_codes)
        self.per_run = per_run
        self.approve = frozenset(approve)
        # A context per run (its observations in the history or the caller's store): not
        # for a Context, nor for one fixed owner in the Workspace's store.
        self._per_run_context = not isinstance(source, Context) and (
            owner is None or per_run or observations is not None)
        self._history: HistoryObservations | None = None
        self._observations = observations
        self._claimed: str | None = None

    @property
    def id(self) -> str | None:
        return self._id

    @property
    def owner(self) -> str:
        return self.context.owner

    def __repr__(self) -> str:
        return f"FsseamToolset({self.context.workspace.url!r}, owner={self.owner!r})"

    async def for_run(self, ctx: RunContext[Any]) -> AbstractToolset[Any]:
        if not self._per_run_context:
            return self
        workspace = self.context.workspace
        run_id = ctx.run_id or uuid.uuid4().hex
        run = copy.copy(self)
        if self._observations is not None:
            # The caller's store (one in the deps) is the scope: every run of it is one
            # owner there, while each run binds a name of its own, so concurrent runs with
            # other deps never meet.
            stored = AsOwner(self._observations(ctx), self._base or _DEPS)
            run.context = workspace.context(f"{stored.owner}/{run_id}", observations=stored)
            return run
        # The owner only names the conversation (the history, not the name, holds its
        # reads): a release without conversation ids gets a name per run.
        conversation = getattr(ctx, "conversation_id", None) or uuid.uuid4().hex
        owner = self._base or f"{_CONVERSATION}/{conversation}"
        run._history = HistoryObservations(entries_from(ctx.messages, workspace.url))
        if self.per_run:
            owner = f"{owner}/{run_id}"
        elif workspace.policy is not None:
            owner = claim(workspace.policy, owner, f"{owner}/{run_id}")
            run._claimed = owner
        run.context = workspace.context(owner, observations=run._history)
        return run

    async def __aexit__(self, *args: Any) -> bool | None:
        # The run is over: its history holds what travels. The policy keeps the owner's
        # binding (it has no unbind), so the entries go now, not with the workspace.
        if self._history is not None:
            self._history.clear()
        if self._claimed is not None and self.context.workspace.policy is not None:
            release(self.context.workspace.policy, self._claimed)
        return None

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        retries = ctx.max_retries if self.max_retries is None else self.max_retries
        return {
            name: ToolsetTool(toolset=self, tool_def=tool_def, max_retries=retries,
                              args_validator=_ANY_OBJECT)
            for name, tool_def in self._defs.items()
        }

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> str | ToolReturn[Any]:
        if name in self.approve and not ctx.tool_call_approved:
            raise ApprovalRequired
        result = await asyncio.to_thread(self.context.tools.execute, name, tool_args)
        if result.error is not None and result.error.code in self.retry_codes:
            # A retry prompt has no metadata: what the call recorded waits for the next result.
            raise ModelRetry(result.text)
        if not result.ok and ToolFailedError is None:
            raise ToolFailed(result.text)
        carried = self._carried()
        if result.ok:
            return result.text if carried is None else ToolReturn(result.text, metadata=carried)
        if carried is None:
            raise ToolFailed(result.text)
        raise ToolFailedError(ToolReturnPart(
            tool_name=name, content=result.text, tool_call_id=ctx.tool_call_id or "",
            tool_kind=tool.tool_def.tool_kind, outcome="failed", metadata=carried))

    def _carried(self) -> dict[str, Any] | None:
        """The metadata of this call's result: the entries not carried yet, or None."""
        if self._history is None:
            return None
        entries = self._history.take(self.owner)
        return metadata_of(self.context.workspace.url, entries) if entries else None


_CONVERSATION = "conversation"
_DEPS = "agent"
