"""The OpenAI Agents SDK on fsseam: an ``ApplyPatchEditor`` for the SDK's ``ApplyPatchTool``,
and fsseam's other tools as SDK function tools, each call working as its conversation.

    from agents import Agent, Runner
    from fsseam import Workspace
    from fsseam.integrations.openai_agents import fsseam_tools

    agent = Agent(name="editor", model=..., tools=fsseam_tools(Workspace("s3://b/p")))
    await Runner.run(agent, text, context=conversation)  # a dict: it keeps what was read

``fsseam_tools`` is ``[ApplyPatchTool(editor=FsseamEditor(ws)), *function_tools(editor)]``:
what the agent's ``read`` (or ``grep`` in content mode) has seen is what its patches may
change. Each ``create_file`` / ``update_file`` / ``delete_file`` operation is one change
through fsseam's apply_patch engine (the V4A diff applied exactly, then one
compare-and-swap per file); a refused one changes nothing and answers ``status="failed"``
with fsseam's text, such as ``Error [FS_STALE]: ...``, which the SDK returns to the model in
the ``apply_patch_call_output``. Function tools answer with fsseam's text, errors included
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
    from agents import ApplyPatchTool, FunctionTool, Tool
    from agents.editor import ApplyPatchOperation, ApplyPatchResult
    from agents.tool_context import ToolContext
except ImportError as e:  # pragma: no cover - the extra is missing
    raise ImportError(
        f"fsseam.integrations.openai_agents needs openai-agents: "
        f"pip install 'fsseam[openai-agents]' (from a clone: pip install '.[openai-agents]'): {e}"
    ) from e

from ..changes import Create, Delete, FileChange, Update
from ..errors import ErrorCode, FsError
from ..patches import hunk_edit, parse_create_diff, parse_update_diff
from ..tools.native import ApplyPatchCallTool
from ..tools.run import offered, perform
from ..workspace import Context, Workspace
from ._common import context_of
from .openai_agents_state import DEFAULT_MAX_OBSERVATIONS, Conversations, session_context

__all__ = ["DEFAULT_FUNCTION_TOOLS", "FsseamEditor", "fsseam_tools", "function_tools",
           "session_context"]

DEFAULT_FUNCTION_TOOLS = ("read", "write", "edit", "multi_edit", "ls", "glob", "grep",
                          "delete", "move")
"""The tools ``function_tools`` gives by default: fsseam's file tools, without
``apply_patch`` (the native ``ApplyPatchTool`` is its form here) and without the Anthropic
shapes ``str_replace_editor`` and ``memory`` (ask for them by name)."""


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


def _function_tool(source: Context | FsseamEditor, name: str,
                   needs_approval: bool) -> FunctionTool:
    fixed = source if isinstance(source, Context) else None
    shown = fixed or source.context  # type: ignore[union-attr]
    tool = shown.tools.get(name)

    def execute(run: ToolContext[Any], arguments: str) -> str:
        try:
            context = fixed or source.context_for(run)  # type: ignore[union-attr]
        except FsError as e:  # the conversation's state cannot be used: say so, run nothing
            return perform(tool, _raise(e)).text
        return context.tools.execute(name, arguments or "{}").text

    async def invoke(run: ToolContext[Any], arguments: str) -> str:
        return await asyncio.to_thread(execute, run, arguments)

    return FunctionTool(
        name=name,
        description=tool.description,
        params_json_schema=tool.parameters(),
        on_invoke_tool=invoke,
        strict_json_schema=False,
        needs_approval=needs_approval,
    )


def _raise(error: FsError) -> Any:
    def fail() -> Any:
        raise error
    return fail


def function_tools(
    source: Context | FsseamEditor,
    names: Iterable[str] | None = None,
    *,
    needs_approval: Iterable[str] = (),
) -> list[FunctionTool]:
    """fsseam's tools as SDK function tools, with their own schemas and descriptions
    (``names``: which, default :data:`DEFAULT_FUNCTION_TOOLS`; on a read-only workspace
    only those that modify nothing). Pass the editor so reads and patches share its owners
    (each run's conversation, or its fixed owner), or a ``Context`` for one fixed owner.
    ``needs_approval``: the names whose calls stop the run until approved
    (``RunState.approve``). An unknown name raises ``UnknownToolError``."""
    context = source.context if isinstance(source, FsseamEditor) else source
    chosen = DEFAULT_FUNCTION_TOOLS if names is None else tuple(names)
    approve = set(needs_approval)
    return [_function_tool(source, n, n in approve) for n in context.tools.offered(chosen)]


def fsseam_tools(
    source: Workspace | Context | str,
    *,
    owner: str | None = None,
    storage_options: dict[str, Any] | None = None,
    names: Iterable[str] | None = None,
    needs_approval: Iterable[str] = (),
    max_observations: int = DEFAULT_MAX_OBSERVATIONS,
) -> list[Tool]:
    """An agent's tools: the SDK's ``ApplyPatchTool`` with a :class:`FsseamEditor`, then
    :func:`function_tools` (``names``) on the same editor. Without ``owner`` each run works
    as its conversation (see the module); ``owner=`` is one fixed owner. ``needs_approval``:
    tool names (``"apply_patch"`` included) whose calls wait for the application's
    approval. On a read-only workspace only the function tools that modify nothing (no
    ``ApplyPatchTool``, which can only modify)."""
    editor = FsseamEditor(source, owner=owner, storage_options=storage_options,
                          max_observations=max_observations)
    approve = set(needs_approval)
    tools = function_tools(editor, names, needs_approval=approve)
    patch: list[Tool] = [ApplyPatchTool(editor=editor, needs_approval="apply_patch" in approve)
                         for _ in offered(editor.context.fs, [_PATCH])]
    return [*patch, *tools]
