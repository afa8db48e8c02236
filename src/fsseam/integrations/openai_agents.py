"""The OpenAI Agents SDK on fsseam: an ``ApplyPatchEditor`` for the SDK's ``ApplyPatchTool``,
and fsseam's tools as strict SDK function tools, each call working as its conversation.

    from agents import Agent, Runner
    from fsseam import Workspace
    from fsseam.integrations.openai_agents import fsseam_tools

    agent = Agent(name="editor", model=model, tools=fsseam_tools(ws, model=model))
    await Runner.run(agent, text, context=conversation)  # a dict: it keeps what was read

``fsseam_tools`` gives the ``openai`` tool set by default: ``apply_patch``, ``read``,
``ls``, ``glob``, ``grep``. ``apply_patch`` is the hosted ``ApplyPatchTool`` with a
:class:`FsseamEditor` on a Responses model, and a function tool taking the same patches on
every other model (Chat Completions rejects hosted tools). What the agent's ``read`` has
seen, or what the application showed it in the prompt (:meth:`FsseamEditor.show`), is what
its patches may change. Each ``create_file`` / ``update_file`` / ``delete_file`` operation
is one change through fsseam's apply_patch engine (then one compare-and-swap per file); a
refused one changes nothing and answers ``status="failed"`` with fsseam's text, such as
``Error [FS_STALE]: ...``, which the SDK returns to the model in the
``apply_patch_call_output``. Function tools answer with fsseam's text, errors included
(the SDK's function outputs have no error flag).

Whose reads: without ``owner=``, each call runs as its conversation, and what it read is
kept in the SDK's own state (:mod:`fsseam.integrations.openai_agents_state`): a mapping run
context (``RunState`` strings carry it), an ``SQLiteSession``
(:func:`~fsseam.integrations.openai_agents_state.session_context`), else one owner per run.
So one tool list serves many conversations, and none sees another's reads. ``owner=`` (or
a ``Context``) is one fixed owner for every run, in the workspace's store.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

try:
    from agents import ApplyPatchTool, Tool
    from agents.editor import ApplyPatchOperation, ApplyPatchResult
    from agents.models.interface import Model
except ImportError as e:  # pragma: no cover - the extra is missing
    raise ImportError(
        f"fsseam.integrations.openai_agents needs openai-agents: "
        f"pip install 'fsseam[openai-agents]' (from a clone: pip install '.[openai-agents]'): {e}"
    ) from e

from ..changes import Create, Delete, FileChange, Update
from ..errors import ErrorCode, FsError
from ..patches import hunk_edit, parse_create_diff, parse_update_diff
from ..tools.native import ApplyPatchCallTool
from ..tools.run import perform
from ..tools.sets import TOOL_SETS
from ..workspace import Context, Workspace
from ._common import context_of
from .openai_agents_state import DEFAULT_MAX_OBSERVATIONS, Conversations, session_context
from .openai_agents_tools import (
    DEFAULT_TOOLS,
    Approval,
    approvals,
    function_tool,
    function_tools,
    hosts_apply_patch,
)

__all__ = ["DEFAULT_FUNCTION_TOOLS", "DEFAULT_TOOLS", "FsseamEditor", "fsseam_tools",
           "function_tools", "hosts_apply_patch", "session_context"]

DEFAULT_FUNCTION_TOOLS = TOOL_SETS[DEFAULT_TOOLS]
"""The tools an agent gets by default: the ``openai`` set (``apply_patch``, ``read`` and
the finders)."""


class FsseamEditor:
    """The ``ApplyPatchEditor`` the SDK's ``ApplyPatchTool`` calls.

    ``source``: a ``Workspace``, a ``Context`` (one fixed owner; share it with
    :func:`function_tools`), or a URL (with ``storage_options``). ``owner``: one fixed
    owner for every run; without it each operation runs as the conversation of its run
    (``operation.ctx_wrapper``), its reads kept in the SDK's state (``max_observations``
    of them per conversation). :attr:`context` is the context of calls made outside a run
    (owner ``"agent"`` unless given). The methods are coroutines: the storage calls run in
    a worker thread, off the event loop.
    """

    def __init__(
        self,
        source: Workspace | Context | str,
        *,
        owner: str | None = None,
        storage_options: dict[str, Any] | None = None,
        max_observations: int = DEFAULT_MAX_OBSERVATIONS,
    ) -> None:
        self.context: Context = context_of(source, owner or "agent", storage_options)
        self.owner = owner if not isinstance(source, Context) else self.context.owner
        self.conversations = Conversations(self.context.workspace, max_entries=max_observations)

    def __repr__(self) -> str:
        return f"FsseamEditor({self.context.workspace.url!r}, owner={self.owner!r})"

    def context_for(self, run: Any) -> Context:
        """The context a call of the run ``run`` (a ``RunContextWrapper``; None outside a
        run) works in."""
        if self.owner is not None or run is None:
            return self.context
        return self.conversations.context(run)

    def show(self, path: str, context: Any = None) -> str:
        """The whole text of ``path`` for the application to put in a run's prompt,
        recorded as read (:meth:`fsseam.Context.show`) by the conversation of the run whose
        context is ``context`` (the mapping given to ``Runner.run``, or
        :func:`session_context`), or by the fixed owner. The model may then patch the file
        without reading it; a change made meanwhile makes the patch FS_STALE."""
        if self.owner is not None:
            return self.context.show(path)
        if context is None:
            raise TypeError("pass the run's context (a dict given to Runner.run) to show a "
                            "file to its conversation, or give the editor an owner")
        return self.context_for(_Run(context)).show(path)

    async def create_file(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        return await asyncio.to_thread(self.apply, operation)

    async def update_file(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        return await asyncio.to_thread(self.apply, operation)

    async def delete_file(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        return await asyncio.to_thread(self.apply, operation)

    def apply(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        """One operation as one change (blocking): ``completed`` with Codex's summary of the
        files changed, or ``failed`` with fsseam's error, every file left as it was. It is
        answered as the Responses API's ``apply_patch_call`` is (the same tool)."""
        result = perform(_PATCH, lambda: self.context_for(operation.ctx_wrapper).fs.change(
            [_change(operation)]), operation.path)
        return ApplyPatchResult(status="completed" if result.ok else "failed",
                                output=result.text)


class _Run:
    """A run that has not started yet, seen through its context (``show``)."""

    def __init__(self, context: Any) -> None:
        self.context = context


_PATCH = ApplyPatchCallTool()
"""How an operation is answered: the text of OpenAI's native ``apply_patch`` tool."""


def _change(op: ApplyPatchOperation) -> FileChange:
    if op.type == "delete_file":
        return Delete(op.path)
    if op.diff is None:
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason="native_no_diff",
                      details={"operation": op.type})
    if op.type == "create_file":
        return Create(op.path, parse_create_diff(op.diff))
    hunks = parse_update_diff(op.diff) if op.diff.strip() else ()
    return Update(op.path, hunk_edit(hunks) if hunks else None, op.move_to)


def fsseam_tools(
    source: Workspace | Context | FsseamEditor | str,
    *,
    owner: str | None = None,
    storage_options: dict[str, Any] | None = None,
    names: str | Iterable[str] | None = None,
    needs_approval: Approval = (),
    max_observations: int = DEFAULT_MAX_OBSERVATIONS,
    model: Model | str | None = None,
    hosted: bool | None = None,
) -> list[Tool]:
    """An agent's tools, one per name (``names``: tool and set names, default
    :data:`DEFAULT_TOOLS`, the ``openai`` set), all on one :class:`FsseamEditor` (or the
    one given). ``apply_patch`` is the SDK's hosted ``ApplyPatchTool`` where the model runs
    it (:func:`hosts_apply_patch` of ``model``, the agent's model; ``hosted=`` decides
    instead), else a strict function tool taking the same patches, which every model runs.
    Without ``owner`` each run works as its conversation (see the module); ``owner=`` is
    one fixed owner. ``needs_approval``: True (every tool that can change a file), tool
    names, or ``{name: bool or the SDK's callable}`` (the hosted tool's gets the
    operation, a function tool's its arguments). On a read-only workspace only the tools
    that modify nothing."""
    if isinstance(source, FsseamEditor):
        if storage_options is not None or owner is not None:
            raise TypeError("owner and storage_options belong to the FsseamEditor given")
        editor = source
    else:
        editor = FsseamEditor(source, owner=owner, storage_options=storage_options,
                              max_observations=max_observations)
    offered = editor.context.tools.offered(DEFAULT_TOOLS if names is None else names)
    approve = approvals(editor.context, offered, needs_approval)
    native = hosts_apply_patch(model) if hosted is None else hosted
    return [ApplyPatchTool(editor=editor, needs_approval=approve[n])
            if n == _PATCH.name and native else function_tool(editor, n, approve[n])
            for n in offered]
