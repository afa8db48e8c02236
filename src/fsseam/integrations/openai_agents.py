"""The OpenAI Agents SDK on fsseam: an ``ApplyPatchEditor`` for the SDK's ``ApplyPatchTool``,
and fsseam's other tools as SDK function tools, all on one observation owner.

    from agents import Agent
    from fsseam import Workspace
    from fsseam.integrations.openai_agents import fsseam_tools

    agent = Agent(name="editor", model=..., tools=fsseam_tools(Workspace("s3://b/p"), owner="a"))

``fsseam_tools`` is ``[ApplyPatchTool(editor=FsseamEditor(ctx)), *function_tools(ctx)]`` for
one ``Context``: what the agent's ``read`` (or ``grep`` in content mode) has seen is what
its patches may change. Each ``create_file`` / ``update_file`` / ``delete_file`` operation
is one change through fsseam's apply_patch engine (the V4A diff applied exactly, then one
compare-and-swap per file); a refused one changes nothing and answers ``status="failed"``
with fsseam's text, such as ``Error [FS_STALE]: ...``, which the SDK returns to the model in
the ``apply_patch_call_output``. Function tools answer with fsseam's text, errors included
(the SDK's function outputs have no error flag). Give each agent that runs at the same time
its own ``fsseam_tools`` (one owner each); the SDK runs one call's operations, and a turn's
``apply_patch`` calls, one after another.
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

__all__ = ["DEFAULT_FUNCTION_TOOLS", "FsseamEditor", "fsseam_tools", "function_tools"]

DEFAULT_FUNCTION_TOOLS = ("read", "write", "edit", "multi_edit", "ls", "glob", "grep",
                          "delete", "move")
"""The tools ``function_tools`` gives by default: fsseam's file tools, without
``apply_patch`` (the native ``ApplyPatchTool`` is its form here) and without the Anthropic
shapes ``str_replace_editor`` and ``memory`` (ask for them by name)."""


class FsseamEditor:
    """The ``ApplyPatchEditor`` the SDK's ``ApplyPatchTool`` calls, on one fsseam context.

    ``source``: a ``Workspace`` (a context of ``owner`` is made on it), a ``Context`` (share
    it with :func:`function_tools`), or a URL (with ``storage_options``). The methods are
    coroutines: the storage calls run in a worker thread, off the event loop.
    """

    def __init__(
        self,
        source: Workspace | Context | str,
        *,
        owner: str = "agent",
        storage_options: dict[str, Any] | None = None,
    ) -> None:
        self.context: Context = context_of(source, owner, storage_options)

    def __repr__(self) -> str:
        return f"FsseamEditor({self.context.workspace.url!r}, owner={self.context.owner!r})"

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
        fs = self.context.fs
        result = perform(_PATCH, lambda: fs.change([_change(operation)]), operation.path)
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


def _function_tool(context: Context, name: str) -> FunctionTool:
    tool = context.tools.get(name)
    registry = context.tools

    async def invoke(_ctx: ToolContext[Any], arguments: str) -> str:
        result = await asyncio.to_thread(registry.execute, name, arguments or "{}")
        return result.text

    return FunctionTool(
        name=name,
        description=tool.description,
        params_json_schema=tool.parameters(),
        on_invoke_tool=invoke,
        strict_json_schema=False,
    )


def function_tools(
    source: Context | FsseamEditor, names: Iterable[str] | None = None
) -> list[FunctionTool]:
    """fsseam's tools of one context as SDK function tools, with their own schemas and
    descriptions (``names``: which, default :data:`DEFAULT_FUNCTION_TOOLS`; on a read-only
    workspace only those that modify nothing). Pass the editor (or its context) so reads
    and patches share one observation owner. An unknown name raises ``UnknownToolError``."""
    context = source.context if isinstance(source, FsseamEditor) else source
    chosen = DEFAULT_FUNCTION_TOOLS if names is None else tuple(names)
    return [_function_tool(context, n) for n in context.tools.offered(chosen)]


def fsseam_tools(
    source: Workspace | Context | str,
    *,
    owner: str = "agent",
    storage_options: dict[str, Any] | None = None,
    names: Iterable[str] | None = None,
) -> list[Tool]:
    """An agent's tools on one observation owner: the SDK's ``ApplyPatchTool`` with a
    :class:`FsseamEditor`, then :func:`function_tools` (``names``) on the same context. On
    a read-only workspace only the function tools that modify nothing (no ``ApplyPatchTool``,
    which can only modify)."""
    editor = FsseamEditor(source, owner=owner, storage_options=storage_options)
    tools = function_tools(editor, names)
    patch: list[Tool] = [ApplyPatchTool(editor=editor) for _ in offered(editor.context.fs,
                                                                         [_PATCH])]
    return [*patch, *tools]
