"""Pydantic AI on fsseam: a toolset of fsseam's tools, on one observation owner.

    from pydantic_ai import Agent
    from fsseam import Workspace
    from fsseam.integrations.pydantic_ai import FsseamToolset

    agent = Agent(model, toolsets=[FsseamToolset(Workspace("s3://b/p"), owner="agent")])

Each tool keeps fsseam's name and description; its JSON schema is the strict form
(:meth:`~fsseam.tools.base.Tool.strict_parameters`: every property required, optional ones
nullable), so OpenAI models use strict mode (``ToolDefinition.strict`` is left to Pydantic
AI's inference unless ``strict=`` says). fsseam validates the arguments, with its texts.
What a call answers is a tool result the model acts on, never a retry:

- a successful call returns fsseam's text (a read of an image adds the image, as
  ``BinaryContent`` beside the text in the tool result);
- a refused call (a missing file, an ``old_string`` that matches nothing, a stale file, a
  read-only workspace) raises ``ToolFailed``: a failed result with fsseam's text,
  ``Error [CODE]: ...`` and the next step, which uses up no retry, so a model that reads
  two missing paths goes on;
- only a malformed call (arguments that fail validation) is a ``ModelRetry``, counted
  against the tool's retries (``retry_codes=`` adds codes to it).

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

Call ids: each call runs as ``RunContext.tool_call_id`` (:mod:`fsseam.calling`), the id the
model gave the call, which a durable run (Pydantic AI's DBOS or Temporal agents) replays
with the message that carries it: a call replayed after its change landed answers as it
did and changes nothing.
"""

from __future__ import annotations

import asyncio
import copy
import uuid
from collections.abc import Callable, Iterable
from typing import Any, cast

try:
    from pydantic_ai import BinaryContent, ModelRetry, RunContext, ToolDefinition, ToolReturn
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

from ..errors import ErrorCode, FsError
from ..observations import ObservationStore
from ..observations.sealing import Binding
from ..tools.base import Tool, ToolResult, answer, attempt, facts, parse_arguments
from ..tools.registry import expand_tool_names
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

__all__ = ["DEFAULT_TOOLS", "RESULT_KEY", "RETRY_CODES", "FsseamToolset", "strict_form"]

DEFAULT_TOOLS = expand_tool_names(("files", "multi_edit", "apply_patch"))
"""The tools a toolset holds by default: the set ``files`` (read, write, edit, the finders,
delete, move, history, restore) with ``multi_edit`` and ``apply_patch``, the tools this
integration has always offered (agents written against it call them). ``names=`` takes set
names and tool names, mixed (``names="files"`` for one editor only)."""

RETRY_CODES: frozenset[ErrorCode] = frozenset()
"""Codes answered as ``ModelRetry`` beyond malformed calls: none. Every refusal is a failed
tool result the model acts on (``ToolFailed``), which uses up no retry."""

RESULT_KEY = "fsseam_result"
"""The key of a failed result's metadata holding its facts (``ok``, ``tool``, the error's
code and message), which the model never sees."""

_ANY_OBJECT = SchemaValidator(core_schema.dict_schema(core_schema.str_schema(),
                                                      core_schema.any_schema()))
"""Arguments pass as a JSON object: fsseam validates them, in its own words."""


class FsseamToolset(AbstractToolset[Any]):
    """fsseam's tools (``names``: tool names and set names of
    :data:`~fsseam.tools.TOOL_SETS`, mixed, or a string of them separated by commas;
    default the set ``files``) of one context.

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
    ``max_retries``: per tool, default the agent's (only malformed calls use them up).
    ``retry_codes``: codes answered as retry prompts too (:data:`RETRY_CODES`: none).
    ``strict``: each ``ToolDefinition.strict`` (default None: Pydantic AI infers it per
    provider; the schemas are strict-compatible). On a read-only workspace the toolset
    holds only those of ``names`` that modify nothing.
    """

    def __init__(
        self,
        source: Workspace | Context | str,
        *,
        owner: str | None = None,
        storage_options: dict[str, Any] | None = None,
        names: str | Iterable[str] | None = None,
        id: str | None = None,
        max_retries: int | None = None,
        retry_codes: Iterable[ErrorCode] = RETRY_CODES,
        per_run: bool = False,
        approve: Iterable[str] = (),
        observations: Callable[[RunContext[Any]], ObservationStore] | None = None,
        strict: bool | None = None,
    ) -> None:
        if per_run and isinstance(source, Context):
            raise TypeError("per_run makes a context per run: pass the Workspace, not a Context")
        if observations is not None and isinstance(source, Context):
            raise TypeError("observations= binds a context per run: pass the Workspace")
        self.context: Context = context_of(source, owner or _CONVERSATION, storage_options)
        # The definitions once (an unknown name is UnknownToolError now, not at a call):
        # fsseam's schemas are stable, byte for byte, across calls. A read-only workspace
        # offers only the tools that modify nothing.
        self._defs = {
            name: ToolDefinition(
                name=name,
                description=self.context.tools.get(name).description,
                parameters_json_schema=strict_form(self.context.tools.get(name)),
                strict=strict,
            )
            for name in self.context.tools.offered(DEFAULT_TOOLS if names is None else names)
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
        self._binding: Binding | None = None
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
        # Sealed for what outlives a run: the toolset's owner (or "a conversation"), the
        # workspace and the conversation; an SDK without conversation ids names none.
        run._binding = Binding(self._base or _CONVERSATION, workspace.url,
                               str(getattr(ctx, "conversation_id", None) or ""),
                               workspace.observation_key)
        run._history = HistoryObservations(entries_from(ctx.messages, run._binding))
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
        malformed = self._malformed(name, tool_args)
        if malformed is not None:
            # Only a call the tool cannot even read is a retry: the same tool, other arguments.
            raise ModelRetry(malformed)
        if name in self.approve and not ctx.tool_call_approved:
            raise ApprovalRequired
        # The model's id of the call: a durable run replaying it (DBOS, Temporal) hands the
        # same id again, and a change that already landed is answered, not made twice.
        result = await asyncio.to_thread(self.context.tools.execute, name, tool_args,
                                         call_id=ctx.tool_call_id or None)
        if result.error is not None and result.error.code in self.retry_codes:
            # A retry prompt has no metadata: what the call recorded waits for the next result.
            raise ModelRetry(result.text)
        carried = self._carried()
        if result.ok:
            if result.images:
                return ToolReturn(_with_images(result), metadata=carried)
            return result.text if carried is None else ToolReturn(result.text, metadata=carried)
        if ToolFailedError is None:
            raise ToolFailed(result.text)
        # A refusal is a failed result the model acts on (it uses up no retry); its facts
        # and what the call recorded travel in its metadata, which the model never sees.
        metadata = {**(carried or {}), RESULT_KEY: facts(result)}
        raise ToolFailedError(ToolReturnPart(
            tool_name=name, content=result.text, tool_call_id=ctx.tool_call_id or "",
            tool_kind=tool.tool_def.tool_kind, outcome="failed", metadata=metadata))

    def _malformed(self, name: str, args: dict[str, Any]) -> str | None:
        """The refusal of arguments the tool cannot validate (in fsseam's words), or None."""
        fsseam_tool = self.context.tools.get(name)
        checked = attempt(lambda: fsseam_tool.validate(parse_arguments(args)), action=name,
                          vocabulary=fsseam_tool.vocabulary)
        if isinstance(checked, FsError):
            return answer(fsseam_tool, checked).text
        return None

    def _carried(self) -> dict[str, Any] | None:
        """The metadata of this call's result: the entries not carried yet, or None."""
        if self._history is None or self._binding is None:
            return None
        entries = self._history.take(self.owner)
        return metadata_of(self._binding, entries) if entries else None


def strict_form(tool: Tool[Any, Any]) -> dict[str, Any]:
    """The tool's strict schema (:meth:`~fsseam.tools.base.Tool.strict_parameters`) with
    each nullable type written as ``anyOf`` of null and it (as Pydantic writes ``X |
    None``), the form Pydantic AI's models, schema transformers and ``TestModel`` all read;
    OpenAI's strict mode takes it as it takes a list of types."""
    return cast(dict[str, Any], _any_of_null(tool.strict_parameters()))


def _any_of_null(node: Any) -> Any:
    if isinstance(node, list):
        return [_any_of_null(n) for n in node]
    if not isinstance(node, dict):
        return node
    node = {k: _any_of_null(v) for k, v in node.items()}
    kind = node.get("type")
    if not (isinstance(kind, list) and "null" in kind):
        return node
    kinds = [k for k in kind if k != "null"]
    inner = {k: v for k, v in node.items() if k not in _OUTER}
    inner["type"] = kinds[0] if len(kinds) == 1 else kinds
    if isinstance(inner.get("enum"), list):
        inner["enum"] = [e for e in inner["enum"] if e is not None]
    # Null first: a model that fills in every argument it is shown (Pydantic AI's TestModel
    # takes the first choice) leaves the optional ones out, as strict-mode models do.
    return {**{k: v for k, v in node.items() if k in _OUTER},
            "anyOf": [{"type": "null"}, inner]}


_OUTER = ("description", "title")


def _with_images(result: ToolResult) -> list[Any]:
    """A result's text and its images, in the tool result itself (Pydantic AI sends files
    of a tool's return value natively where the model takes them, a note where not)."""
    images = [BinaryContent.narrow_type(BinaryContent(data=i.data, media_type=i.media_type))
              for i in result.images]
    return [result.text, *images]


_CONVERSATION = "conversation"
_DEPS = "agent"
